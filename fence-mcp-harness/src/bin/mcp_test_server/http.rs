//! `--http ADDR`: the same handler on rmcp's Streamable HTTP server.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use crate::tools::Server;

/// `--http ADDR [--stateless] [--json]`: how to serve over Streamable HTTP.
pub(crate) struct Http {
    addr: String,
    /// rmcp's `legacy_session_mode` off: no `Mcp-Session-Id`, a handler (a clone) per request.
    stateless: bool,
    /// rmcp's `json_response` (which it honours only when stateless): a simple answer is
    /// `application/json`, not an SSE stream.
    json: bool,
}

pub(crate) fn http_args() -> Result<Option<Http>, String> {
    let mut args = std::env::args().skip(1);
    let (mut addr, mut stateless, mut json) = (None, false, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => addr = Some(args.next().ok_or("--http needs an address")?),
            "--stateless" => stateless = true,
            "--json" => json = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match addr {
        Some(addr) => Ok(Some(Http {
            addr,
            stateless,
            json,
        })),
        None if stateless || json => Err("--stateless and --json need --http".to_owned()),
        None => Ok(None),
    }
}

/// Serves `server` with rmcp's Streamable HTTP server at `/mcp` (anything else is a 404). Prints
/// `listening http://ADDR/mcp` once bound, then serves until stdin ends or the process is killed.
pub(crate) async fn serve_http(
    server: Server,
    http: Http,
) -> Result<(), Box<dyn std::error::Error>> {
    use http_body_util::BodyExt as _;
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!http.stateless)
        .with_json_response(http.json);
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(&http.addr).await?;
    let addr = listener.local_addr()?;
    {
        let mut stdout = tokio::io::stdout();
        stdout
            .write_all(format!("listening http://{addr}/mcp\n").as_bytes())
            .await?;
        stdout.flush().await?;
    }
    // The test that started the server holds its stdin: when it ends, so does the server.
    tokio::spawn(async {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut tokio::io::sink()).await;
        std::process::exit(0);
    });
    loop {
        let (stream, _) = listener.accept().await?;
        // As servers tuned for latency do: without it, a small write after another waits for
        // the client's delayed ACK (40 ms on Linux) once the connection is reused.
        let _ = stream.set_nodelay(true);
        let mcp = mcp.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
            let mut mcp = mcp.clone();
            async move {
                if request.uri().path() == "/mcp" {
                    tower_service::Service::call(&mut mcp, request).await
                } else {
                    let mut response = hyper::Response::new(
                        http_body_util::Full::new(hyper::body::Bytes::from_static(b"not found"))
                            .boxed(),
                    );
                    *response.status_mut() = hyper::StatusCode::NOT_FOUND;
                    Ok(response)
                }
            }
        });
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            // A client that drops a stream it no longer needs (the GET stream of a session, as
            // it closes) is no failure.
            if let Err(err) = connection.await
                && !err.is_incomplete_message()
            {
                eprintln!("mcp_test_server: a connection failed: {err}");
            }
        });
    }
}
