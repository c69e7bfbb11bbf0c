//! What the proxy runs, and its limits.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
/// use fence_mcp::{Options, StructuredContent};
///
/// let options = Options::new("npx").with_structured_content(StructuredContent::Remove);
/// assert_eq!(options.structured_content(), StructuredContent::Remove);
/// assert_eq!(Options::new("npx").structured_content(), StructuredContent::Neutralise);
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
/// use fence_mcp::{Options, PinMode};
///
/// let options = Options::new("npx").with_pin("pins/filesystem.json", PinMode::Report);
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

/// What [`run`](crate::run) proxies, and its limits.
///
/// ```
/// use std::time::Duration;
/// use fence_mcp::Options;
///
/// let options = Options::new("npx")
///     .with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .with_name("filesystem")
///     .with_grace(Duration::from_millis(500));
/// assert_eq!(options.command(), "npx");
/// assert_eq!(options.args().len(), 3);
/// assert_eq!(options.name(), Some("filesystem"));
/// assert_eq!(options.max_message_bytes(), fence_mcp::DEFAULT_MAX_MESSAGE_BYTES);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    command: OsString,
    args: Vec<OsString>,
    name: Option<String>,
    max_message_bytes: usize,
    grace: Duration,
    structured_content: StructuredContent,
    subreaper: bool,
    pin: Option<(PathBuf, PinMode)>,
    pin_update: bool,
    url: Option<String>,
    headers: Vec<(String, String)>,
    listen: Option<String>,
    network_clients: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
}

impl Options {
    /// Runs `command` (looked up on `PATH` as a shell would) as the upstream MCP server, with
    /// no arguments and the defaults.
    ///
    /// ```
    /// let options = fence_mcp::Options::new("uvx").with_args(["mcp-server-fetch"]);
    /// assert_eq!(options.args(), ["mcp-server-fetch"]);
    /// ```
    #[must_use]
    pub fn new(command: impl Into<OsString>) -> Options {
        Options {
            command: command.into(),
            args: Vec::new(),
            name: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            grace: DEFAULT_GRACE,
            structured_content: StructuredContent::Neutralise,
            subreaper: false,
            pin: None,
            pin_update: false,
            url: None,
            headers: Vec::new(),
            listen: None,
            network_clients: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }

    /// The options to proxy the MCP server at `url` over Streamable HTTP, rather than one run
    /// as a child over stdio. [`Options::command`] is then empty.
    ///
    /// ```
    /// let options = fence_mcp::Options::remote("https://api.example.com/mcp")
    ///     .with_header("Authorization", "Bearer secret");
    /// assert_eq!(options.url(), Some("https://api.example.com/mcp"));
    /// assert!(options.command().is_empty());
    /// ```
    #[must_use]
    pub fn remote(url: impl Into<String>) -> Options {
        Options {
            url: Some(url.into()),
            ..Options::new("")
        }
    }

    /// The upstream's URL, for a server reached over Streamable HTTP.
    #[must_use]
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Sends the header `name: value` on every HTTP request to the upstream (a static token,
    /// an API key); may be given several times. A header the client sends with the same name
    /// is replaced by it.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Options {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The headers sent upstream on every HTTP request, in the order given.
    #[must_use]
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Serves the MCP endpoint over Streamable HTTP at `http://ADDR/mcp` rather than on stdin
    /// and stdout. `addr` is `HOST:PORT` (port 0 picks a free one, which stderr names); a
    /// host that is not a loopback address is refused unless
    /// [`Options::with_network_clients`] allows it.
    #[must_use]
    pub fn with_listen(mut self, addr: impl Into<String>) -> Options {
        self.listen = Some(addr.into());
        self
    }

    /// The address [`Options::with_listen`] serves on, if any.
    #[must_use]
    pub fn listen(&self) -> Option<&str> {
        self.listen.as_deref()
    }

    /// Lets [`Options::with_listen`] bind an address other machines can reach. The proxy has
    /// no authentication of its own: anyone who can reach the address uses the upstream, with
    /// the credentials of [`Options::with_header`]. Off by default.
    #[must_use]
    pub fn with_network_clients(mut self, allowed: bool) -> Options {
        self.network_clients = allowed;
        self
    }

    /// Whether [`Options::with_network_clients`] allows a non-loopback address.
    #[must_use]
    pub fn network_clients(&self) -> bool {
        self.network_clients
    }

    /// A `Host` the HTTP front accepts besides its loopback names (`localhost`, `127.0.0.1`,
    /// `[::1]`): the name clients reach it by behind a reverse proxy or on a network. A
    /// request naming any other host is refused (403), against DNS rebinding.
    #[must_use]
    pub fn with_allowed_host(mut self, host: impl Into<String>) -> Options {
        self.allowed_hosts.push(host.into());
        self
    }

    /// The hosts [`Options::with_allowed_host`] added.
    #[must_use]
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// An `Origin` the HTTP front accepts besides loopback ones (`http://localhost:PORT`…),
    /// such as a web client's `https://app.example.com`. A request from any other origin is
    /// refused (403); one with no `Origin` (not from a browser) is accepted.
    #[must_use]
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> Options {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The origins [`Options::with_allowed_origin`] added.
    #[must_use]
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// The upstream's arguments.
    ///
    /// ```
    /// let options = fence_mcp::Options::new("node").with_args(["server.js", "--stdio"]);
    /// assert_eq!(options.args(), ["server.js", "--stdio"]);
    /// ```
    #[must_use]
    pub fn with_args<I, A>(mut self, args: I) -> Options
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// What the proxy calls the upstream on stderr and in the errors it sends the client, and
    /// the source (`mcp:<name>`) of a task's result whose tool it did not see start. Without
    /// it: the name the server gives in its `initialize` answer, and until then the command's
    /// file name. It never changes the source of a tool's result, which is always
    /// `tool:<the tool's name>`.
    ///
    /// ```
    /// let options = fence_mcp::Options::new("npx").with_name("filesystem");
    /// assert_eq!(options.name(), Some("filesystem"));
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Options {
        self.name = Some(name.into());
        self
    }

    /// The largest message, in bytes (its JSON line without the newline), the proxy takes from
    /// either side. A longer one is read through without being kept, reported on stderr, and
    /// answered with a JSON-RPC error when a request waits on it; the session goes on.
    ///
    /// ```
    /// let options = fence_mcp::Options::new("server").with_max_message_bytes(16 << 20);
    /// assert_eq!(options.max_message_bytes(), 16 << 20);
    /// ```
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Options {
        self.max_message_bytes = bytes;
        self
    }

    /// How long the upstream has to exit once its input is closed, and again after SIGTERM,
    /// before the proxy ends it (SIGTERM, then SIGKILL, to its whole process group on Unix).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = fence_mcp::Options::new("server").with_grace(Duration::from_secs(5));
    /// assert_eq!(options.grace(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Options {
        self.grace = grace;
        self
    }

    /// What the proxy does with `structuredContent` (see [`StructuredContent`]): neutralise it
    /// (the default), or remove it with the tools' `outputSchema`.
    ///
    /// ```
    /// use fence_mcp::{Options, StructuredContent};
    /// let options = Options::new("server").with_structured_content(StructuredContent::Remove);
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
    /// use fence_mcp::{Options, StructuredContent};
    /// assert_eq!(Options::new("npx").structured_content(), StructuredContent::Neutralise);
    /// ```
    #[must_use]
    pub fn structured_content(&self) -> StructuredContent {
        self.structured_content
    }

    /// Whether the proxy also ends what the upstream started outside its process group: off by
    /// default, on in `fence mcp`. Linux only; elsewhere it does nothing.
    ///
    /// Without it, the proxy ends the upstream's process group, and a process that left that
    /// group (`setsid`, a daemon's double fork) can outlive the proxy. With it, the calling
    /// process is a child subreaper while [`run`](crate::run) runs
    /// (`prctl(PR_SET_CHILD_SUBREAPER)`; it is restored before `run` returns), so such a process
    /// is re-parented to it, not to init, when its parent exits; and then:
    ///
    /// - while the session runs, the proxy reaps **every child of the calling process** that
    ///   exits, other than the upstream;
    /// - once the upstream has ended, it kills (SIGKILL) and reaps **every child the calling
    ///   process has**, and the children those leave it, until none is left (or one more grace
    ///   period has passed, which stderr reports).
    ///
    /// So nothing the upstream started outlives the proxy; but every other child of the
    /// calling process is taken for the upstream's too. Turn it on only when the proxy is all
    /// the process runs, or nothing else in it starts processes: another child would have its
    /// exit status taken (its own `wait` then fails) and be killed when the proxy ends.
    ///
    /// ```
    /// let options = fence_mcp::Options::new("npx").with_subreaper(true);
    /// assert!(options.subreaper());
    /// ```
    #[must_use]
    pub fn with_subreaper(mut self, subreaper: bool) -> Options {
        self.subreaper = subreaper;
        self
    }

    /// Pins the server's definitions in the file at `path`: its tools (name, title,
    /// description, input and output schemas, annotations), its prompts (name, title,
    /// description, arguments) and its `initialize` instructions. When the file does not exist,
    /// what the server says is recorded into it (trust on first use) and forwarded; after
    /// that, every list page and `initialize` answer is compared with it by meaning (key order,
    /// whitespace and number spellings do not count), and `mode` says what a difference does.
    /// A file that cannot be read makes [`run`](crate::run) fail at start.
    ///
    /// ```
    /// use fence_mcp::{Options, PinMode};
    /// let options = Options::new("npx").with_pin("pin.json", PinMode::Enforce);
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

    /// Records what the server says now into the pin file (see [`with_pin`](Self::with_pin)),
    /// forwarding everything, and reports on stderr what it changed in the file: the way to
    /// approve a change.
    ///
    /// ```
    /// use fence_mcp::{Options, PinMode};
    /// let options = Options::new("npx").with_pin("pin.json", PinMode::Enforce).with_pin_update(true);
    /// assert!(options.pin_update());
    /// ```
    #[must_use]
    pub fn with_pin_update(mut self, update: bool) -> Options {
        self.pin_update = update;
        self
    }

    /// The pin file and what a difference from it does, as given with
    /// [`with_pin`](Self::with_pin).
    ///
    /// ```
    /// assert_eq!(fence_mcp::Options::new("npx").pin(), None);
    /// ```
    #[must_use]
    pub fn pin(&self) -> Option<(&Path, PinMode)> {
        self.pin
            .as_ref()
            .map(|(path, mode)| (path.as_path(), *mode))
    }

    /// Whether the pin file is updated with what the server says now.
    ///
    /// ```
    /// assert!(!fence_mcp::Options::new("npx").pin_update());
    /// ```
    #[must_use]
    pub fn pin_update(&self) -> bool {
        self.pin_update
    }

    /// The upstream's command.
    ///
    /// ```
    /// assert_eq!(fence_mcp::Options::new("npx").command(), "npx");
    /// ```
    #[must_use]
    pub fn command(&self) -> &OsStr {
        &self.command
    }

    /// The upstream's arguments.
    ///
    /// ```
    /// assert!(fence_mcp::Options::new("npx").args().is_empty());
    /// ```
    #[must_use]
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The name given with [`with_name`](Self::with_name).
    ///
    /// ```
    /// assert_eq!(fence_mcp::Options::new("npx").name(), None);
    /// ```
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The size limit of a message, in bytes.
    ///
    /// ```
    /// assert_eq!(fence_mcp::Options::new("npx").max_message_bytes(), 64 << 20);
    /// ```
    #[must_use]
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Whether the proxy ends what the upstream started outside its process group, as
    /// [`with_subreaper`](Self::with_subreaper) says.
    ///
    /// ```
    /// assert!(!fence_mcp::Options::new("npx").subreaper());
    /// ```
    #[must_use]
    pub fn subreaper(&self) -> bool {
        self.subreaper
    }

    /// How long the upstream has to exit at each step of shutting it down.
    ///
    /// ```
    /// assert_eq!(fence_mcp::Options::new("npx").grace(), fence_mcp::DEFAULT_GRACE);
    /// ```
    #[must_use]
    pub fn grace(&self) -> Duration {
        self.grace
    }
}
