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
        let (Some(scheme), Some(host)) = (uri.scheme_str(), uri.host()) else {
            return false;
        };
        matches!(scheme, "http" | "https")
            && loopback_name(host)
            && uri.port_u16().is_none_or(|port| port == self.port)
    }
}

/// `localhost` and the loopback addresses, as a `Host` or an `Origin` names them.
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
    fn only_loopback_origins_on_its_port_and_allowed_ones_pass() {
        let front = front("127.0.0.1", &[], &["https://app.example.com"]);
        for origin in [
            "http://localhost:8931",
            "http://127.0.0.1:8931",
            "http://[::1]:8931",
            "http://localhost",
            "https://app.example.com",
            "HTTPS://APP.EXAMPLE.COM",
        ] {
            assert!(front.origin_allowed(origin), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "http://localhost:9999",
            "null",
            "file://",
            "http://localhost.evil.example:8931",
            "https://app.example.com.evil.example",
        ] {
            assert!(!front.origin_allowed(origin), "{origin}");
        }
    }
}
