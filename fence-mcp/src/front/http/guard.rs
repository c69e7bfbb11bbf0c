//! Who may call the HTTP front: a `Host` that names it and an `Origin` that is its own, against
//! DNS rebinding, which the MCP specification asks every server to guard against.

use std::net::{IpAddr, SocketAddr};

use http::Request;

use crate::options::HttpFront;

/// Who may call the front.
pub(crate) struct Guard {
    /// The port it listens on, which an `Origin` of its own names.
    port: u16,
    /// The address it is bound to, a name clients may reach it by.
    bound: IpAddr,
    hosts: Vec<String>,
    origins: Vec<String>,
}

impl Guard {
    /// The guard of `front`, bound to `local`.
    pub(crate) fn new(front: &HttpFront, local: SocketAddr) -> Guard {
        Guard {
            port: local.port(),
            bound: local.ip(),
            hosts: front.allowed_hosts().to_vec(),
            origins: front.allowed_origins().to_vec(),
        }
    }

    /// Why a request may not be served: its `Host` or its `Origin` is not the front's.
    pub(crate) fn refuses<B>(&self, request: &Request<B>) -> Option<String> {
        let host = request
            .headers()
            .get(http::header::HOST)
            .and_then(|host| host.to_str().ok())
            .or_else(|| request.uri().authority().map(http::uri::Authority::as_str));
        let Some(host) = host else {
            return Some("a request with no Host header".to_owned());
        };
        if !self.host_allowed(host) {
            return Some(format!(
                "Host {:?} is not this endpoint's (allowed: localhost, 127.0.0.1, [::1]{}); \
                 pass --allow-host NAME for a name clients reach it by",
                crate::said::shown(host),
                self.hosts.iter().fold(String::new(), |mut list, host| {
                    list.push_str(", ");
                    list.push_str(host);
                    list
                })
            ));
        }
        let origin = request.headers().get(http::header::ORIGIN)?;
        let origin = origin.to_str().unwrap_or("");
        if self.origin_allowed(origin) {
            return None;
        }
        Some(format!(
            "Origin {:?} is not allowed (a web page may not call this endpoint); pass \
             --allow-origin ORIGIN for a web client's origin",
            crate::said::shown(origin)
        ))
    }

    fn host_allowed(&self, host: &str) -> bool {
        let bare = match host.rsplit_once(':') {
            Some((bare, port)) if !bare.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
                if !port.is_empty() && port.parse::<u16>() != Ok(self.port) {
                    return self
                        .hosts
                        .iter()
                        .any(|allowed| allowed.eq_ignore_ascii_case(host));
                }
                bare
            }
            _ => host,
        };
        if loopback_name(bare) {
            return true;
        }
        let literal = bare.trim_start_matches('[').trim_end_matches(']');
        if !self.bound.is_unspecified() && literal.parse::<IpAddr>() == Ok(self.bound) {
            return true;
        }
        self.hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(bare) || allowed.eq_ignore_ascii_case(host))
    }

    /// Whether a request from `origin` may be served: one `--allow-origin` names, or the
    /// front's own — `http:`, a name of an address the front listens on
    /// ([`listens_on`](Self::listens_on)), and exactly its port. A page served on the same
    /// machine from another address or port (`http://127.0.0.2:PORT`, `http://localhost`) or
    /// over `https:` is another origin: another server may be serving it.
    fn origin_allowed(&self, origin: &str) -> bool {
        if self
            .origins
            .iter()
            .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
        {
            return true;
        }
        let Ok(uri) = origin.parse::<http::Uri>() else {
            return false;
        };
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return false;
        };
        // An origin is a scheme, a host and a port: no user, no path.
        let bare = uri.path_and_query().is_none_or(|path| path.as_str() == "/");
        bare && !authority.as_str().contains('@')
            && scheme.eq_ignore_ascii_case("http")
            && authority.port_u16().unwrap_or(80) == self.port
            && (self.listens_on(authority.host())
                || self
                    .hosts
                    .iter()
                    .any(|allowed| allowed.eq_ignore_ascii_case(authority.as_str())))
    }

    /// Whether `host` (a name or an address, an IPv6 one in brackets, no port) names an address
    /// the front listens on: the address it is bound to, a name `--allow-host` gives,
    /// `localhost` when it listens on loopback, and any loopback address when it listens on
    /// every address.
    fn listens_on(&self, host: &str) -> bool {
        if self
            .hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(host))
        {
            return true;
        }
        if host.eq_ignore_ascii_case("localhost") {
            return self.bound.is_loopback() || self.bound.is_unspecified();
        }
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        literal.parse::<IpAddr>().is_ok_and(|ip| {
            if self.bound.is_unspecified() {
                ip.is_loopback()
            } else {
                ip == self.bound
            }
        })
    }
}

/// `localhost` and the loopback addresses, as a `Host` names them.
fn loopback_name(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    literal.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(bound: &str, hosts: &[&str], origins: &[&str]) -> Guard {
        Guard {
            port: 8931,
            bound: bound.parse().expect("an address"),
            hosts: hosts.iter().map(|&host| host.to_owned()).collect(),
            origins: origins.iter().map(|&origin| origin.to_owned()).collect(),
        }
    }

    #[test]
    fn loopback_names_with_its_own_port_or_none_are_its_hosts() {
        let front = front("127.0.0.1", &[], &[]);
        for host in [
            "localhost:8931",
            "127.0.0.1:8931",
            "[::1]:8931",
            "LOCALHOST",
            "127.0.0.1",
            // With no port: its last colon starts no port.
            "[::1]",
        ] {
            assert!(front.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example:8931",
            "evil.example",
            "localhost:8932",
            "127.0.0.1.evil.example",
            "localhost.evil.example:8931",
            "",
        ] {
            assert!(!front.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn an_allowed_host_and_the_bound_address_are_hosts_too() {
        let lan = front("192.168.1.5", &["mcp.internal"], &[]);
        assert!(lan.host_allowed("mcp.internal:8931"));
        assert!(lan.host_allowed("mcp.internal"));
        assert!(lan.host_allowed("192.168.1.5:8931"));
        assert!(!lan.host_allowed("192.168.1.6:8931"));
        let any = front("0.0.0.0", &[], &[]);
        assert!(!any.host_allowed("0.0.0.0:8931"));
    }

    #[test]
    fn only_its_own_origins_and_allowed_ones_pass() {
        let front = front("127.0.0.1", &["mcp.internal"], &["https://app.example.com"]);
        for origin in [
            "http://localhost:8931",
            "HTTP://LOCALHOST:8931",
            "http://127.0.0.1:8931",
            "http://127.0.0.1:8931/",
            "http://mcp.internal:8931",
            "https://app.example.com",
            "HTTPS://APP.EXAMPLE.COM",
        ] {
            assert!(front.origin_allowed(origin), "{origin}");
        }
        for origin in [
            // Another port, or the scheme's own (80, 443).
            "http://localhost",
            "https://localhost",
            "https://localhost:8931",
            "http://localhost:80",
            "http://localhost:9999",
            "http://localhost:8931x",
            // Another loopback address: another server may listen there.
            "http://127.0.0.2:8931",
            "http://[::1]:8931",
            "http://[::ffff:127.0.0.1]:8931",
            // Not an origin.
            "http://localhost:8931/mcp",
            "http://user@localhost:8931",
            "null",
            "file://",
            "",
            "http://evil.example",
            "http://localhost.evil.example:8931",
            "https://app.example.com.evil.example",
        ] {
            assert!(!front.origin_allowed(origin), "{origin}");
        }
    }

    #[test]
    fn its_own_origins_follow_the_address_it_listens_on() {
        let six = front("::1", &[], &[]);
        assert!(six.origin_allowed("http://[::1]:8931"));
        assert!(six.origin_allowed("http://localhost:8931"));
        assert!(!six.origin_allowed("http://127.0.0.1:8931"));
        let lan = front("192.168.1.5", &[], &[]);
        assert!(lan.origin_allowed("http://192.168.1.5:8931"));
        assert!(!lan.origin_allowed("http://localhost:8931"));
        assert!(!lan.origin_allowed("http://127.0.0.1:8931"));
        let any = front("0.0.0.0", &[], &[]);
        assert!(any.origin_allowed("http://localhost:8931"));
        assert!(any.origin_allowed("http://127.0.0.2:8931"));
        assert!(!any.origin_allowed("http://0.0.0.0:8931"));
        assert!(!any.origin_allowed("http://localhost:8932"));
    }
}
