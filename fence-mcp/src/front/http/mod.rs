//! The HTTP front (`--listen ADDR`): the MCP endpoint at `http://ADDR/mcp`, served with hyper,
//! safe by default. It binds loopback addresses only unless the operator says otherwise; it
//! answers only a `Host` that names it and an `Origin` that is its own ([`guard`]); it takes
//! no body over `--max-message-bytes` ([`body`]); it closes a connection that has not sent a
//! request's head within [`HEADER_READ_TIMEOUT`], and waits [`ACCEPT_BACKOFF`] when the
//! system cannot give it a connection (no file descriptor left), rather than ask again at once.
//! What answers behind it is a [`Backend`]: a shape joining this front to an upstream.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::net::TcpListener;

pub(crate) mod body;
mod guard;

pub(crate) use body::{
    Body, empty, full, json_response, pieces_body, read_body, refusal, streamed_after,
};
pub(crate) use guard::Guard;

use crate::engine::report;
use crate::options::HttpFront;
use crate::session::Session;

/// What answers the requests the front lets in: the upstream half of an HTTP shape.
pub(crate) trait Backend: Send + Sync + 'static {
    /// The response to one request the guard let in, for `/mcp`.
    fn handle(
        &self,
        request: Request<Incoming>,
        front: &Listening,
    ) -> impl Future<Output = Response<Body>> + Send;

    /// Ends what the backend runs, once the front stops (on a blocking thread).
    fn end(&self) {}
}

/// The front as it runs: who may call it, its limit, and its voice on stderr.
pub(crate) struct Listening {
    pub(crate) guard: Guard,
    /// The largest body taken, in bytes.
    pub(crate) limit: usize,
    /// The session used for the front's own words on stderr.
    pub(crate) voice: Session,
}

/// How many connections the front serves at once; a client beyond them waits to be accepted.
pub(crate) const MAX_CONNECTIONS: usize = 1024;

/// How long a connection has to send a request's head (its request line and headers), from
/// when it is accepted or its last response was sent; past it, the connection is closed. A
/// client that sends half a head, or nothing, holds one of [`MAX_CONNECTIONS`] and a file
/// descriptor no longer than this.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The hidden variable that sets [`HEADER_READ_TIMEOUT`] in milliseconds, for the tests, which
/// would otherwise wait it out.
const HEADER_READ_TIMEOUT_VARIABLE: &str = "FENCE_MCP_HEADER_READ_TIMEOUT_MS";

/// How long the front waits before accepting again when the system cannot give it a
/// connection (`EMFILE`, `ENFILE`, `ENOBUFS`…): the connection waits in the listen queue, so
/// asking again at once would fail again at once, and spin a core.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How often at most stderr says the front cannot accept connections.
const ACCEPT_REPORT_EVERY: Duration = Duration::from_secs(60);

/// [`HEADER_READ_TIMEOUT`], or what [`HEADER_READ_TIMEOUT_VARIABLE`] sets.
fn header_read_timeout() -> Duration {
    std::env::var(HEADER_READ_TIMEOUT_VARIABLE)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(HEADER_READ_TIMEOUT, Duration::from_millis)
}

/// Whether accepting failed for the one connection only (it was reset before it was
/// accepted), so the next may be accepted at once; any other failure is the system's, and
/// waits [`ACCEPT_BACKOFF`].
fn failed_one_connection(err: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        err.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::ConnectionRefused
    )
}

/// Serves the MCP endpoint at `http://ADDR/mcp` in front of `backend` until a signal ends the
/// proxy; then ends what the backend runs.
pub(crate) async fn serve<B: Backend>(
    front: &HttpFront,
    limit: usize,
    voice: Session,
    backend: Arc<B>,
) -> ExitCode {
    let listener = match bind(front, &voice).await {
        Ok(listener) => listener,
        Err(code) => return code,
    };
    let local = match listener.local_addr() {
        Ok(local) => local,
        Err(err) => {
            report(&voice, &format!("cannot tell where it listens: {err}"));
            return ExitCode::from(2);
        }
    };
    let listening = Arc::new(Listening {
        guard: Guard::new(front, local),
        limit,
        voice,
    });
    report(
        &listening.voice,
        &format!("listening on http://{local}/mcp"),
    );
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut served = tokio::task::JoinSet::new();
    let header_timeout = header_read_timeout();
    // When stderr last said accepting failed.
    let mut reported: Option<Instant> = None;
    // Watched from here on: a signal stream made anew on each turn would miss a signal that
    // came between two.
    let mut signal = std::pin::pin!(crate::signals::signalled());
    let code = loop {
        tokio::select! {
            permit = connections.clone().acquire_owned() => {
                let Ok(permit) = permit else { continue };
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    signal = &mut signal => break signal,
                };
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(err) if failed_one_connection(&err) => continue,
                    Err(err) => {
                        if reported.is_none_or(|at| at.elapsed() >= ACCEPT_REPORT_EVERY) {
                            reported = Some(Instant::now());
                            report(&listening.voice, &cannot_accept(&err));
                        }
                        tokio::select! {
                            () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                            signal = &mut signal => break signal,
                        }
                    }
                };
                let connection = connection(stream, listening.clone(), backend.clone(), header_timeout);
                served.spawn(async move {
                    connection.await;
                    drop(permit);
                });
            }
            Some(_) = served.join_next(), if !served.is_empty() => {}
            signal = &mut signal => break signal,
        }
    };
    served.abort_all();
    let _ = tokio::task::spawn_blocking(move || backend.end()).await;
    ExitCode::from(code)
}

/// The listener at `--listen`'s address, which must be a loopback one unless the front allows
/// network clients; else the exit status, once stderr has said why.
async fn bind(front: &HttpFront, voice: &Session) -> Result<TcpListener, ExitCode> {
    let addr = front.addr();
    let resolved: Vec<SocketAddr> = match tokio::net::lookup_host(addr).await {
        Ok(found) => found.collect(),
        Err(err) => {
            report(
                voice,
                &format!(
                    "--listen {addr:?}: not an address to listen on ({err}); give one such as 127.0.0.1:8931"
                ),
            );
            return Err(ExitCode::from(2));
        }
    };
    let Some(&addr) = resolved.first() else {
        report(voice, &format!("--listen {addr:?} names no address"));
        return Err(ExitCode::from(2));
    };
    if !addr.ip().is_loopback() && !front.network_clients() {
        report(
            voice,
            &format!(
                "--listen {addr} is not a loopback address: the proxy authenticates no one, so \
                 anyone who can reach it would use the server (with the credentials of \
                 --header). Listen on 127.0.0.1, or pass --allow-network-clients-without-auth \
                 if that is what you want"
            ),
        );
        return Err(ExitCode::from(2));
    }
    TcpListener::bind(addr).await.map_err(|err| {
        let what = if err.kind() == std::io::ErrorKind::AddrInUse {
            "; something (another proxy?) listens there already: give another port, or port 0 \
             for a free one"
        } else {
            ""
        };
        report(voice, &format!("cannot listen on {addr}: {err}{what}"));
        ExitCode::from(2)
    })
}

/// What stderr says when the system cannot give the front a connection, and what to do.
fn cannot_accept(err: &std::io::Error) -> String {
    format!(
        "cannot accept a connection ({err}); trying again every {} ms. If no file descriptor is \
         left, raise the limit (`ulimit -n`) or have fewer clients connect at once",
        ACCEPT_BACKOFF.as_millis()
    )
}

/// Serves one connection until it closes: its requests, one at a time, each routed to
/// `backend`; closed when a request's head takes longer than `header_timeout` to come.
async fn connection<B: Backend>(
    stream: tokio::net::TcpStream,
    listening: Arc<Listening>,
    backend: Arc<B>,
    header_timeout: Duration,
) {
    let _ = stream.set_nodelay(true);
    let service = hyper::service::service_fn(move |request| {
        let (listening, backend) = (listening.clone(), backend.clone());
        async move { Ok::<_, Infallible>(route(request, &listening, &*backend).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
}

/// The response to one request: refused unless the guard lets it in and it is for `/mcp`;
/// else the backend's.
async fn route<B: Backend>(
    request: Request<Incoming>,
    listening: &Listening,
    backend: &B,
) -> Response<Body> {
    if let Some(why) = listening.guard.refuses(&request) {
        report(&listening.voice, &format!("refused a request: {why}"));
        return refusal(StatusCode::FORBIDDEN, -32600, &why);
    }
    if request.uri().path() != "/mcp" {
        return refusal(StatusCode::NOT_FOUND, -32600, "the MCP endpoint is /mcp");
    }
    backend.handle(request, listening).await
}

#[cfg(test)]
mod tests {
    use std::io::{Error, ErrorKind};

    use super::failed_one_connection;

    #[test]
    fn a_connection_gone_before_it_was_accepted_is_no_reason_to_back_off() {
        for kind in [
            ErrorKind::ConnectionAborted,
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionRefused,
        ] {
            assert!(failed_one_connection(&Error::from(kind)), "{kind:?}");
        }
        // Out of file descriptors (EMFILE), or anything else: the system's, so it waits.
        assert!(!failed_one_connection(&Error::from_raw_os_error(24)));
        assert!(!failed_one_connection(&Error::other("other")));
    }
}
