//! The HTTP front (`--listen ADDR`): the MCP endpoint at `http://ADDR/mcp`, served with hyper,
//! safe by default. It binds loopback addresses only unless the operator says otherwise; it
//! answers only a `Host` that names it and an `Origin` that is its own (against DNS
//! rebinding, which the MCP specification asks every server to guard against); it takes no
//! body over `--max-message-bytes`. What is behind it is a [`Backend`]: an upstream at a URL
//! ([`reverse`](super::reverse)) or a stdio server it runs ([`child`](super::child)).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::Remote;
use super::child::Children;
use super::reverse::Reverse;
use crate::options::Options;
use crate::proxy::{Engine, report};
use crate::session::{Session, Side};

/// The error of a body the front passes on as it comes from the upstream.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// The body of a response the front sends.
pub(crate) type Body = UnsyncBoxBody<Bytes, BodyError>;

/// A whole body.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A body written as it comes, each piece sent to the client as soon as it is given; it ends
/// when the sender is dropped. The sender's `send` fails once the client has gone.
pub(crate) fn streamed() -> (mpsc::Sender<Bytes>, Body) {
    streamed_after(Vec::new())
}

/// A body of `first`, then what [`streamed`]'s sender gives. The pieces of `first` are there
/// when the body is first read, so they leave with the response's head, in one write.
pub(crate) fn streamed_after(first: Vec<Bytes>) -> (mpsc::Sender<Bytes>, Body) {
    let (sender, receiver) = mpsc::channel::<Bytes>(32);
    let rest = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let piece = receiver.recv().await?;
        Some((Ok::<_, BodyError>(Frame::data(piece)), receiver))
    });
    let stream = futures_util::StreamExt::chain(pieces(first), rest);
    (sender, StreamBody::new(stream).boxed_unsync())
}

/// A body of these pieces and nothing more.
pub(crate) fn pieces_body(pieces_of: Vec<Bytes>) -> Body {
    StreamBody::new(pieces(pieces_of)).boxed_unsync()
}

fn pieces(
    pieces: Vec<Bytes>,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, BodyError>> + Send + 'static {
    futures_util::stream::iter(pieces.into_iter().map(|piece| Ok(Frame::data(piece))))
}

/// A response with a JSON body.
pub(crate) fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(super::JSON),
    );
    response
}

/// The front's refusal of a request it will not pass on: `status`, and a JSON-RPC error
/// saying why (for no request in particular).
pub(crate) fn refusal(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let mut body = Vec::with_capacity(message.len() + 64);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":null,"error":{"code":"#);
    body.extend_from_slice(code.to_string().as_bytes());
    body.extend_from_slice(br#","message":"#);
    crate::json::write_string(&mut body, &format!("fence mcp: {message}"));
    body.extend_from_slice(b"}}");
    json_response(status, body)
}

/// What answers the requests the front lets in.
pub(crate) enum Backend {
    Remote(Reverse),
    Child(Box<Children>),
}

impl Backend {
    async fn handle(&self, request: Request<Incoming>, front: &Front) -> Response<Body> {
        match self {
            Backend::Remote(reverse) => reverse.handle(request, front).await,
            Backend::Child(children) => children.handle(request, front).await,
        }
    }
}

/// Who may call the front, and its limits.
pub(crate) struct Front {
    /// The port it listens on, which an `Origin` of its own names.
    port: u16,
    /// The address it is bound to, a name clients may reach it by.
    bound: IpAddr,
    hosts: Vec<String>,
    origins: Vec<String>,
    pub(crate) limit: usize,
    /// The session used for the front's own words on stderr.
    pub(crate) voice: Session,
}

impl Front {
    /// Why a request may not be served: its `Host` or its `Origin` is not the front's.
    fn refuses(&self, request: &Request<Incoming>) -> Option<String> {
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

/// Reads a request's body whole, up to `limit` bytes; a longer one is read through once (never
/// held) and the client gets 413 and a JSON-RPC error for each request it named.
pub(crate) async fn read_body(
    body: Incoming,
    limit: usize,
    session: &Session,
) -> Result<Vec<u8>, Response<Body>> {
    let mut body = body;
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                -32700,
                "the request's body broke off",
            ));
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > limit {
            // The whole frame, for its ids: what is past the limit in it is the rest of the
            // body too.
            bytes.extend_from_slice(&data);
            return Err(oversized(bytes, body, limit, session).await);
        }
        bytes.extend_from_slice(&data);
    }
    Ok(bytes)
}

/// The 413 for a body over the limit: the rest of it streamed once through `serde_json` (on a
/// blocking thread, fed as it arrives) for the ids of its requests, each of which gets an
/// error.
async fn oversized(
    start: Vec<u8>,
    mut rest: Incoming,
    limit: usize,
    session: &Session,
) -> Response<Body> {
    let (pieces, received) = std::sync::mpsc::sync_channel::<Bytes>(8);
    let skim = tokio::task::spawn_blocking(move || {
        let reader = std::io::Read::chain(
            std::io::Cursor::new(start),
            super::ChannelReader::new(received),
        );
        crate::lines::skim_all(reader)
    });
    while let Some(Ok(frame)) = rest.frame().await {
        if let Ok(data) = frame.into_data() {
            if pieces.send(data).is_err() {
                break;
            }
        }
    }
    drop(pieces);
    let (skimmed, size) = skim.await.unwrap_or((None, 0));
    let outcome = session.oversized(Side::Client, skimmed.as_ref(), size, limit);
    for note in &outcome.notes {
        report(session, note);
    }
    json_response(StatusCode::PAYLOAD_TOO_LARGE, super::joined(outcome.reply))
}

/// Serves the MCP endpoint at `http://ADDR/mcp` until a signal ends the proxy.
pub(crate) async fn serve(
    options: &Options,
    addr: &str,
    engine: Arc<Engine>,
    remote: Option<Arc<Remote>>,
) -> ExitCode {
    let voice = engine.session();
    let resolved: Vec<SocketAddr> = match tokio::net::lookup_host(addr).await {
        Ok(found) => found.collect(),
        Err(err) => {
            report(
                &voice,
                &format!(
                    "--listen {addr:?}: not an address to listen on ({err}); give one such as 127.0.0.1:8931"
                ),
            );
            return ExitCode::from(2);
        }
    };
    let Some(&addr) = resolved.first() else {
        report(&voice, &format!("--listen {addr:?} names no address"));
        return ExitCode::from(2);
    };
    if !addr.ip().is_loopback() && !options.network_clients() {
        report(
            &voice,
            &format!(
                "--listen {addr} is not a loopback address: the proxy authenticates no one, so \
                 anyone who can reach it would use the server (with the credentials of \
                 --header). Listen on 127.0.0.1, or pass --allow-network-clients-without-auth \
                 if that is what you want"
            ),
        );
        return ExitCode::from(2);
    }
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            report(&voice, &format!("cannot listen on {addr}: {err}"));
            return ExitCode::from(1);
        }
    };
    let local = listener.local_addr().unwrap_or(addr);
    let front = Arc::new(Front {
        port: local.port(),
        bound: local.ip(),
        hosts: options.allowed_hosts().to_vec(),
        origins: options.allowed_origins().to_vec(),
        limit: options.max_message_bytes(),
        voice,
    });
    let backend = Arc::new(match remote {
        Some(remote) => Backend::Remote(Reverse::new(engine, remote)),
        None => Backend::Child(Box::new(Children::new(engine, options))),
    });
    report(&front.voice, &format!("listening on http://{local}/mcp"));
    // Watched from here on: a signal stream made anew on each turn would miss a signal that
    // came between two.
    let mut signal = std::pin::pin!(super::stdio_front::signalled());
    let code = loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let (front, backend) = (front.clone(), backend.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (front, backend) = (front.clone(), backend.clone());
                        async move { Ok::<_, Infallible>(route(request, &front, &backend).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
            signal = &mut signal => break signal,
        }
    };
    if matches!(&*backend, Backend::Child(_)) {
        let _ = tokio::task::spawn_blocking(move || {
            if let Backend::Child(children) = &*backend {
                children.end_all();
            }
        })
        .await;
    }
    ExitCode::from(code)
}

async fn route(request: Request<Incoming>, front: &Front, backend: &Backend) -> Response<Body> {
    if let Some(why) = front.refuses(&request) {
        report(&front.voice, &format!("refused a request: {why}"));
        return refusal(StatusCode::FORBIDDEN, -32600, &why);
    }
    if request.uri().path() != "/mcp" {
        return refusal(StatusCode::NOT_FOUND, -32600, "the MCP endpoint is /mcp");
    }
    backend.handle(request, front).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(bound: &str, hosts: &[&str], origins: &[&str]) -> Front {
        Front {
            port: 8931,
            bound: bound.parse().expect("an address"),
            hosts: hosts.iter().map(|&host| host.to_owned()).collect(),
            origins: origins.iter().map(|&origin| origin.to_owned()).collect(),
            limit: 1 << 20,
            voice: Session::new("test".to_owned(), true),
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
