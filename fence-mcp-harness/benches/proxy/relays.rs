//! The baselines' relays, each run in a process of its own by [`apart`](super::apart).

use bytes::Bytes;
use http_body_util::BodyExt as _;

type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, Error>;
type Error = Box<dyn std::error::Error + Send + Sync>;

/// A current-thread runtime, as the proxy's network side has.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The least HTTP proxy: serves `http://127.0.0.1:PORT/mcp` with hyper and sends each
/// request on to `target` with one reqwest client (no redirects, `TCP_NODELAY`), as the
/// proxy does, but reads neither body: the request's is passed on whole, the response's
/// streamed back as it comes. Names its URL on stderr and runs until it is killed.
///
/// With `hold`, the holding HTTP proxy: the same, but each response body is read whole before
/// any of it is passed on, as a proxy must that reads a message before it lets it through
/// (`fence mcp` holds each event whole). The least such a proxy costs.
pub(crate) fn least_http_proxy(target: &str, hold: bool) -> ! {
    let target = target.to_owned();
    runtime().block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("its address");
        let name = if hold { "holding" } else { "least" };
        eprintln!("{name} HTTP proxy: listening on http://{address}/mcp");
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (client, target) = (client.clone(), target.clone());
            let service = hyper::service::service_fn(move |request| {
                forward(client.clone(), target.clone(), request, hold)
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    })
}

/// One request, sent on to `target`; its response, as it comes (or whole, with `hold`).
async fn forward(
    client: reqwest::Client,
    target: String,
    request: http::Request<hyper::body::Incoming>,
    hold: bool,
) -> Result<http::Response<Body>, Error> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let mut headers = parts.headers;
    for owned in [
        http::header::HOST,
        http::header::CONNECTION,
        http::header::CONTENT_LENGTH,
    ] {
        headers.remove(owned);
    }
    let response = client
        .request(parts.method, target)
        .headers(headers)
        .body(body)
        .send()
        .await?;
    let mut head = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if name != http::header::TRANSFER_ENCODING && name != http::header::CONTENT_LENGTH {
            head = head.header(name, value);
        }
    }
    if hold {
        let whole = response.bytes().await?;
        let body = http_body_util::Full::new(whole).map_err(|never| match never {});
        return Ok(head.body(body.boxed_unsync())?);
    }
    let stream = futures_util::TryStreamExt::map_ok(response.bytes_stream(), |bytes| {
        hyper::body::Frame::data(bytes)
    });
    let stream = futures_util::TryStreamExt::map_err(stream, |err| Box::new(err) as Error);
    Ok(head.body(http_body_util::StreamBody::new(stream).boxed_unsync())?)
}

/// A relay of bytes, nothing more, from a port of its own to `target`'s: the least any
/// proxy between the client and the server costs, the hop alone. Names `target` through
/// itself on stderr and runs until it is killed.
pub(crate) fn byte_relay(target: &str) -> ! {
    let rest = target.strip_prefix("http://").expect("an http URL");
    let authority = rest.split('/').next().expect("an authority").to_owned();
    let target = target.to_owned();
    runtime().block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("its address").to_string();
        eprintln!(
            "byte relay: listening on {}",
            target.replacen(&authority, &address, 1)
        );
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                continue;
            };
            let authority = authority.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(&authority).await else {
                    return;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    })
}
