//! The hostile server's scenarios over Streamable HTTP, with the same oracle ([`violations`])
//! and the same table of scenarios as the stdio runs in `mod.rs`.
//!
//! `hostile_server.py --http 127.0.0.1:0` serves every scenario at once, each at
//! `/json/SCENARIO/mcp` (the hostile lines answer the POST that asked, as one JSON body: a
//! batch where there are two) and at `/sse/SCENARIO/mcp` (the same lines as `message` events
//! of the POST's event stream). For each SDK, one driver process runs every session of every
//! scenario in seven shapes:
//!
//! | shape | the SDK's client | between it and the server |
//! |---|---|---|
//! | `direct-json`, `direct-sse` | Streamable HTTP | nothing |
//! | `url-json`, `url-sse` | stdio | `fence mcp --url URL` |
//! | `listen-url-json`, `listen-url-sse` | Streamable HTTP | `fence mcp --listen 127.0.0.1:0 --url URL` |
//! | `listen-stdio` | Streamable HTTP | `fence mcp --listen 127.0.0.1:0 -- python3 hostile_server.py SCENARIO` (the stdio server) |
//!
//! Directly, each scenario must show what the table in `mod.rs` says of the SDK's stdio
//! client, but where [`direct_over_http`] says the SDK's HTTP client does otherwise, and why.
//! Through the proxy, in every shape, there must be no violation, and the control must come
//! back with its text.
//!
//! A hostile answer a correct proxy drops leaves the request unanswered. Over stdio the
//! scenario's server exits, and the proxy answers the request with its own error; over HTTP the
//! POST's response ends, and the proxy does the same (an HTTP client that the server itself
//! leaves unanswered waits for its timeout: [`TIMEOUT_SECONDS`] here).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;

use serde_json::{Value, json};

use crate::listening::{Announced, spawn_announcing};
use crate::sdk::http::{KillOnDrop, PATIENCE};
use crate::sdk::{
    Direct, PerSdk, Scenario, Sdk, expected, fence, here, incomplete, installed, python,
    run_plan_with, scenarios_of, strs, violations,
};

/// How long a driver waits for any one request here. Shorter than the stdio runs' wait: an
/// HTTP client whose server leaves a request unanswered waits all of it (see the module docs).
const TIMEOUT_SECONDS: u64 = 5;

/// How many sessions a driver runs at once: most of a session is waiting.
const CONCURRENCY: usize = 8;

/// How the hostile server frames its answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Framing {
    /// One `application/json` body.
    Json,
    /// `message` events of a `text/event-stream`.
    Sse,
}

impl Framing {
    fn name(self) -> &'static str {
        match self {
            Framing::Json => "json",
            Framing::Sse => "sse",
        }
    }
}

/// How a session reaches the hostile server (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Direct(Framing),
    Url(Framing),
    ListenUrl(Framing),
    ListenStdio,
}

const SHAPES: [Shape; 7] = [
    Shape::Direct(Framing::Json),
    Shape::Direct(Framing::Sse),
    Shape::Url(Framing::Json),
    Shape::Url(Framing::Sse),
    Shape::ListenUrl(Framing::Json),
    Shape::ListenUrl(Framing::Sse),
    Shape::ListenStdio,
];

impl Shape {
    fn name(self) -> String {
        match self {
            Shape::Direct(framing) => format!("direct-{}", framing.name()),
            Shape::Url(framing) => format!("url-{}", framing.name()),
            Shape::ListenUrl(framing) => format!("listen-url-{}", framing.name()),
            Shape::ListenStdio => "listen-stdio".to_owned(),
        }
    }
}

fn label(scenario: &Scenario, shape: Shape) -> String {
    format!("{}/{}", scenario.name, shape.name())
}

/// What `sdk`'s HTTP client hands on directly from scenario `name` framed as `framing`: what
/// the table in `mod.rs` says of its stdio client, but where the transport reads the answer
/// otherwise. (`None`: the SDK cannot drive the scenario.)
fn direct_over_http(sdk: Sdk, framing: Framing, name: &str) -> Option<Direct> {
    let stdio = expected(sdk, name)?;
    Some(match (sdk, framing, name) {
        // Over stdio the bad message is a line of its own, refused, and the real answer after
        // it is taken. As JSON, the two messages are one body, a batch, which each SDK refuses
        // whole: the Python SDK reads a JSON body as one message, and the TypeScript SDK parses
        // a batch's messages with a schema that throws at the first bad one. Over SSE, the
        // Python SDK ends the POST's request at the first event it cannot read, with a parse
        // error of its own (which quotes only the bare message), and never reads the next.
        (_, Framing::Json, "retire-bare" | "retire-method")
        | (Sdk::Python, Framing::Sse, "retire-bare" | "retire-method") => Direct::Clean,
        // The Python SDK gives any answer on a POST's event stream the id of that POST's
        // request, whatever id it came with: `"7.0"`, `"7e0"` and `"0x7"`, which `int()` refuses
        // over stdio, answer the request over SSE.
        (Sdk::Python, Framing::Sse, "id-float-string" | "id-exp-string" | "id-hex-string") => {
            Direct::Violation
        }
        _ => stdio,
    })
}

/// Whether the call of scenario `name` must come back with a result through the proxy in
/// `shape` (beside the control): a JSON body holding a bad message and the answer, a batch
/// for a POST that was none, reaches the client as the answer alone (a client that sent no
/// batch refuses one, and waited out its timeout).
fn answers_through(shape: Shape, name: &str) -> bool {
    matches!(
        (shape, name),
        (
            Shape::Url(Framing::Json) | Shape::ListenUrl(Framing::Json),
            "retire-bare" | "retire-method"
        )
    )
}

/// `fence mcp --listen 127.0.0.1:0 ARGS`, its notes dropped: the proxy, and its URL.
fn listen(args: &[&str]) -> (KillOnDrop, String) {
    let mut command = Command::new(fence());
    command.args(["mcp", "--listen", "127.0.0.1:0"]).args(args);
    spawn_announcing(command, Announced::StderrDropped, PATIENCE)
}

/// The reports of every session of `sdk` here, by label (`SCENARIO/SHAPE`): one driver run per
/// SDK and test process.
fn reports(sdk: Sdk) -> &'static HashMap<String, Value> {
    static REPORTS: PerSdk<HashMap<String, Value>> = PerSdk::new();
    REPORTS.get_or_init(sdk, run)
}

/// Starts the hostile HTTP server and the proxies, runs every session in `sdk`'s driver, and
/// stops them all.
fn run(sdk: Sdk) -> HashMap<String, Value> {
    let server = here().join("hostile_server.py").display().to_string();
    let python = python().display().to_string();
    let fence = fence().display().to_string();
    let mut command = Command::new(&python);
    command.args([server.as_str(), "--http", "127.0.0.1:0"]);
    let (_server, base) = spawn_announcing(command, Announced::Stdout, PATIENCE);
    let mut proxies = Vec::new();
    let mut sessions = Vec::new();
    for scenario in scenarios_of(sdk) {
        let url = |framing: Framing| format!("{base}{}/{}/mcp", framing.name(), scenario.name);
        for shape in SHAPES {
            let reached = match shape {
                Shape::Direct(framing) => json!({ "url": url(framing) }),
                Shape::Url(framing) => json!({ "command": [fence, "mcp", "--url", url(framing)] }),
                Shape::ListenUrl(framing) => {
                    let (proxy, at) = listen(&["--url", &url(framing)]);
                    proxies.push(proxy);
                    json!({ "url": at })
                }
                Shape::ListenStdio => {
                    let (proxy, at) = listen(&["--", &python, &server, scenario.name]);
                    proxies.push(proxy);
                    json!({ "url": at })
                }
            };
            let mut session =
                json!({ "label": label(&scenario, shape), "ops": scenario.ops_json() });
            if let (Some(session), Value::Object(reached)) = (session.as_object_mut(), reached) {
                session.extend(reached);
            }
            sessions.push(session);
        }
    }
    let reports = run_plan_with(sdk, &sessions, "http", TIMEOUT_SECONDS, CONCURRENCY);
    drop(proxies);
    reports
}

/// Every scenario of `sdk` in `shape`, judged: directly as [`direct_over_http`] says, through
/// the proxy with no violation at all.
fn check(sdk: Sdk, shape: Shape) {
    if !installed() {
        return;
    }
    let scenarios = scenarios_of(sdk);
    let mut failures = Vec::new();
    for scenario in &scenarios {
        let label = label(scenario, shape);
        let session = reports(sdk)
            .get(&label)
            .unwrap_or_else(|| panic!("no session {label} in the {sdk:?} report"));
        if let Some(why) = incomplete(session, scenario) {
            failures.push(format!(
                "{label}: the report is incomplete ({why}): {session}"
            ));
            continue;
        }
        let found = violations(session);
        match shape {
            Shape::Direct(framing) => match direct_over_http(sdk, framing, scenario.name) {
                Some(Direct::Violation) if found.is_empty() => failures.push(format!(
                    "{label}: directly, the oracle found no violation: {session}"
                )),
                Some(Direct::Clean) if !found.is_empty() => failures.push(format!(
                    "{label}: directly, expected the SDK to refuse the shape, but: {found:?}\n{session}"
                )),
                _ => {}
            },
            _ => {
                if !found.is_empty() {
                    failures.push(format!(
                        "{label}: through the proxy: {found:#?}\n{session}"
                    ));
                } else if scenario.answers || answers_through(shape, scenario.name) {
                    let op = &session["ops"][0];
                    if op["outcome"] != "result" || strs(&op["texts"]).next().is_none() {
                        failures.push(format!("{label}: no text came back: {session}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{sdk:?} {}: {} of {} scenarios:\n\n{}",
        shape.name(),
        failures.len(),
        scenarios.len(),
        failures.join("\n\n")
    );
}

macro_rules! shape_tests {
    ($($test:ident $sdk:ident $shape:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check(Sdk::$sdk, $shape);
            }
        )*
    };
}

shape_tests! {
    python_direct_json Python Shape::Direct(Framing::Json);
    python_direct_sse Python Shape::Direct(Framing::Sse);
    python_through_url_json Python Shape::Url(Framing::Json);
    python_through_url_sse Python Shape::Url(Framing::Sse);
    python_through_listen_url_json Python Shape::ListenUrl(Framing::Json);
    python_through_listen_url_sse Python Shape::ListenUrl(Framing::Sse);
    python_through_listen_stdio Python Shape::ListenStdio;
    typescript_direct_json TypeScript Shape::Direct(Framing::Json);
    typescript_direct_sse TypeScript Shape::Direct(Framing::Sse);
    typescript_through_url_json TypeScript Shape::Url(Framing::Json);
    typescript_through_url_sse TypeScript Shape::Url(Framing::Sse);
    typescript_through_listen_url_json TypeScript Shape::ListenUrl(Framing::Json);
    typescript_through_listen_url_sse TypeScript Shape::ListenUrl(Framing::Sse);
    typescript_through_listen_stdio TypeScript Shape::ListenStdio;
}

/// Prints the matrix over HTTP: for each scenario, SDK and shape, the violations found. By
/// hand: `cargo test -p fence-mcp --test proxy sdk::hostile_http::matrix -- --ignored --nocapture`.
#[test]
#[ignore = "prints the matrix; run by hand"]
fn matrix() {
    if !installed() {
        return;
    }
    let mut table = String::from("| scenario | SDK |");
    for shape in SHAPES {
        let _ = write!(table, " {} |", shape.name());
    }
    let _ = writeln!(table, "\n|---|---|{}", "---|".repeat(SHAPES.len()));
    for sdk in [Sdk::Python, Sdk::TypeScript] {
        for scenario in scenarios_of(sdk) {
            let _ = write!(table, "| {} | {sdk:?} |", scenario.name);
            for shape in SHAPES {
                let session = &reports(sdk)[&label(&scenario, shape)];
                let found = violations(session);
                let outcome = session["ops"][0]["outcome"].as_str().unwrap_or("none");
                if found.is_empty() {
                    let _ = write!(table, " clean ({outcome}) |");
                } else {
                    let _ = write!(table, " VIOLATION ×{} ({outcome}) |", found.len());
                }
            }
            table.push('\n');
        }
    }
    println!("{table}");
}

/// Reads each body as Python's `json.loads` does: for each, its messages' ids and every string
/// in them (keys too; a lone surrogate, which `json.loads` keeps, as `?`), or why it cannot.
const READ_AS_JSON_LOADS: &str = r#"
import json, sys

def strings(value, out):
    if isinstance(value, str):
        out.append(value.encode("utf-8", "replace").decode("utf-8"))
    elif isinstance(value, dict):
        for key, item in value.items():
            strings(key, out)
            strings(item, out)
    elif isinstance(value, list):
        for item in value:
            strings(item, out)
    return out

read = []
for body in json.load(sys.stdin):
    try:
        message = json.loads(body)
    except ValueError as err:
        read.append({"unreadable": str(err)})
        continue
    messages = message if isinstance(message, list) else [message]
    read.append([
        {"id": m.get("id") if isinstance(m, dict) else None, "strings": strings(m, [])}
        for m in messages
    ])
print(json.dumps(read))
"#;

/// `fence mcp --listen -- hostile_server.py SCENARIO` in 2026-07-28: a stateless client's
/// `tools/call`, with an id the hostile server would not answer as written (a string), gets one
/// of the proxy's (a number) on the way there, and every scenario's answer, or the proxy's
/// error in its place, comes back with the client's id; read as `json.loads` reads it (the last
/// of duplicate keys), no string in it holds a live marker but the fence of the tool's text.
#[tokio::test(flavor = "multi_thread")]
async fn stateless_requests_through_listen_stdio_get_their_ids_back_from_a_hostile_server() {
    if !installed() {
        return;
    }
    let server = here().join("hostile_server.py").display().to_string();
    let python = python().display().to_string();
    let call = json!({
        "jsonrpc": "2.0", "id": "mine", "method": "tools/call",
        "params": { "name": "fetch", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        } },
    });
    let client = reqwest::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap();
    let mut bodies = Vec::new();
    let scenarios = scenarios_of(Sdk::TypeScript);
    for scenario in &scenarios {
        let (_proxy, url) = listen(&["--", &python, &server, scenario.name]);
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .body(call.to_string())
            .send()
            .await
            .unwrap_or_else(|err| panic!("{}: {err}", scenario.name));
        let body = response.bytes().await.expect("the body");
        bodies.push(String::from_utf8(body.to_vec()).expect("UTF-8"));
    }
    let mut reader = Command::new(&python)
        .args(["-c", READ_AS_JSON_LOADS])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    std::io::Write::write_all(
        &mut reader.stdin.take().unwrap(),
        json!(bodies).to_string().as_bytes(),
    )
    .unwrap();
    let output = reader.wait_with_output().unwrap();
    let read: Vec<Value> = serde_json::from_slice(&output.stdout).expect("what python read");
    assert_eq!(read.len(), bodies.len(), "python read every body");
    let mut problems = String::new();
    for ((scenario, body), read) in scenarios.iter().zip(&bodies).zip(&read) {
        let messages = read.as_array().map(Vec::as_slice).unwrap_or_default();
        if messages.is_empty() {
            let _ = writeln!(
                problems,
                "{}: nothing json.loads reads: {body}",
                scenario.name
            );
        }
        for message in messages {
            if message["id"] != "mine" {
                let _ = writeln!(problems, "{}: not the client's id: {body}", scenario.name);
            }
            // A string may hold markers only as the fence the tool's text is in.
            let fenced = |text: &str| {
                fence_runtime::parse(text).is_ok_and(|block| block.source() == "tool:fetch")
            };
            if strs(&message["strings"]).any(|text| crate::sdk::live(text) && !fenced(text)) {
                let _ = writeln!(problems, "{}: a live marker: {body}", scenario.name);
            }
        }
    }
    assert!(problems.is_empty(), "{problems}");
}
