//! The HTTP front (`--listen ADDR`): the MCP endpoint at `http://ADDR/mcp`, served with hyper,
//! safe by default. It binds loopback addresses only unless the operator says otherwise; it
//! answers only a `Host` that names it and an `Origin` that is its own ([`guard`]); it takes
//! no body over `--max-message-bytes` ([`body`]). What answers behind it is a [`Backend`]: a
//! shape joining this front to an upstream.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

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

/// Serves the MCP endpoint at `http://ADDR/mcp` in front of `backend` until a signal ends the
/// proxy; then ends what the backend runs.
pub(crate) async fn serve<B: Backend>(
    front: &HttpFront,
    limit: usize,
    voice: Session,
    backend: Arc<B>,
) -> ExitCode {
    let addr = front.addr();
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
    if !addr.ip().is_loopback() && !front.network_clients() {
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
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let (listening, backend) = (listening.clone(), backend.clone());
                served.spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (listening, backend) = (listening.clone(), backend.clone());
                        async move {
                            Ok::<_, Infallible>(route(request, &listening, &*backend).await)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
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
