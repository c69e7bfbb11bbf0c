//! HTTP shapes around an answer that the official SDKs read and a proxy might not: each of
//! `hostile_server.py --http`'s HTTP modes (its module docs say what each writes) with the
//! `control` scenario (an unfenced answer) and `error-forged` (an error whose message forges
//! markers), each SDK's HTTP client directly and through `fence mcp --listen … --url`.
//!
//! Directly, each case must show what [`direct`] says (a violation where the SDK reads the
//! answer, so the shape is seen to carry it; clean where it refuses it); through the proxy,
//! none, with the oracle of [`crate::sdk`]. Before the proxy read these shapes as the SDKs
//! do, the BOM, `get-*` and `status-*` modes carried the answer through it unfenced.

use std::collections::HashMap;
use std::process::Command;

use serde_json::{Value, json};

use crate::listening::{Announced, spawn_announcing};
use crate::sdk::http::{KillOnDrop, PATIENCE};
use crate::sdk::{
    Direct, PerSdk, Sdk, fence, here, installed, python, run_plan_with, scenario, strs, violations,
};

/// How long a driver waits for any one request: an answer the SDK never reads (a GET stream
/// it refuses) is waited out.
const TIMEOUT_SECONDS: u64 = 4;

/// The HTTP modes, as `hostile_server.py` names them.
const MODES: [&str; 7] = [
    "bom",
    "get-plain",
    "get-charset",
    "get-none",
    "status-401",
    "status-400-seq",
    "status-500-plain",
];

/// The scenarios each mode runs.
const SCENARIOS: [&str; 2] = ["control", "error-forged"];

/// What `sdk`'s HTTP client hands on directly from `scenario` in `mode` (`None`: it depends on
/// timing).
fn direct(sdk: Sdk, mode: &str, scenario: &str) -> Option<Direct> {
    Some(match (sdk, mode, scenario) {
        // The Python SDK fails the request at the `202`, unless the GET stream, which it reads
        // (its type is `text/event-stream`), has delivered the answer first.
        (Sdk::Python, "get-charset", _) => return None,
        // An error status's body is an error to both SDKs, never a result: the control's text,
        // which forges nothing, is shown only as an error's text. The Python SDK refuses a
        // `202` for a request, and reads a JSON-RPC error from an error status only when its
        // type starts with `application/json`.
        (_, "status-401" | "status-400-seq" | "status-500-plain", "control")
        | (Sdk::Python, "get-plain" | "get-none", _)
        | (Sdk::Python, "status-500-plain", "error-forged") => Direct::Clean,
        _ => Direct::Violation,
    })
}

/// Whether the call must come back through the proxy with its result, fenced: where the SDK
/// reads the answer's shape at all.
fn answered_through(sdk: Sdk, mode: &str, scenario: &str) -> bool {
    scenario == "control"
        && match mode {
            "bom" => true,
            "get-plain" | "get-charset" | "get-none" => sdk == Sdk::TypeScript,
            _ => false,
        }
}

/// The reports of every session of `sdk` here, by label (`MODE/SCENARIO/direct|proxied`).
fn reports(sdk: Sdk) -> &'static HashMap<String, Value> {
    static REPORTS: PerSdk<HashMap<String, Value>> = PerSdk::new();
    REPORTS.get_or_init(sdk, run)
}

fn run(sdk: Sdk) -> HashMap<String, Value> {
    let server = here().join("hostile_server.py").display().to_string();
    let mut command = Command::new(python());
    command.args([server.as_str(), "--http", "127.0.0.1:0"]);
    let (_server, base) = spawn_announcing(command, Announced::Stdout, PATIENCE);
    let mut proxies: Vec<KillOnDrop> = Vec::new();
    let mut sessions = Vec::new();
    for mode in MODES {
        for name in SCENARIOS {
            let url = format!("{base}{mode}/{name}/mcp");
            let mut proxy = Command::new(fence());
            proxy.args(["mcp", "--listen", "127.0.0.1:0", "--url", &url]);
            let (proxy, at) = spawn_announcing(proxy, Announced::StderrDropped, PATIENCE);
            proxies.push(proxy);
            let ops = scenario(name).ops_json();
            for (shape, reach) in [("direct", url.clone()), ("proxied", at)] {
                sessions.push(json!({
                    "label": format!("{mode}/{name}/{shape}"),
                    "url": reach,
                    "ops": ops,
                }));
            }
        }
    }
    let reports = run_plan_with(sdk, &sessions, "http-shapes", TIMEOUT_SECONDS, 8);
    drop(proxies);
    reports
}

fn check(sdk: Sdk) {
    if !installed() {
        return;
    }
    let mut failures = Vec::new();
    for mode in MODES {
        for name in SCENARIOS {
            for shape in ["direct", "proxied"] {
                let label = format!("{mode}/{name}/{shape}");
                let Some(session) = reports(sdk).get(&label) else {
                    failures.push(format!("{label}: no report"));
                    continue;
                };
                let found = violations(session);
                match (shape, direct(sdk, mode, name)) {
                    ("direct", Some(Direct::Violation)) if found.is_empty() => failures.push(
                        format!("{label}: directly, the oracle found no violation: {session}"),
                    ),
                    ("direct", Some(Direct::Clean)) if !found.is_empty() => failures.push(format!(
                        "{label}: directly, expected the SDK to refuse the shape, but: {found:?}"
                    )),
                    ("proxied", _) if !found.is_empty() => {
                        failures.push(format!("{label}: through the proxy: {found:#?}\n{session}"));
                    }
                    ("proxied", _)
                        if answered_through(sdk, mode, name)
                            && (session["ops"][0]["outcome"] != "result"
                                || strs(&session["ops"][0]["texts"]).next().is_none()) =>
                    {
                        failures.push(format!("{label}: no fenced text came back: {session}"));
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{sdk:?}: {} failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn python_sdk() {
    check(Sdk::Python);
}

#[test]
fn typescript_sdk() {
    check(Sdk::TypeScript);
}
