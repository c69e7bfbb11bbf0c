//! `fence mcp` over Streamable HTTP, with rmcp's clients: the fixed script ([`run_script`])
//! run directly and through the proxy, compared on raw JSON.
//!
//! - `fence mcp --url URL`: rmcp's client over stdio to the proxy, the test server's HTTP mode
//!   upstream, in each of its four modes;
//! - `fence mcp --listen 127.0.0.1:0 --url URL`: rmcp's HTTP client to the proxy, the same
//!   four upstreams;
//! - `fence mcp --listen 127.0.0.1:0 -- SERVER`: rmcp's HTTP client to the proxy, the stdio
//!   test server behind it (compared with rmcp's stdio client to that server directly), and
//!   a session per client with a server process of its own, ended with the session.
//!
//! The oracle ([`assert_proxied`], with `oracle.rs`): the proxied run is the
//! direct one with every text block's `text`, and every embedded resource's `text`, replaced
//! by exactly `fence_runtime`'s fenced block of it under `tool:<the tool's name>`;
//! `structuredContent` and JSON-RPC errors with every string neutralised; `initialize`'s
//! instructions and each tool's `title`, `description` and `annotations.title` neutralised
//! (docs/mcp-proxy.md); everything else identical.

// Roots are deprecated by rmcp 3.11 (SEP-2577), yet clients and servers use them today.
#![allow(deprecated)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use fence_runtime::{Source, parse};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;

use crate::common::{PATIENCE, alive, binaries, gone_within, spawn_piped};
use crate::http_direct::{
    Announced, HttpClient, HttpMode, KillOnDrop, SCRIPT, rmcp_http_client, run_script,
    spawn_announcing, start_http_server,
};
use crate::oracle::assert_fenced_run;

type Client = RunningService<RoleClient, HttpClient>;

/// `fence mcp --listen 127.0.0.1:0 ARGS`: the proxy, and the URL it names on stderr.
fn listen<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> (KillOnDrop, String) {
    let mut command = Command::new(&binaries().fence);
    command.args(["mcp", "--listen", "127.0.0.1:0"]).args(args);
    let (proxy, url) = spawn_announcing(command, Announced::Stderr, PATIENCE);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    (proxy, url)
}

/// rmcp's client over stdio to `program ARGS`, initialized; the process is killed when the
/// [`tokio::process::Child`] is dropped.
async fn rmcp_stdio_client(program: &Path, args: &[&str]) -> (Client, tokio::process::Child) {
    let mut child = spawn_piped(tokio::process::Command::new(program).args(args));
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    match tokio::time::timeout(PATIENCE, HttpClient.serve(transport)).await {
        Ok(Ok(client)) => (client, child),
        Ok(Err(err)) => panic!("the client connects to {}: {err}", program.display()),
        Err(elapsed) => panic!("no initialize answer from {}: {elapsed}", program.display()),
    }
}

/// [`run_script`], and `"initialize"`: the server's answer to `initialize` as rmcp's client
/// kept it.
async fn script(client: &Client, roots: bool) -> Value {
    let mut results = run_script(client, roots).await;
    results["initialize"] =
        serde_json::to_value(client.peer_info().expect("the client is initialized")).unwrap();
    results
}

/// The oracle: `proxied` is the direct run as the proxy rewrites it
/// ([`assert_fenced_run`]), and each text block of a tool's result is one block under
/// `tool:<its name>`.
fn assert_proxied(case: &str, direct: &Value, proxied: &Value) {
    assert_fenced_run(case, direct, proxied);
    // Byte-exact fencing of the text blocks implies this; said once more, plainly.
    for (tool, _) in SCRIPT {
        for block in proxied[*tool]["content"].as_array().into_iter().flatten() {
            if let Some(text) = block["text"].as_str() {
                let read = parse(text).unwrap_or_else(|err| panic!("{case}: {tool}: {err}"));
                assert_eq!(read.source(), Source::tool(tool).as_str(), "{case}");
            }
        }
    }
}

/// The proxy's two shapes with an HTTP upstream.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `fence mcp --url URL`, rmcp's client over stdio.
    Url,
    /// `fence mcp --listen 127.0.0.1:0 --url URL`, rmcp's HTTP client.
    ListenUrl,
}

/// What keeps a proxy running for as long as a test needs it.
enum Running {
    #[allow(dead_code, reason = "held, to be killed when dropped")]
    Stdio(tokio::process::Child),
    #[allow(dead_code, reason = "held, to be killed when dropped")]
    Listening(KillOnDrop),
}

/// A client through the proxy in `shape` to the server at `url`.
async fn through(shape: Shape, url: &str) -> (Client, Running) {
    match shape {
        Shape::Url => {
            let (client, child) =
                rmcp_stdio_client(&binaries().fence, &["mcp", "--url", url]).await;
            (client, Running::Stdio(child))
        }
        Shape::ListenUrl => {
            let (proxy, proxy_url) = listen(["--url", url]);
            (
                rmcp_http_client(&proxy_url).await,
                Running::Listening(proxy),
            )
        }
    }
}

async fn check_upstream(mode: HttpMode, shape: Shape) {
    let case = format!("the test server {mode:?} through {shape:?}");
    let (_server, url) = start_http_server(mode);
    let direct = rmcp_http_client(&url).await;
    let want = script(&direct, mode.stateful()).await;
    direct.cancel().await.expect("the client closes");

    let (client, _proxy) = through(shape, &url).await;
    let got = script(&client, mode.stateful()).await;
    assert_proxied(&case, &want, &got);
    client.cancel().await.expect("the client closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn url_stateful_sse() {
    check_upstream(HttpMode::StatefulSse, Shape::Url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn url_stateful_json() {
    check_upstream(HttpMode::StatefulJson, Shape::Url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn url_stateless_sse() {
    check_upstream(HttpMode::StatelessSse, Shape::Url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn url_stateless_json() {
    check_upstream(HttpMode::StatelessJson, Shape::Url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_stateful_sse() {
    check_upstream(HttpMode::StatefulSse, Shape::ListenUrl).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_stateful_json() {
    check_upstream(HttpMode::StatefulJson, Shape::ListenUrl).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_stateless_sse() {
    check_upstream(HttpMode::StatelessSse, Shape::ListenUrl).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_stateless_json() {
    check_upstream(HttpMode::StatelessJson, Shape::ListenUrl).await;
}

/// `fence mcp --listen … -- SERVER`: rmcp's stdio client to the server directly, its HTTP
/// client through the proxy.
#[tokio::test(flavor = "multi_thread")]
async fn listen_stdio_server() {
    let server = &binaries().server;
    let (direct, _direct_server) = rmcp_stdio_client(server, &[]).await;
    let want = script(&direct, true).await;
    direct.cancel().await.expect("the client closes");

    let (_proxy, url) = listen([OsStr::new("--"), server.as_os_str()]);
    let client = rmcp_http_client(&url).await;
    let got = script(&client, true).await;
    assert_proxied("the stdio test server through --listen", &want, &got);
    client.cancel().await.expect("the client closes");
}

/// The process id the test server's `pid` tool names, read from its fenced text.
async fn pid_of(client: &Client) -> u32 {
    let result = tokio::time::timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new("pid")),
    )
    .await
    .expect("pid answers in time")
    .expect("pid answers");
    let result = serde_json::to_value(result).unwrap();
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text block: {result}"));
    let block = parse(text).unwrap_or_else(|err| panic!("{err}: {text}"));
    assert_eq!(block.source(), Source::tool("pid").as_str());
    block
        .content()
        .parse()
        .unwrap_or_else(|err| panic!("{err}: {text}"))
}

/// Two clients of `--listen -- SERVER` at once: each session has a server process of its own,
/// both run the whole script concurrently (the server asking each client for its roots), and a
/// session's process ends when its client deletes the session (rmcp's client does on close),
/// the other's living on.
#[tokio::test(flavor = "multi_thread")]
async fn listen_stdio_server_a_process_per_session() {
    let server = &binaries().server;
    let (direct, _direct_server) = rmcp_stdio_client(server, &[]).await;
    let want = script(&direct, true).await;
    direct.cancel().await.expect("the client closes");

    let (proxy, url) = listen([OsStr::new("--"), server.as_os_str()]);
    let (first, second) = tokio::join!(rmcp_http_client(&url), rmcp_http_client(&url));
    let (first_pid, second_pid) = tokio::join!(pid_of(&first), pid_of(&second));
    assert_ne!(first_pid, second_pid, "a server process per session");
    for pid in [first_pid, second_pid] {
        assert_ne!(pid, proxy.id(), "the server is not the proxy");
        assert!(alive(pid), "{pid} is running");
    }

    let (first_run, second_run) = tokio::join!(script(&first, true), script(&second, true));
    assert_proxied("the first of two sessions", &want, &first_run);
    assert_proxied("the second of two sessions", &want, &second_run);
    assert_eq!(
        pid_of(&first).await,
        first_pid,
        "the session keeps its process"
    );
    assert_eq!(
        pid_of(&second).await,
        second_pid,
        "the session keeps its process"
    );

    first.cancel().await.expect("the client closes");
    assert!(
        gone_within(first_pid, PATIENCE),
        "the first session's server {first_pid} outlived the session"
    );
    assert!(alive(second_pid), "the second session's server lives on");
    assert_eq!(
        pid_of(&second).await,
        second_pid,
        "the second session goes on"
    );
    let again = script(&second, true).await;
    assert_proxied("the second session, alone", &want, &again);

    second.cancel().await.expect("the client closes");
    assert!(
        gone_within(second_pid, PATIENCE),
        "the second session's server {second_pid} outlived the session"
    );
}

/// rmcp's client in the 2026-07-28 protocol: `server/discover` rather than `initialize`, no
/// session, every request carrying its own metadata (and, over HTTP, its `Mcp-Method` and
/// `Mcp-Name` headers), over `transport`.
async fn modern_client<T, E, A>(what: &str, transport: T) -> Client
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    match tokio::time::timeout(
        PATIENCE,
        HttpClient.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    {
        Ok(Ok(client)) => client,
        Ok(Err(err)) => panic!("the 2026-07-28 client connects to {what}: {err}"),
        Err(elapsed) => panic!("no discover answer from {what}: {elapsed}"),
    }
}

fn modern_http(url: &str) -> impl Future<Output = Client> + '_ {
    modern_client(
        url,
        rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned()),
    )
}

/// The 2026-07-28 protocol, stateless, through every shape: rmcp's client directly to the test
/// server's HTTP mode, then through `--url` (the client on stdio: the proxy sends the
/// protocol's headers itself), `--listen --url`, and `--listen -- SERVER` (the stateless
/// requests' own server process).
#[tokio::test(flavor = "multi_thread")]
async fn the_stateless_protocol_through_every_shape() {
    let (_server, url) = start_http_server(HttpMode::StatefulSse);
    let direct = modern_http(&url).await;
    assert_eq!(
        direct
            .peer_info()
            .map(|info| info.protocol_version.to_string()),
        Some("2026-07-28".to_owned()),
        "the server speaks 2026-07-28"
    );
    let want = run_script(&direct, false).await;
    direct.cancel().await.expect("the client closes");

    let mut proxy = tokio::process::Command::new(&binaries().fence)
        .args(["mcp", "--url", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the proxy starts");
    let transport = (proxy.stdout.take().unwrap(), proxy.stdin.take().unwrap());
    let client = modern_client("fence mcp --url", transport).await;
    assert_proxied(
        "2026-07-28 through --url",
        &want,
        &run_script(&client, false).await,
    );
    client.cancel().await.expect("the client closes");

    let (_front, front_url) = listen(["--url", &url]);
    let client = modern_http(&front_url).await;
    assert_proxied(
        "2026-07-28 through --listen --url",
        &want,
        &run_script(&client, false).await,
    );
    client.cancel().await.expect("the client closes");

    // The stdio server says more than its HTTP mode (see the test server's docs): directly,
    // it is the stdio server too.
    let mut server = tokio::process::Command::new(&binaries().server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let transport = (server.stdout.take().unwrap(), server.stdin.take().unwrap());
    let direct = modern_client("the stdio test server", transport).await;
    let want = run_script(&direct, false).await;
    direct.cancel().await.expect("the client closes");
    let (_front, front_url) = listen([OsStr::new("--"), binaries().server.as_os_str()]);
    let client = modern_http(&front_url).await;
    let got = run_script(&client, false).await;
    assert_proxied("2026-07-28 through --listen -- SERVER", &want, &got);
    client.cancel().await.expect("the client closes");
}
