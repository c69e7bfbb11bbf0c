//! What a hop through `fence mcp` costs, against what a client would have without it and against
//! the least any proxy costs, measured in one run so that every figure sees the same machine:
//!
//! ```text
//! cargo bench -p fence-mcp-harness --bench proxy
//! ```
//!
//! rmcp's own client calls the test server (`mcp_test_server`) directly and through the proxy:
//!
//! - **stdio**: small calls (`echo`) and 10 MB results (`big`), `fence mcp -- SERVER` against
//!   the server on stdio;
//! - **HTTP**: the same calls to the server's Streamable HTTP mode, through
//!   `fence mcp --listen ADDR --url URL`, through the least HTTP proxy (hyper's server and
//!   reqwest's client, as the proxy's, passing bodies on unread, in a process of its own) and
//!   through a byte relay (a process that copies bytes), every client keeping its connection
//!   (a pooling reqwest client: rmcp's default opens a connection per request); 10 MB results
//!   also through the holding HTTP proxy (the least one, but reading each response whole
//!   before passing it on, as a proxy that reads before it passes must), the limit its 10 MB
//!   floor is judged against;
//! - **50 clients at once**, 200 small calls each, through the proxy and through the least HTTP
//!   proxy;
//! - **memory**: the proxy's peak resident set (`VmHWM`, its own process, not the server's) on
//!   one 10 MB result, in a proxy of its own that has made one small call before it, in each
//!   shape: stdio, `--url` (a stdio client, the server over HTTP) and `--listen --url`; and,
//!   for reading, the peaks of the proxies that made all the calls above.
//!
//! Small calls are made in rounds of 50 per path, the paths interleaved, and judged round by
//! round: a floor on an added time holds the median of the rounds' differences of p50s. The
//! benchmark ends with one line per floor, `floor NAME measured=… limit=… ok|MISS`, and exits 1
//! when one is missed. Under `cargo test` (CI runs each benchmark once so it cannot rot) it makes
//! a few calls of each kind and judges nothing.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;

/// rmcp's client, on any transport.
type Client = RunningService<RoleClient, ()>;

/// How much each measurement does: the full run, or `cargo test`'s look that it still runs.
#[derive(Clone, Copy, Debug)]
struct Scale {
    /// Rounds of small calls, each of `ROUND` calls per path.
    rounds: usize,
    big_calls: usize,
    big_bytes: u64,
    clients: usize,
    calls_per_client: usize,
    /// Rounds of the concurrent measurement, each through the proxy and the least proxy.
    concurrent_rounds: usize,
    /// Small calls on each client before any is measured.
    warm_calls: usize,
    judged: bool,
}

const FULL: Scale = Scale {
    rounds: 40,
    big_calls: 20,
    big_bytes: 10_000_000,
    clients: 50,
    calls_per_client: 200,
    concurrent_rounds: 5,
    warm_calls: 100,
    judged: true,
};

const LOOK: Scale = Scale {
    rounds: 2,
    big_calls: 2,
    big_bytes: 100_000,
    clients: 4,
    calls_per_client: 5,
    concurrent_rounds: 1,
    warm_calls: 5,
    judged: false,
};

/// Small calls per path per round.
const ROUND: usize = 50;

/// How long a process is waited for before the run fails.
const PATIENCE: Duration = Duration::from_secs(60);

/// Where a relay started by [`apart`] sends what it receives: an `http://` URL.
const RELAY_TARGET: &str = "FENCE_BENCH_RELAY_TARGET";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(target) = std::env::var(RELAY_TARGET) {
        match args.first().map(String::as_str) {
            Some("--least-http-proxy") => relays::least_http_proxy(&target, false),
            Some("--holding-http-proxy") => relays::least_http_proxy(&target, true),
            Some("--byte-relay") => relays::byte_relay(&target),
            _ => {}
        }
    }
    // `cargo bench` passes `--bench`; `cargo test` does not.
    let scale = if args.iter().any(|arg| arg == "--bench") {
        FULL
    } else {
        LOOK
    };
    if scale.judged && cfg!(debug_assertions) {
        eprintln!("a debug build: the figures mean little; `cargo bench` builds in release");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let floors = runtime.block_on(run(scale));
    println!();
    let mut missed = false;
    for floor in &floors {
        if scale.judged {
            println!("{floor}");
            missed |= !floor.met();
        } else {
            println!(
                "{} (not judged: a few calls under `cargo test`)",
                floor.figures()
            );
        }
    }
    if missed {
        std::process::exit(1);
    }
}

async fn run(scale: Scale) -> Vec<Floor> {
    let binaries = binaries::build();
    let mut floors = Vec::new();
    stdio(&binaries, scale, &mut floors).await;
    http(&binaries, scale, &mut floors).await;
    floors
}

/// stdio: the server directly and through `fence mcp -- SERVER`.
async fn stdio(binaries: &binaries::Binaries, scale: Scale, floors: &mut Vec<Floor>) {
    let direct = stdio_client(Command::new(&binaries.server)).await;
    let mut proxy = Command::new(&binaries.fence);
    proxy.arg("mcp").arg("--").arg(&binaries.server);
    let (proxied, proxy_pid) = stdio_client(proxy).await;
    let (direct, _) = direct;
    warm(scale, &[&direct, &proxied]).await;

    let rounds = small_rounds(scale, [&direct, &proxied]).await;
    let mut table = Table::new("stdio");
    table.row("small call, direct", &rounds[0]);
    table.row("small call, through fence mcp", &rounds[1]);
    let big = big_calls(scale, [&direct, &proxied]).await;
    table.row("10 MB result, direct", &big[0]);
    table.row("10 MB result, through fence mcp", &big[1]);
    table.print();

    floors.push(Floor::at_most(
        "stdio-small-p50-added",
        added_per_round(&rounds[1], &rounds[0]),
        Duration::from_micros(60),
    ));
    floors.push(Floor::ratio_at_most(
        "stdio-10mb-p50-ratio",
        ratio_of_medians(&big[1], &big[0]),
        1.15,
    ));
    println!(
        "Peak resident set of fence mcp after all of the above: {}",
        Measured::Bytes(peak_bytes(proxy_pid))
    );
    drop(proxied);
}

/// HTTP: the server's Streamable HTTP mode directly, through `fence mcp --listen --url`,
/// through the least HTTP proxy, through a byte relay and (10 MB results) through the holding
/// HTTP proxy.
async fn http(binaries: &binaries::Binaries, scale: Scale, floors: &mut Vec<Floor>) {
    let mut server = Command::new(&binaries.server);
    server.args(["--http", "127.0.0.1:0"]);
    let (server, url) = announcing::spawn(server, announcing::On::Stdout);
    let mut proxy = Command::new(&binaries.fence);
    proxy.args(["mcp", "--listen", "127.0.0.1:0", "--url", &url]);
    let (proxy, proxied_url) = announcing::spawn(proxy, announcing::On::Stderr);
    let (least, least_url) = apart("--least-http-proxy", &url);
    let (relay, relayed_url) = apart("--byte-relay", &url);
    let (holding, holding_url) = apart("--holding-http-proxy", &url);

    let direct = http_client(&url).await;
    let proxied = http_client(&proxied_url).await;
    let forwarded = http_client(&least_url).await;
    let relayed = http_client(&relayed_url).await;
    let held = http_client(&holding_url).await;
    warm(scale, &[&direct, &proxied, &forwarded, &relayed, &held]).await;

    let cpu = || [proxy.id(), least.id(), server.id()].map(cpu_time);
    let before = cpu();
    let rounds = small_rounds(scale, [&direct, &proxied, &forwarded, &relayed]).await;
    let after = cpu();
    let calls = u32::try_from(scale.rounds * ROUND).expect("a few calls");
    let per_call = |process: usize| after[process].saturating_sub(before[process]) / calls;
    let (proxy_cpu, least_cpu) = (per_call(0), per_call(1));

    let big = big_calls(scale, [&direct, &proxied, &forwarded, &relayed, &held]).await;
    let mut table = Table::new("Streamable HTTP, each client keeping its connection");
    table.row("small call, direct", &rounds[0]);
    table.row("small call, through fence mcp --listen --url", &rounds[1]);
    table.row("small call, through the least HTTP proxy", &rounds[2]);
    table.row("small call, through a byte relay", &rounds[3]);
    table.row("10 MB result, direct", &big[0]);
    table.row("10 MB result, through fence mcp --listen --url", &big[1]);
    table.row("10 MB result, through the least HTTP proxy", &big[2]);
    table.row("10 MB result, through a byte relay", &big[3]);
    table.row("10 MB result, through the holding HTTP proxy", &big[4]);
    table.print();
    println!(
        "CPU per small call: fence mcp {proxy_cpu:?}, the least HTTP proxy {least_cpu:?}, \
         the server {:?} (over four paths)",
        per_call(2) / 4
    );

    floors.push(Floor::at_most(
        "http-small-p50-added-to-least-proxy",
        added_per_round(&rounds[1], &rounds[2]),
        Duration::from_micros(25),
    ));
    floors.push(Floor::ratio_at_most(
        "http-small-cpu-ratio-to-least-proxy",
        proxy_cpu.as_secs_f64() / least_cpu.as_secs_f64(),
        1.15,
    ));
    floors.push(Floor::ratio_at_most(
        "http-10mb-p50-ratio",
        ratio_of_medians(&big[1], &big[0]),
        1.15,
    ));
    // What any proxy of the same parts pays for the hop, so what the floor above leaves for
    // the proxy's own work: not floors, the limits it is judged against.
    println!(
        "baseline http-10mb-p50-ratio: the least HTTP proxy {:.3}x, a byte relay {:.3}x, the \
         holding HTTP proxy {:.3}x; fence mcp to the holding HTTP proxy {:.3}x",
        ratio_of_medians(&big[2], &big[0]),
        ratio_of_medians(&big[3], &big[0]),
        ratio_of_medians(&big[4], &big[0]),
        ratio_of_medians(&big[1], &big[4]),
    );
    println!(
        "Peak resident set of fence mcp --listen --url after all of the above: {}",
        Measured::Bytes(peak_bytes(proxy.id()))
    );
    memory(binaries, scale, &url, floors).await;

    let [throughput, p99] = concurrent(scale, &proxied_url, &least_url).await;
    floors.push(Floor::ratio_at_least(
        "http-concurrent-throughput-ratio-to-least-proxy",
        throughput,
        0.95,
    ));
    floors.push(Floor::ratio_at_most(
        "http-concurrent-p99-ratio-to-least-proxy",
        p99,
        1.25,
    ));
    drop((server, proxy, least, relay, holding));
}

/// `scale.clients` clients at once, `scale.calls_per_client` small calls each, through the
/// proxy and through the least HTTP proxy, round by round: the medians of the rounds' ratios
/// of throughput and of p99, proxy to least proxy.
async fn concurrent(scale: Scale, proxied_url: &str, least_url: &str) -> [f64; 2] {
    let mut proxied = Vec::new();
    let mut least = Vec::new();
    for _ in 0..scale.clients {
        proxied.push(Arc::new(http_client(proxied_url).await));
        least.push(Arc::new(http_client(least_url).await));
    }
    let (mut throughputs, mut p99s) = (Vec::new(), Vec::new());
    let mut table = Table::new(&format!(
        "{} clients at once, {} small calls each",
        scale.clients, scale.calls_per_client
    ));
    for round in 0..scale.concurrent_rounds {
        // Each goes first in every other round.
        let (first, second) = if round % 2 == 0 {
            (&least, &proxied)
        } else {
            (&proxied, &least)
        };
        let a = all_at_once(first, scale.calls_per_client).await;
        let b = all_at_once(second, scale.calls_per_client).await;
        let ((least_took, mut least_times), (proxied_took, mut proxied_times)) =
            if round % 2 == 0 { (a, b) } else { (b, a) };
        throughputs.push(least_took.as_secs_f64() / proxied_took.as_secs_f64());
        least_times.sort_unstable();
        proxied_times.sort_unstable();
        p99s.push(
            percentile(&proxied_times, 99).as_secs_f64()
                / percentile(&least_times, 99).as_secs_f64(),
        );
        if round == 0 {
            table.row("through the least HTTP proxy", &least_times);
            table.row("through fence mcp --listen --url", &proxied_times);
        }
    }
    table.print();
    [median_f64(&mut throughputs), median_f64(&mut p99s)]
}

/// Every client of `clients` making `calls` small calls at once: how long they all took, and
/// every call's time.
async fn all_at_once(clients: &[Arc<Client>], calls: usize) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        let client = client.clone();
        tasks.spawn(async move {
            let mut times = Vec::with_capacity(calls);
            for _ in 0..calls {
                times.push(small_call(&client).await);
            }
            times
        });
    }
    let mut times = Vec::with_capacity(clients.len() * calls);
    while let Some(some) = tasks.join_next().await {
        times.extend(some.expect("a client's calls"));
    }
    (start.elapsed(), times)
}

// ------------------------------------------------------------------------------------------
// Calls, and the clients that make them.

async fn call(client: &Client, tool: &str, arguments: serde_json::Value) -> Duration {
    let serde_json::Value::Object(arguments) = arguments else {
        unreachable!("the benchmark's arguments are objects")
    };
    let arguments: JsonObject = arguments;
    let start = Instant::now();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|err| panic!("`{tool}` answers: {err}"));
    let elapsed = start.elapsed();
    assert!(!result.content.is_empty(), "`{tool}` returns content");
    elapsed
}

async fn small_call(client: &Client) -> Duration {
    call(client, "echo", json!({ "text": "hello" })).await
}

/// `scale.warm_calls` small calls on each client and a tenth of a big one, unmeasured, so that
/// none is measured cold.
async fn warm(scale: Scale, clients: &[&Client]) {
    for client in clients {
        for _ in 0..scale.warm_calls {
            small_call(client).await;
        }
        call(client, "big", json!({ "bytes": scale.big_bytes / 10 })).await;
    }
}

/// `scale.rounds` rounds of [`ROUND`] small calls on each client in turn: the times, client by
/// client, in the order they were made.
async fn small_rounds<const N: usize>(scale: Scale, clients: [&Client; N]) -> [Vec<Duration>; N] {
    let mut times: [Vec<Duration>; N] =
        std::array::from_fn(|_| Vec::with_capacity(scale.rounds * ROUND));
    for _ in 0..scale.rounds {
        for (client, times) in clients.iter().zip(&mut times) {
            for _ in 0..ROUND {
                times.push(small_call(client).await);
            }
        }
    }
    times
}

/// `scale.big_calls` big results on each client in turn.
async fn big_calls<const N: usize>(scale: Scale, clients: [&Client; N]) -> [Vec<Duration>; N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::new());
    for _ in 0..scale.big_calls {
        for (client, times) in clients.iter().zip(&mut times) {
            times.push(call(client, "big", json!({ "bytes": scale.big_bytes })).await);
        }
    }
    times
}

/// rmcp's client over a child's stdio, and the child's process id.
async fn stdio_client(command: Command) -> (Client, u32) {
    let (transport, _) =
        rmcp::transport::TokioChildProcess::builder(tokio::process::Command::from(command))
            .stderr(Stdio::null())
            .spawn()
            .expect("the process starts");
    let pid = transport.id().expect("a process id");
    let client = ().serve(transport).await.expect("the client connects");
    (client, pid)
}

/// rmcp's Streamable HTTP client on a reqwest client that keeps its connections.
async fn http_client(url: &str) -> Client {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(url);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport)
        .await
        .unwrap_or_else(|err| panic!("the client connects to {url}: {err}"))
}

/// A relay in a process of its own, as the proxy is: this benchmark run again with `mode`. The
/// process, and `url` through it.
fn apart(mode: &str, url: &str) -> (announcing::KillOnDrop, String) {
    let mut command = Command::new(std::env::current_exe().expect("this binary"));
    command.arg(mode).env(RELAY_TARGET, url);
    announcing::spawn(command, announcing::On::Stderr)
}

// ------------------------------------------------------------------------------------------
// Figures.

/// The `percent`th percentile of sorted `samples` (nearest rank).
fn percentile(samples: &[Duration], percent: usize) -> Duration {
    let rank = (percent * samples.len()).div_ceil(100);
    samples[rank.clamp(1, samples.len()) - 1]
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    percentile(&sorted, 50)
}

/// The median of `these` over the median of `baseline`.
fn ratio_of_medians(these: &[Duration], baseline: &[Duration]) -> f64 {
    median(these).as_secs_f64() / median(baseline).as_secs_f64()
}

fn median_f64(samples: &mut [f64]) -> f64 {
    samples.sort_unstable_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The median, over rounds of [`ROUND`] calls, of what `these` took at p50 beyond `baseline`
/// (zero where they took less).
fn added_per_round(these: &[Duration], baseline: &[Duration]) -> Duration {
    let mut added: Vec<Duration> = these
        .chunks(ROUND)
        .zip(baseline.chunks(ROUND))
        .map(|(these, baseline)| median(these).saturating_sub(median(baseline)))
        .collect();
    added.sort_unstable();
    added[added.len() / 2]
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

/// Process `pid`'s peak resident set so far (`VmHWM`), in bytes.
fn peak_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line");
    kib * 1024
}

/// Each shape's peak resident set on one big result, in a proxy of its own that has made one
/// small call before it, against 1.5 times the result plus 16 MiB. `url` is the server's.
async fn memory(binaries: &binaries::Binaries, scale: Scale, url: &str, floors: &mut Vec<Floor>) {
    let limit = scale.big_bytes * 3 / 2 + (16 << 20);
    let big = || json!({ "bytes": scale.big_bytes });
    let floor = |name, peak| Floor {
        name,
        measured: Measured::Bytes(peak),
        limit: Measured::Bytes(limit),
        met: peak <= limit,
    };
    for (name, args) in [
        (
            "stdio-peak-memory",
            vec!["mcp", "--", path(&binaries.server)],
        ),
        ("url-peak-memory", vec!["mcp", "--url", url]),
    ] {
        let mut command = Command::new(&binaries.fence);
        command.args(args);
        let (client, pid) = stdio_client(command).await;
        small_call(&client).await;
        call(&client, "big", big()).await;
        floors.push(floor(name, peak_bytes(pid)));
    }
    let mut command = Command::new(&binaries.fence);
    command.args(["mcp", "--listen", "127.0.0.1:0", "--url", url]);
    let (proxy, proxied_url) = announcing::spawn(command, announcing::On::Stderr);
    let client = http_client(&proxied_url).await;
    small_call(&client).await;
    call(&client, "big", big()).await;
    floors.push(floor("http-peak-memory", peak_bytes(proxy.id())));
}

fn path(path: &std::path::Path) -> &str {
    path.to_str().expect("the test server's path is UTF-8")
}

/// A table of times, printed as markdown.
struct Table {
    title: String,
    rows: Vec<String>,
}

impl Table {
    fn new(title: &str) -> Table {
        Table {
            title: title.to_owned(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, what: &str, times: &[Duration]) {
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        self.rows.push(format!(
            "| {what} | {} | {:.3} ms | {:.3} ms |",
            sorted.len(),
            percentile(&sorted, 50).as_secs_f64() * 1e3,
            percentile(&sorted, 99).as_secs_f64() * 1e3,
        ));
    }

    fn print(&self) {
        println!("\n{}\n", self.title);
        println!("| path | calls | p50 | p99 |");
        println!("|---|---:|---:|---:|");
        for row in &self.rows {
            println!("{row}");
        }
    }
}

/// One floor, judged.
struct Floor {
    name: &'static str,
    measured: Measured,
    limit: Measured,
    met: bool,
}

enum Measured {
    Time(Duration),
    Ratio(f64),
    Bytes(u64),
}

impl Floor {
    fn at_most(name: &'static str, measured: Duration, limit: Duration) -> Floor {
        Floor {
            name,
            met: measured <= limit,
            measured: Measured::Time(measured),
            limit: Measured::Time(limit),
        }
    }

    fn ratio_at_most(name: &'static str, measured: f64, limit: f64) -> Floor {
        Floor {
            name,
            met: measured <= limit,
            measured: Measured::Ratio(measured),
            limit: Measured::Ratio(limit),
        }
    }

    fn ratio_at_least(name: &'static str, measured: f64, limit: f64) -> Floor {
        Floor {
            name,
            met: measured >= limit,
            measured: Measured::Ratio(measured),
            limit: Measured::Ratio(limit),
        }
    }

    fn met(&self) -> bool {
        self.met
    }
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Measured::Time(time) => write!(f, "{}us", time.as_micros()),
            Measured::Ratio(ratio) => write!(f, "{ratio:.3}x"),
            Measured::Bytes(bytes) => {
                let tenths = bytes * 10 / (1 << 20);
                write!(f, "{}.{}MiB", tenths / 10, tenths % 10)
            }
        }
    }
}

impl Floor {
    /// `floor NAME measured=… limit=…`.
    fn figures(&self) -> String {
        format!(
            "floor {} measured={} limit={}",
            self.name, self.measured, self.limit
        )
    }
}

impl std::fmt::Display for Floor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.met { "ok" } else { "MISS" };
        write!(f, "{} {verdict}", self.figures())
    }
}

mod announcing;
mod binaries;
mod relays;
