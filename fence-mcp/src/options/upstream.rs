//! The upstream half: the server the proxy fences.

use std::ffi::{OsStr, OsString};

/// The MCP server behind the proxy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Upstream {
    /// A stdio server the proxy runs as its child (one per session behind an HTTP front).
    Child(ChildServer),
    /// A Streamable HTTP server at a URL.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    Remote(RemoteServer),
}

impl From<ChildServer> for Upstream {
    fn from(server: ChildServer) -> Upstream {
        Upstream::Child(server)
    }
}

#[cfg(feature = "http")]
impl From<RemoteServer> for Upstream {
    fn from(server: RemoteServer) -> Upstream {
        Upstream::Remote(server)
    }
}

/// A stdio MCP server the proxy runs: its command, its arguments, and how what it leaves
/// behind is ended.
///
/// ```
/// let server = fence_mcp::ChildServer::new("node").with_args(["server.js", "--stdio"]);
/// assert_eq!(server.command(), "node");
/// assert_eq!(server.args(), ["server.js", "--stdio"]);
/// assert!(!server.subreaper());
/// ```
#[derive(Debug, Clone)]
pub struct ChildServer {
    command: OsString,
    args: Vec<OsString>,
    subreaper: bool,
}

impl ChildServer {
    /// Runs `command` (looked up on `PATH` as a shell would), with no arguments.
    #[must_use]
    pub fn new(command: impl Into<OsString>) -> ChildServer {
        ChildServer {
            command: command.into(),
            args: Vec::new(),
            subreaper: false,
        }
    }

    /// The server's arguments.
    ///
    /// ```
    /// let server = fence_mcp::ChildServer::new("uvx").with_args(["mcp-server-fetch"]);
    /// assert_eq!(server.args(), ["mcp-server-fetch"]);
    /// ```
    #[must_use]
    pub fn with_args<I, A>(mut self, args: I) -> ChildServer
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the proxy also ends what the server started outside its process group: off by
    /// default, on in `fence mcp`. Linux only; elsewhere it does nothing.
    ///
    /// Without it, the proxy ends the server's process group, and a process that left that
    /// group (`setsid`, a daemon's double fork) can outlive the proxy. With it, the calling
    /// process is a child subreaper while [`run`](crate::run) runs
    /// (`prctl(PR_SET_CHILD_SUBREAPER)`; it is restored before `run` returns), so such a process
    /// is re-parented to it, not to init, when its parent exits; and then:
    ///
    /// - while the proxy runs, it reaps **every child of the calling process** that exits,
    ///   other than the servers it started;
    /// - once the server has ended (behind an HTTP front: once the proxy stops), it kills
    ///   (SIGKILL) and reaps **every child the calling process has**, and the children those
    ///   leave it, until none is left (or one more grace period has passed, which stderr
    ///   reports).
    ///
    /// So nothing the server started outlives the proxy; but every other child of the calling
    /// process is taken for the server's too. Turn it on only when the proxy is all the process
    /// runs, or nothing else in it starts processes: another child would have its exit status
    /// taken (its own `wait` then fails) and be killed when the proxy ends.
    ///
    /// ```
    /// let server = fence_mcp::ChildServer::new("npx").with_subreaper(true);
    /// assert!(server.subreaper());
    /// ```
    #[must_use]
    pub fn with_subreaper(mut self, subreaper: bool) -> ChildServer {
        self.subreaper = subreaper;
        self
    }

    /// The server's command.
    ///
    /// ```
    /// assert_eq!(fence_mcp::ChildServer::new("npx").command(), "npx");
    /// ```
    #[must_use]
    pub fn command(&self) -> &OsStr {
        &self.command
    }

    /// The server's arguments.
    ///
    /// ```
    /// assert!(fence_mcp::ChildServer::new("npx").args().is_empty());
    /// ```
    #[must_use]
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// Whether the proxy ends what the server started outside its process group, as
    /// [`with_subreaper`](Self::with_subreaper) says.
    ///
    /// ```
    /// assert!(!fence_mcp::ChildServer::new("npx").subreaper());
    /// ```
    #[must_use]
    pub fn subreaper(&self) -> bool {
        self.subreaper
    }
}

/// An MCP server at a URL, reached over Streamable HTTP.
///
/// ```
/// let server = fence_mcp::RemoteServer::new("https://api.example.com/mcp")
///     .with_header("Authorization", "Bearer secret");
/// assert_eq!(server.url(), "https://api.example.com/mcp");
/// assert_eq!(server.headers().len(), 1);
/// ```
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
#[derive(Debug, Clone)]
pub struct RemoteServer {
    url: String,
    headers: Vec<(String, String)>,
}

#[cfg(feature = "http")]
impl RemoteServer {
    /// The server at `url` (`http` or `https`; [`run`](crate::run) refuses anything else).
    #[must_use]
    pub fn new(url: impl Into<String>) -> RemoteServer {
        RemoteServer {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// Sends the header `name: value` on every HTTP request to the server (a static token, an
    /// API key); may be given several times. A header the client sends with the same name is
    /// replaced by it.
    #[must_use]
    pub fn with_header(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> RemoteServer {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The server's URL.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers sent on every request, in the order given.
    #[must_use]
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
}
