//! The proxy's cost, by hand: rmcp's client making the same calls to the test server directly
//! and through `fence mcp`, in one run, interleaved so that both see the same machine.
//!
//! ```text
//! cargo test --release -p fence-mcp --test proxy bench -- --ignored --nocapture --test-threads=1
//! ```
//!
//! 1,000 small calls (`echo`) and 20 calls with a 10 MB result (`big`), each way. Floors:
//! proxied p50 within 100 µs of direct for a small call, within 1.15x for a 10 MB result. The same
//! over Streamable HTTP (`bench_http_direct_against_proxied`: rmcp's HTTP client to the test
//! server's HTTP mode, and through `fence mcp --listen ADDR --url URL`): within 1.3x for a small
//! call, 1.15x for a 10 MB result.
//!
//! The HTTP benchmark prints more rows than it holds to floors, for reading its figure: the same
//! small calls through a relay that only copies bytes (on a thread of this process, and in a
//! process of its own as the proxy is) and through the least HTTP proxy (hyper's server and
//! reqwest's client, as the proxy's, passing bodies on unread), so that what the extra hop costs
//! is told apart from what the proxy adds to it; the same again with rmcp's client on a pooling
//! reqwest client (rmcp's default opens a connection per request); and the CPU time the server,
//! the proxy, the relay's process and the least HTTP proxy spend on one small call, from
//! `/proc/PID/task/*/schedstat`.

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;

use crate::client::{Session, connect};
use crate::common::{PATIENCE, binaries};
use crate::http_direct::{HttpClient, HttpMode, rmcp_http_client, start_http_server};
use crate::listening::{Announced, spawn_announcing};

const SMALL_CALLS: usize = 1_000;
const BIG_CALLS: usize = 20;
const BIG_BYTES: u64 = 10_000_000;

/// The `percent`th percentile of sorted `samples` (nearest rank).
fn percentile(samples: &[Duration], percent: usize) -> Duration {
    let rank = (percent * samples.len()).div_ceil(100);
    samples[rank.clamp(1, samples.len()) - 1]
}

async fn timed(session: &Session, tool: &'static str, arguments: serde_json::Value) -> Duration {
    let start = Instant::now();
    let result = session
        .call(tool, arguments)
        .await
        .expect("the call succeeds");
    let elapsed = start.elapsed();
    assert!(!result.content.is_empty());
    elapsed
}

struct Row {
    what: &'static str,
    direct: Vec<Duration>,
    proxied: Vec<Duration>,
}

impl Row {
    /// Prints the row; whether proxied p50 is within `floor` times direct p50, and (when
    /// given) within `added` of it.
    fn print(&mut self, floor: f64) -> bool {
        self.print_within(floor, None)
    }

    fn print_within(&mut self, floor: f64, added: Option<Duration>) -> bool {
        self.direct.sort();
        self.proxied.sort();
        let (d50, d99) = (percentile(&self.direct, 50), percentile(&self.direct, 99));
        let (p50, p99) = (percentile(&self.proxied, 50), percentile(&self.proxied, 99));
        let ratio = p50.as_secs_f64() / d50.as_secs_f64();
        println!(
            "| {} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {ratio:.2}x (floor {floor}x) |",
            self.what,
            d50.as_secs_f64() * 1e3,
            d99.as_secs_f64() * 1e3,
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
        );
        ratio <= floor && added.is_none_or(|added| p50 <= d50 + added)
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: run it by hand, in release"]
async fn bench_direct_against_proxied() {
    if cfg!(debug_assertions) {
        println!("a debug build: run the benchmark with --release for figures that mean anything");
    }
    let (direct, proxied) = tokio::join!(connect(false), connect(true));
    let small = || json!({ "text": "hello" });
    let big = || json!({ "bytes": BIG_BYTES });
    for session in [&direct, &proxied] {
        for _ in 0..100 {
            timed(session, "echo", small()).await;
        }
        timed(session, "big", big()).await;
    }

    let mut small_row = Row {
        what: "small call (`echo`)",
        direct: Vec::new(),
        proxied: Vec::new(),
    };
    for _ in 0..SMALL_CALLS / 50 {
        for _ in 0..50 {
            small_row.direct.push(timed(&direct, "echo", small()).await);
        }
        for _ in 0..50 {
            small_row
                .proxied
                .push(timed(&proxied, "echo", small()).await);
        }
    }
    let mut big_row = Row {
        what: "10 MB result (`big`)",
        direct: Vec::new(),
        proxied: Vec::new(),
    };
    for _ in 0..BIG_CALLS {
        big_row.direct.push(timed(&direct, "big", big()).await);
        big_row.proxied.push(timed(&proxied, "big", big()).await);
    }

    println!("| call | direct p50 | direct p99 | proxied p50 | proxied p99 | proxied/direct p50 |");
    println!("|---|---:|---:|---:|---:|---:|");
    let small_ok = small_row.print_within(2.0, Some(Duration::from_micros(100)));
    let big_ok = big_row.print(1.15);
    assert!(small_ok && big_ok, "a floor is not met");
}

/// One call through an rmcp client of any transport, timed.
async fn timed_http(
    client: &RunningService<RoleClient, HttpClient>,
    tool: &'static str,
    arguments: serde_json::Value,
) -> Duration {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let start = Instant::now();
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("the call succeeds");
    let elapsed = start.elapsed();
    assert!(!result.content.is_empty());
    elapsed
}

/// rmcp's Streamable HTTP client making the same calls to the test server's HTTP mode directly
/// and through `fence mcp --listen ADDR --url URL`, interleaved. Floors: proxied p50 within
/// 1.3x of direct for a small call, within 1.15x for a 10 MB result.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: run it by hand, in release"]
async fn bench_http_direct_against_proxied() {
    if cfg!(debug_assertions) {
        println!("a debug build: run the benchmark with --release for figures that mean anything");
    }
    let (server, url) = start_http_server(HttpMode::StatefulSse);
    let mut command = std::process::Command::new(&binaries().fence);
    command.args(["mcp", "--listen", "127.0.0.1:0", "--url", &url]);
    let (proxy, proxied_url) = spawn_announcing(command, Announced::Stderr, PATIENCE);
    let relayed_url = url.replacen(&authority(&url), &byte_relay(&authority(&url)), 1);
    let (relay, relayed_apart_url) = apart("bench::byte_relay_process", &url);
    let (least_proxy, forwarded_url) = apart("bench::http_forwarder_process", &url);
    let direct = rmcp_http_client(&url).await;
    let proxied = rmcp_http_client(&proxied_url).await;
    let relayed = rmcp_http_client(&relayed_url).await;
    let relayed_apart = rmcp_http_client(&relayed_apart_url).await;
    let forwarded = rmcp_http_client(&forwarded_url).await;
    warm(&[&direct, &proxied, &relayed, &relayed_apart, &forwarded]).await;
    let big = || json!({ "bytes": BIG_BYTES });
    for client in [&direct, &proxied] {
        timed_http(client, "big", big()).await;
    }
    let cpu = || [server.id(), proxy.id(), relay.id(), least_proxy.id()].map(cpu_time);
    let cpu_before = cpu();
    let [
        direct_small,
        proxied_small,
        relayed_small,
        apart_small,
        forwarded_small,
    ] = interleaved_small([&direct, &proxied, &relayed, &relayed_apart, &forwarded]).await;
    let cpu_after = cpu();
    let spent = |process: usize| cpu_after[process].saturating_sub(cpu_before[process]);
    // The server answers all five clients; the proxy, the relay apart and the least HTTP proxy, one each.
    let calls = u32::try_from(SMALL_CALLS).expect("a few calls");
    println!(
        "CPU per small call: server {:?}, proxy {:?}, byte relay in a process of its own {:?}, \
         least HTTP proxy {:?}",
        spent(0) / (5 * calls),
        spent(1) / calls,
        spent(2) / calls,
        spent(3) / calls,
    );
    let mut small_row = Row {
        what: "small call (`echo`), HTTP",
        direct: direct_small.clone(),
        proxied: proxied_small,
    };
    let mut relay_row = Row {
        what: "small call (`echo`), HTTP, through a byte relay instead",
        direct: direct_small.clone(),
        proxied: relayed_small,
    };
    let mut apart_row = Row {
        what: "small call (`echo`), HTTP, through a byte relay in a process of its own instead",
        direct: direct_small.clone(),
        proxied: apart_small,
    };
    let mut forwarded_row = Row {
        what: "small call (`echo`), HTTP, through the least HTTP proxy (hyper and reqwest, \
               bodies unread) instead",
        direct: direct_small,
        proxied: forwarded_small,
    };
    let direct_pooled = pooled_http_client(&url).await;
    let proxied_pooled = pooled_http_client(&proxied_url).await;
    warm(&[&direct_pooled, &proxied_pooled]).await;
    let [direct_small, proxied_small] = interleaved_small([&direct_pooled, &proxied_pooled]).await;
    let mut pooled_row = Row {
        what: "small call (`echo`), HTTP, rmcp's client on a pooling reqwest client",
        direct: direct_small,
        proxied: proxied_small,
    };
    let mut big_row = Row {
        what: "10 MB result (`big`), HTTP",
        direct: Vec::new(),
        proxied: Vec::new(),
    };
    for _ in 0..BIG_CALLS {
        big_row.direct.push(timed_http(&direct, "big", big()).await);
        big_row
            .proxied
            .push(timed_http(&proxied, "big", big()).await);
    }
    println!("| call | direct p50 | direct p99 | proxied p50 | proxied p99 | proxied/direct p50 |");
    println!("|---|---:|---:|---:|---:|---:|");
    let small_ok = small_row.print(1.3);
    let big_ok = big_row.print(1.15);
    // Not a floor: what the extra hop alone costs, for reading the proxy's own figure.
    relay_row.print(1.3);
    apart_row.print(1.3);
    forwarded_row.print(1.3);
    pooled_row.print(1.3);
    assert!(small_ok && big_ok, "a floor is not met");
}

/// A hundred small calls on each of `clients`, unmeasured, so that none is measured cold.
async fn warm(clients: &[&RunningService<RoleClient, HttpClient>]) {
    for client in clients {
        for _ in 0..100 {
            timed_http(client, "echo", json!({ "text": "hello" })).await;
        }
    }
}

/// `SMALL_CALLS` small calls on each of `clients`, fifty on one and then fifty on the next so
/// that all see the same machine: the times, client by client.
async fn interleaved_small<const N: usize>(
    clients: [&RunningService<RoleClient, HttpClient>; N],
) -> [Vec<Duration>; N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(SMALL_CALLS));
    for _ in 0..SMALL_CALLS / 50 {
        for (client, times) in clients.iter().zip(&mut times) {
            for _ in 0..50 {
                times.push(timed_http(client, "echo", json!({ "text": "hello" })).await);
            }
        }
    }
    times
}

/// rmcp's Streamable HTTP client on a reqwest client that keeps its connections (rmcp's own
/// default opens one per request), initialized with `url`'s server.
async fn pooled_http_client(url: &str) -> RunningService<RoleClient, HttpClient> {
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
    let transport =
        rmcp::transport::StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    rmcp::ServiceExt::serve(HttpClient, transport)
        .await
        .expect("the client connects")
}

/// The CPU time process `pid`'s threads have run for, from `/proc/PID/task/*/schedstat`.
fn cpu_time(pid: u32) -> Duration {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("its tasks") {
        let path = task.expect("a task").path().join("schedstat");
        if let Ok(stat) = std::fs::read_to_string(path) {
            total += stat
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(total)
}

/// A relay in a process of its own, as the proxy is: this test binary run again for `test`
/// ([`byte_relay_process`] or [`http_forwarder_process`]). The process, and `url` through it.
fn apart(test: &str, url: &str) -> (crate::listening::KillOnDrop, String) {
    let mut command = std::process::Command::new(std::env::current_exe().expect("this binary"));
    command
        .args([test, "--exact", "--ignored", "--nocapture"])
        .env(RELAY_TARGET, url);
    spawn_announcing(command, Announced::Stderr, PATIENCE)
}

/// Where [`byte_relay_process`] and [`http_forwarder_process`] relay to: an `http://` URL.
const RELAY_TARGET: &str = "FENCE_BENCH_RELAY_TARGET";

/// Not a test: the least HTTP proxy, in a process of its own, for [`apart`]. It serves
/// `http://127.0.0.1:PORT/mcp` with hyper on a current-thread runtime and sends each request on
/// to the URL in `FENCE_BENCH_RELAY_TARGET` with one reqwest client (no redirects, `TCP_NODELAY`),
/// as the proxy does, but reads neither body: the request's is passed on whole, the response's
/// streamed back as it comes. It names its URL on stderr and runs until it is killed.
#[test]
#[ignore = "run by bench_http_direct_against_proxied, in a process of its own"]
fn http_forwarder_process() {
    let Ok(target) = std::env::var(RELAY_TARGET) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("its address");
        eprintln!("least HTTP proxy: listening on http://{address}/mcp");
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client");
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let (client, target) = (client.clone(), target.clone());
            let service = hyper::service::service_fn(move |request| {
                forward(client.clone(), target.clone(), request)
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
}

type ForwardedBody = http_body_util::combinators::UnsyncBoxBody<
    bytes::Bytes,
    Box<dyn std::error::Error + Send + Sync>,
>;

/// [`http_forwarder_process`]'s one request, sent on to `target`; its response, as it comes.
async fn forward(
    client: reqwest::Client,
    target: String,
    request: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<ForwardedBody>, Box<dyn std::error::Error + Send + Sync>> {
    use http_body_util::BodyExt as _;
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
    let stream = futures_util::TryStreamExt::map_ok(response.bytes_stream(), |bytes| {
        hyper::body::Frame::data(bytes)
    });
    let stream = futures_util::TryStreamExt::map_err(stream, |err| {
        Box::new(err) as Box<dyn std::error::Error + Send + Sync>
    });
    Ok(head.body(http_body_util::StreamBody::new(stream).boxed_unsync())?)
}

/// Not a test: [`apart`]'s byte relay's process, which relays to the URL in
/// `FENCE_BENCH_RELAY_TARGET` until it is killed, and names that URL through itself on stderr.
#[test]
#[ignore = "run by bench_http_direct_against_proxied, in a process of its own"]
fn byte_relay_process() {
    let Ok(url) = std::env::var(RELAY_TARGET) else {
        return;
    };
    let target = authority(&url);
    let relayed = url.replacen(&target, &byte_relay(&target), 1);
    eprintln!("byte relay: listening on {relayed}");
    loop {
        std::thread::park();
    }
}

/// `host:port` of an `http://` URL.
fn authority(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    rest.split('/').next().expect("an authority").to_owned()
}

/// A relay of bytes, nothing more, from a port of its own to `target`, on a thread of its own
/// with a current-thread tokio runtime as the proxy's network side has: the least any proxy
/// between the client and the server costs, the hop alone. Its address, `host:port`.
fn byte_relay(target: &str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = listener.local_addr().expect("its address").to_string();
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let target = target.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    let _ = (client.set_nodelay(true), server.set_nodelay(true));
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
    });
    address
}
