//! The official Python SDK's Streamable HTTP client (`http_driver.py`) through `fence mcp`, each
//! run compared with the same driver's direct run against the same server (the SDK adds members
//! of its own, such as `resultType`, so a proxied Python report is only compared with a direct
//! Python report):
//!
//! - `fence mcp --listen 127.0.0.1:0 --url URL` to the SDK's server (`http_server.py`) in each
//!   of its four modes, and to the rmcp test server's HTTP mode in each of its four;
//! - `fence mcp --listen 127.0.0.1:0 -- mcp_test_server`, the rmcp test server on stdio behind
//!   the proxy, compared with the driver directly against that server's stateful HTTP mode.
//!
//! (`fence mcp --url URL` alone serves stdio, which the driver does not speak: tests/proxy's
//! `http_proxied` drives that shape with rmcp's stdio client.)
//!
//! The oracle: the proxied report is the direct one as the proxy rewrites it
//! (`oracle.rs`: each content text fenced byte-exact under `tool:<name>`,
//! `structuredContent` and errors neutralised, the server's words about itself neutralised,
//! everything else identical), and no string anywhere in the proxied report (keys too) holds
//! a live marker, but for the fenced blocks' own markers around neutralised content.

use std::process::Command;

use fence_runtime::parse;
use serde_json::Value;

use crate::listening::{Announced, spawn_announcing};
use crate::oracle::assert_fenced_run;
use crate::sdk::http::{
    KillOnDrop, PATIENCE, python_http_driver, python_http_server, ts_http_driver,
    ts_http_driver_with,
};
use crate::sdk::{fence, installed, live, test_server};

/// `fence mcp --listen 127.0.0.1:0 ARGS`: the proxy, and the URL it names on stderr.
fn listen(args: &[&std::ffi::OsStr]) -> (KillOnDrop, String) {
    let mut command = Command::new(fence());
    command.args(["mcp", "--listen", "127.0.0.1:0"]).args(args);
    spawn_announcing(command, Announced::Stderr, PATIENCE)
}

/// `mcp_test_server --http 127.0.0.1:0 FLAGS`: the server, and its URL.
fn rmcp_http_server(flags: &[&str]) -> (KillOnDrop, String) {
    let mut command = Command::new(test_server());
    command.args(["--http", "127.0.0.1:0"]).args(flags);
    spawn_announcing(command, Announced::Stdout, PATIENCE)
}

/// Every string in `value`, object keys too, with where it is.
fn strings<'a>(value: &'a Value, at: &str, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(text) => out.push((at.to_owned(), text)),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                strings(item, &format!("{at}/{index}"), out);
            }
        }
        Value::Object(members) => {
            for (key, value) in members {
                let at = format!("{at}/{key}");
                out.push((format!("{at} (the key)"), key));
                strings(value, &at, out);
            }
        }
        _ => {}
    }
}

/// Where `report` holds a live marker: in a string that is not one fenced block, or in a fenced
/// block's content. A `resource_link` content block is left out: the proxy passes it on
/// unchanged, as docs/mcp-proxy.md says (the test server's `embedded` has one whose
/// `description` forges a marker and says it "is kept as it is"); [`check`] sees it identical
/// to the direct one.
fn live_markers(report: &Value) -> Vec<String> {
    let mut report = report.clone();
    for result in report
        .as_object_mut()
        .into_iter()
        .flat_map(|members| members.values_mut())
    {
        if let Some(Value::Array(blocks)) = result.get_mut("content") {
            blocks.retain(|block| block["type"] != "resource_link");
        }
    }
    let mut all = Vec::new();
    strings(&report, "", &mut all);
    all.into_iter()
        .filter(|(_, text)| match parse(text) {
            Ok(block) => live(block.content()),
            Err(_) => live(text),
        })
        .map(|(at, text)| format!("{at}: {text:?}"))
        .collect()
}

/// The driver against `url` directly and through `fence mcp --listen 127.0.0.1:0 ARGS`, judged
/// by the oracle (see the module's docs), once `adjust` has made of the proxied report what
/// the direct server would have said (for what differs between two servers, not the proxy).
fn check(case: &str, url: &str, args: &[&std::ffi::OsStr], adjust: fn(&mut Value)) {
    check_with(python_http_driver, case, url, args, adjust);
}

/// [`check`] with the driver `drive` (the Python or the TypeScript SDK's).
fn check_with(
    drive: fn(&str) -> Value,
    case: &str,
    url: &str,
    args: &[&std::ffi::OsStr],
    adjust: fn(&mut Value),
) {
    let direct = drive(url);
    assert!(
        !live_markers(&direct).is_empty(),
        "{case}: directly, the forged markers arrive live: {direct}"
    );
    let (_proxy, proxy_url) = listen(args);
    let mut proxied = drive(&proxy_url);
    assert_eq!(proxied["url"].as_str(), Some(proxy_url.as_str()));
    proxied["url"] = direct["url"].clone();
    adjust(&mut proxied);
    assert_fenced_run(case, &direct, &proxied);
    let found = live_markers(&proxied);
    assert!(
        found.is_empty(),
        "{case}: live markers through the proxy:\n  {}",
        found.join("\n  ")
    );
}

fn check_python(stateless: bool, json: bool) {
    if !installed() {
        return;
    }
    let (_server, url) = python_http_server(stateless, json);
    check(
        &format!("http_server.py stateless={stateless} json={json} through --listen --url"),
        &url,
        &["--url".as_ref(), url.as_ref()],
        |_| {},
    );
}

fn check_rmcp(flags: &[&str]) {
    if !installed() {
        return;
    }
    let (_server, url) = rmcp_http_server(flags);
    check(
        &format!("mcp_test_server --http {flags:?} through --listen --url"),
        &url,
        &["--url".as_ref(), url.as_ref()],
        |_| {},
    );
}

#[test]
fn python_server_stateful_sse_through_listen_url() {
    check_python(false, false);
}

#[test]
fn python_server_stateful_json_through_listen_url() {
    check_python(false, true);
}

#[test]
fn python_server_stateless_sse_through_listen_url() {
    check_python(true, false);
}

#[test]
fn python_server_stateless_json_through_listen_url() {
    check_python(true, true);
}

#[test]
fn rmcp_server_stateful_sse_through_listen_url() {
    check_rmcp(&[]);
}

#[test]
fn rmcp_server_stateful_json_through_listen_url() {
    check_rmcp(&["--json"]);
}

#[test]
fn rmcp_server_stateless_sse_through_listen_url() {
    check_rmcp(&["--stateless"]);
}

#[test]
fn rmcp_server_stateless_json_through_listen_url() {
    check_rmcp(&["--stateless", "--json"]);
}

/// The test server on stdio says, in `tools/list`, what its HTTP mode does not (the test
/// server's docs): `execution.taskSupport` on `task_ext` and `legacy_task`. Checked, then
/// removed.
fn without_execution(report: &mut Value) {
    for tool in report["tools/list"]["tools"]
        .as_array_mut()
        .expect("a list of tools")
    {
        let support = match tool["name"].as_str() {
            Some("task_ext") => "required",
            Some("legacy_task") => "optional",
            _ => continue,
        };
        let execution = tool
            .as_object_mut()
            .and_then(|tool| tool.remove("execution"));
        assert_eq!(
            execution,
            Some(serde_json::json!({ "taskSupport": support })),
            "{tool}"
        );
    }
}

/// The stdio test server behind `--listen -- SERVER`; directly, the driver speaks to the same
/// server's stateful HTTP mode (the driver speaks HTTP only), whose results are the stdio
/// server's but for [`without_execution`].
#[test]
fn rmcp_stdio_server_through_listen() {
    if !installed() {
        return;
    }
    let (_server, url) = rmcp_http_server(&[]);
    check(
        "mcp_test_server on stdio through --listen -- SERVER",
        &url,
        &["--".as_ref(), test_server().as_os_str()],
        without_execution,
    );
}

/// The TypeScript SDK's Streamable HTTP client, a third client with its own reading of event
/// streams, through `--listen --url` to the Python SDK's server (SSE and JSON) and to rmcp's.
#[test]
fn typescript_client_through_listen_url() {
    if !installed() {
        return;
    }
    for (stateless, json) in [(false, false), (true, true)] {
        let (_server, url) = python_http_server(stateless, json);
        check_with(
            ts_http_driver,
            &format!("TypeScript client, http_server.py stateless={stateless} json={json}"),
            &url,
            &["--url".as_ref(), url.as_ref()],
            |_| {},
        );
    }
    let (_server, url) = rmcp_http_server(&[]);
    check_with(
        ts_http_driver,
        "TypeScript client, mcp_test_server --http",
        &url,
        &["--url".as_ref(), url.as_ref()],
        |_| {},
    );
}

/// The TypeScript client through `--listen -- SERVER`, against the same server over HTTP
/// directly.
#[test]
fn typescript_client_through_listen_to_a_stdio_server() {
    if !installed() {
        return;
    }
    let (_server, url) = rmcp_http_server(&[]);
    check_with(
        ts_http_driver,
        "TypeScript client, mcp_test_server on stdio through --listen -- SERVER",
        &url,
        &["--".as_ref(), test_server().as_os_str()],
        |report| {
            without_execution(report);
            // The stdio server's vendor field on the list, which its HTTP mode does not write
            // and the TypeScript SDK keeps (the Python SDK drops it).
            let vendor = report["tools/list"]
                .as_object_mut()
                .and_then(|list| list.remove("x-vendor"));
            assert!(vendor.is_some(), "the stdio server's vendor field arrives");
        },
    );
}

/// The TypeScript client never ends its session when it closes (no DELETE), as a conformance
/// run showed (32 server processes left, 2.3 GiB). Behind `--listen -- SERVER`, each of five
/// runs of it is served, no more than `--max-sessions` processes ever run, and once the
/// sessions have idled for `--session-idle`, every process is ended: none is left.
#[cfg(target_os = "linux")]
#[test]
fn typescript_clients_that_never_delete_their_sessions_leave_no_process() {
    if !installed() {
        return;
    }
    let args: [&std::ffi::OsStr; 6] = [
        "--session-idle".as_ref(),
        "1".as_ref(),
        "--max-sessions".as_ref(),
        "8".as_ref(),
        "--".as_ref(),
        test_server().as_os_str(),
    ];
    let (proxy, url) = listen(&args);
    let pid = proxy.id();
    for run in 0..5 {
        let report = ts_http_driver_with(&url, &["--keep-session"]);
        assert!(
            report["tools/list"]["tools"].is_array(),
            "run {run}: {report}"
        );
        let running = crate::common::children_of(pid).len();
        assert!((1..=8).contains(&running), "run {run}: {running} processes");
    }
    let deadline = std::time::Instant::now() + PATIENCE;
    while !crate::common::children_of(pid).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "left running: {:?}",
            crate::common::children_of(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
