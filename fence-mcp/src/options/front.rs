//! The front half: where the proxy serves its client.

#[cfg(feature = "http")]
use std::time::Duration;

/// Where the proxy serves its client.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Front {
    /// MCP over this process's stdin and stdout, as a client runs a stdio server.
    #[default]
    Stdio,
    /// The MCP endpoint over Streamable HTTP at `http://ADDR/mcp`.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    Http(HttpFront),
}

#[cfg(feature = "http")]
impl From<HttpFront> for Front {
    fn from(front: HttpFront) -> Front {
        Front::Http(front)
    }
}

/// The default of [`HttpFront::with_max_sessions`]: 64 sessions, each a server process, at once.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// The default of [`HttpFront::with_session_idle`]: 5 minutes.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(5 * 60);

/// The MCP endpoint at `http://ADDR/mcp`, safe by default: it binds loopback addresses only
/// unless [`with_network_clients`](Self::with_network_clients) allows others, and refuses a
/// `Host` or an `Origin` that is not its own, against DNS rebinding.
///
/// ```
/// use fence_mcp::{HttpFront, Options, RemoteServer};
///
/// let front = HttpFront::new("127.0.0.1:8931").with_allowed_origin("https://app.example.com");
/// let options = Options::new(RemoteServer::new("https://example.com/mcp")).with_front(front);
/// assert!(matches!(options.front(), fence_mcp::Front::Http(front) if front.addr() == "127.0.0.1:8931"));
/// ```
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
#[derive(Debug, Clone)]
pub struct HttpFront {
    addr: String,
    network_clients: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_sessions: usize,
    session_idle: Duration,
}

#[cfg(feature = "http")]
impl HttpFront {
    /// Serves at `addr`, `HOST:PORT` (port 0 picks a free one, which stderr names); a host that
    /// is not a loopback address is refused unless
    /// [`with_network_clients`](Self::with_network_clients) allows it.
    #[must_use]
    pub fn new(addr: impl Into<String>) -> HttpFront {
        HttpFront {
            addr: addr.into(),
            network_clients: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: DEFAULT_SESSION_IDLE,
        }
    }

    /// Lets the front bind an address other machines can reach. The proxy has no
    /// authentication of its own: anyone who can reach the address uses the upstream, with the
    /// credentials of [`RemoteServer::with_header`](crate::RemoteServer::with_header). Off by
    /// default.
    #[must_use]
    pub fn with_network_clients(mut self, allowed: bool) -> HttpFront {
        self.network_clients = allowed;
        self
    }

    /// A `Host` the front accepts besides its loopback names (`localhost`, `127.0.0.1`,
    /// `[::1]`): the name clients reach it by behind a reverse proxy or on a network. A
    /// request naming any other host is refused (403), against DNS rebinding.
    #[must_use]
    pub fn with_allowed_host(mut self, host: impl Into<String>) -> HttpFront {
        self.allowed_hosts.push(host.into());
        self
    }

    /// An `Origin` the front accepts besides loopback ones (`http://localhost:PORT`…), such
    /// as a web client's `https://app.example.com`. A request from any other origin is refused
    /// (403); one with no `Origin` (not from a browser) is accepted.
    #[must_use]
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> HttpFront {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Behind the front, a server the proxy runs ([`ChildServer`](crate::ChildServer)): how
    /// many sessions, each a process of the server's, run at once (at least 1;
    /// [`DEFAULT_MAX_SESSIONS`] unless set). Past them, an `initialize` is refused with 503 and
    /// `Retry-After` until one ends. The stateless 2026-07-28 requests of every client share
    /// one more process. (A server at a URL keeps its own sessions.)
    ///
    /// ```
    /// let front = fence_mcp::HttpFront::new("127.0.0.1:8931").with_max_sessions(8);
    /// assert_eq!(front.max_sessions(), 8);
    /// assert_eq!(fence_mcp::HttpFront::new("127.0.0.1:0").max_sessions(), fence_mcp::DEFAULT_MAX_SESSIONS);
    /// ```
    #[must_use]
    pub fn with_max_sessions(mut self, sessions: usize) -> HttpFront {
        self.max_sessions = sessions.max(1);
        self
    }

    /// Behind the front, a server the proxy runs: how long a session may go with no request
    /// naming it and no client waiting on any of its responses (its GET stream, an answer)
    /// before the proxy ends it and its process ([`DEFAULT_SESSION_IDLE`] unless set; at least
    /// a second). A request naming it then gets 404, and its client initializes a new session.
    /// Clients that never end their sessions (a DELETE) leave no process behind for longer.
    ///
    /// ```
    /// use std::time::Duration;
    /// let front = fence_mcp::HttpFront::new("127.0.0.1:8931").with_session_idle(Duration::from_secs(30));
    /// assert_eq!(front.session_idle(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub fn with_session_idle(mut self, idle: Duration) -> HttpFront {
        self.session_idle = idle.max(Duration::from_secs(1));
        self
    }

    /// How many sessions, each a server process, run at once.
    #[must_use]
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// How long a session may idle before the proxy ends it.
    #[must_use]
    pub fn session_idle(&self) -> Duration {
        self.session_idle
    }

    /// The address the front serves on.
    #[must_use]
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Whether a non-loopback address is allowed.
    #[must_use]
    pub fn network_clients(&self) -> bool {
        self.network_clients
    }

    /// The hosts [`with_allowed_host`](Self::with_allowed_host) added.
    #[must_use]
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The origins [`with_allowed_origin`](Self::with_allowed_origin) added.
    #[must_use]
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }
}
