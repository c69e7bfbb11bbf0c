//! What the proxy runs, and its limits: an [`Upstream`] joined to a [`Front`], and the
//! [`Options`] every shape shares. Each option belongs to the half it means something to, so
//! a combination that means nothing (a server's arguments for a URL, a `Host` allowed on
//! stdio) cannot be written.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod front;
mod upstream;

pub use front::Front;
#[cfg(feature = "http")]
pub use front::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, HttpFront};
#[cfg(feature = "http")]
pub use upstream::RemoteServer;
pub use upstream::{ChildServer, Upstream};

/// The default of [`Options::with_max_message_bytes`]: 64 MiB.
///
/// A message is held whole while it is fenced, so this bounds the proxy's memory (about three
/// times the largest message). It is four times rmcp's own default line limit, and room for a
/// tool result carrying a large image.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// The default of [`Options::with_grace`]: 2 seconds, as long as the MCP SDKs give a server to
/// exit after closing its input.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// What the proxy does with a tool result's `structuredContent`, which it cannot fence: it is
/// JSON a client may validate against the tool's `outputSchema`, not text.
///
/// ```
/// use fence_mcp::{ChildServer, Options, StructuredContent};
///
/// let options = Options::new(ChildServer::new("npx"));
/// assert_eq!(options.structured_content(), StructuredContent::Neutralise);
/// let options = options.with_structured_content(StructuredContent::Remove);
/// assert_eq!(options.structured_content(), StructuredContent::Remove);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StructuredContent {
    /// Keep it, with every string in it (keys too) neutralised, so it still satisfies the
    /// tool's `outputSchema`. No forged marker in it is live, but nothing labels it as a tool's
    /// output: a client that hands it to its model hands it over unlabelled.
    #[default]
    Neutralise,
    /// Remove it from every result, and remove `outputSchema` from every tool in `tools/list`,
    /// so a client that follows the MCP specification no longer expects it and reads the
    /// result's `content`, which is fenced. (A client that checks a result against a schema
    /// it cached before the proxy started may refuse it.)
    Remove,
}

/// What the proxy does when what a server lists differs from its pin file (see
/// [`Options::with_pin`]).
///
/// ```
/// use fence_mcp::{ChildServer, Options, PinMode};
///
/// let options = Options::new(ChildServer::new("npx")).with_pin("pins/filesystem.json", PinMode::Report);
/// assert_eq!(options.pin().map(|(_, mode)| mode), Some(PinMode::Report));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PinMode {
    /// A tool or prompt that is new, or whose pinned definition changed, is left out of the
    /// list the client receives, and a call to it is answered by the proxy with an error,
    /// never forwarded; changed `instructions` are withheld. Each drift is reported on stderr.
    #[default]
    Enforce,
    /// Everything is forwarded; each drift is reported on stderr.
    Report,
}

/// What [`run`](crate::run) proxies, and its limits: an upstream (a server the proxy runs, or
/// one at a URL) joined to a front (stdio, or an HTTP endpoint), and what goes for every shape.
///
/// ```
/// use std::time::Duration;
/// use fence_mcp::{ChildServer, Front, Options};
///
/// let server = ChildServer::new("npx").with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
/// let options = Options::new(server)
///     .with_name("filesystem")
///     .with_grace(Duration::from_millis(500));
/// assert!(matches!(options.front(), Front::Stdio));
/// assert_eq!(options.name(), Some("filesystem"));
/// assert_eq!(options.max_message_bytes(), fence_mcp::DEFAULT_MAX_MESSAGE_BYTES);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    upstream: Upstream,
    front: Front,
    name: Option<String>,
    max_message_bytes: usize,
    grace: Duration,
    structured_content: StructuredContent,
    pin: Option<(PathBuf, PinMode)>,
    pin_update: bool,
}

impl Options {
    /// Proxies `upstream` ([`ChildServer`] or, with the `http` feature, [`RemoteServer`]) to a
    /// client on this process's stdin and stdout, with the defaults.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, Upstream};
    ///
    /// let options = Options::new(ChildServer::new("uvx").with_args(["mcp-server-fetch"]));
    /// assert!(matches!(options.upstream(), Upstream::Child(server) if server.args() == ["mcp-server-fetch"]));
    /// ```
    #[must_use]
    pub fn new(upstream: impl Into<Upstream>) -> Options {
        Options {
            upstream: upstream.into(),
            front: Front::Stdio,
            name: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            grace: DEFAULT_GRACE,
            structured_content: StructuredContent::Neutralise,
            pin: None,
            pin_update: false,
        }
    }

    /// Serves the client on `front` rather than on stdin and stdout: with the `http` feature,
    /// an [`HttpFront`].
    #[must_use]
    pub fn with_front(mut self, front: impl Into<Front>) -> Options {
        self.front = front.into();
        self
    }

    /// The server the proxy fences.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, Upstream};
    /// let options = Options::new(ChildServer::new("npx"));
    /// assert!(matches!(options.upstream(), Upstream::Child(server) if server.command() == "npx"));
    /// ```
    #[must_use]
    pub fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// Where the proxy serves its client: stdio unless [`with_front`](Self::with_front) says
    /// otherwise.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Front, Options};
    /// assert!(matches!(Options::new(ChildServer::new("npx")).front(), Front::Stdio));
    /// ```
    #[must_use]
    pub fn front(&self) -> &Front {
        &self.front
    }

    /// What the proxy calls the upstream on stderr and in the errors it sends the client, and
    /// the source (`mcp:<name>`) of a task's result whose tool it did not see start. Without
    /// it: the name the server gives in its `initialize` answer, and until then the command's
    /// file name (a URL's host). It never changes the source of a tool's result, which is
    /// always `tool:<the tool's name>`.
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx")).with_name("filesystem");
    /// assert_eq!(options.name(), Some("filesystem"));
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Options {
        self.name = Some(name.into());
        self
    }

    /// The name given with [`with_name`](Self::with_name).
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx"));
    /// assert_eq!(options.name(), None);
    /// ```
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The largest message, in bytes (a JSON line without the newline, an HTTP body, an event),
    /// the proxy takes from either side. A longer one is read through without being kept,
    /// reported on stderr, and answered with a JSON-RPC error when a request waits on it; the
    /// session goes on.
    ///
    /// ```
    /// let server = fence_mcp::ChildServer::new("server");
    /// let options = fence_mcp::Options::new(server).with_max_message_bytes(16 << 20);
    /// assert_eq!(options.max_message_bytes(), 16 << 20);
    /// ```
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Options {
        self.max_message_bytes = bytes;
        self
    }

    /// The size limit of a message, in bytes.
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx"));
    /// assert_eq!(options.max_message_bytes(), 64 << 20);
    /// assert_eq!(options.max_message_bytes(), fence_mcp::DEFAULT_MAX_MESSAGE_BYTES);
    /// ```
    #[must_use]
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// How long a side has to finish once the other has gone: a server the proxy runs, to exit
    /// once its input is closed, and again after SIGTERM, before the proxy ends it (SIGTERM,
    /// then SIGKILL, to its whole process group on Unix); the answers in flight from a server
    /// at a URL, once the stdio client has closed its input.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = fence_mcp::ChildServer::new("server");
    /// let options = fence_mcp::Options::new(server).with_grace(Duration::from_secs(5));
    /// assert_eq!(options.grace(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Options {
        self.grace = grace;
        self
    }

    /// How long a side has to finish once the other has gone ([`DEFAULT_GRACE`] unless set).
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx"));
    /// assert_eq!(options.grace(), fence_mcp::DEFAULT_GRACE);
    /// ```
    #[must_use]
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// What the proxy does with `structuredContent` (see [`StructuredContent`]): neutralise it
    /// (the default), or remove it with the tools' `outputSchema`.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, StructuredContent};
    /// let options = Options::new(ChildServer::new("server"))
    ///     .with_structured_content(StructuredContent::Remove);
    /// assert_eq!(options.structured_content(), StructuredContent::Remove);
    /// ```
    #[must_use]
    pub fn with_structured_content(mut self, structured_content: StructuredContent) -> Options {
        self.structured_content = structured_content;
        self
    }

    /// What the proxy does with `structuredContent`.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, StructuredContent};
    /// let options = Options::new(ChildServer::new("npx"));
    /// assert_eq!(options.structured_content(), StructuredContent::Neutralise);
    /// ```
    #[must_use]
    pub fn structured_content(&self) -> StructuredContent {
        self.structured_content
    }

    /// Pins the server's definitions in the file at `path`: its tools (name, title,
    /// description, input and output schemas, annotations), its prompts (name, title,
    /// description, arguments) and its instructions (of `initialize` and `server/discover`
    /// alike). When the file does not exist, what the server says is recorded into it (trust
    /// on first use) and forwarded; after that, every list page and `initialize` or
    /// `server/discover` answer is compared with it by meaning (key order,
    /// whitespace and number spellings do not count), and `mode` says what a difference does.
    /// A file that cannot be read makes [`run`](crate::run) fail at start.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, PinMode};
    /// let options = Options::new(ChildServer::new("npx")).with_pin("pin.json", PinMode::Enforce);
    /// assert_eq!(
    ///     options.pin(),
    ///     Some((std::path::Path::new("pin.json"), PinMode::Enforce))
    /// );
    /// ```
    #[must_use]
    pub fn with_pin(mut self, path: impl Into<PathBuf>, mode: PinMode) -> Options {
        self.pin = Some((path.into(), mode));
        self
    }

    /// The pin file and what a difference from it does, as given with
    /// [`with_pin`](Self::with_pin).
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx"));
    /// assert_eq!(options.pin(), None);
    /// ```
    #[must_use]
    pub fn pin(&self) -> Option<(&Path, PinMode)> {
        self.pin
            .as_ref()
            .map(|(path, mode)| (path.as_path(), *mode))
    }

    /// Records what the server says now into the pin file (see [`with_pin`](Self::with_pin)),
    /// forwarding everything, and reports on stderr what it changed in the file: the way to
    /// approve a change. Without a pin file it does nothing.
    ///
    /// ```
    /// use fence_mcp::{ChildServer, Options, PinMode};
    /// let options = Options::new(ChildServer::new("npx"))
    ///     .with_pin("pin.json", PinMode::Enforce)
    ///     .with_pin_update(true);
    /// assert!(options.pin_update());
    /// ```
    #[must_use]
    pub fn with_pin_update(mut self, update: bool) -> Options {
        self.pin_update = update;
        self
    }

    /// Whether the pin file is updated with what the server says now.
    ///
    /// ```
    /// let options = fence_mcp::Options::new(fence_mcp::ChildServer::new("npx"));
    /// assert!(!options.pin_update());
    /// ```
    #[must_use]
    pub fn pin_update(&self) -> bool {
        self.pin_update
    }
}
