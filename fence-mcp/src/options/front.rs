//! The front half: where the proxy serves its client.

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
