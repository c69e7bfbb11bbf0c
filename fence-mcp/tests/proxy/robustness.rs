//! What the proxy does when a side misbehaves or goes away, spoken to line by line.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Lines, PATIENCE};

/// The code of a JSON-RPC error answer, and its message.
fn error_of(answer: &Value) -> (i64, String) {
    let error = &answer["error"];
    (
        error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {answer}")),
        error["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn the_upstream_crashing_mid_call_answers_every_waiting_request_and_the_proxy_exits_non_zero() {
    let mut proxy = Lines::proxy(&["--grace-ms", "500"]);
    proxy.call(1, "slow", &json!({}));
    proxy.call(2, "echo", &json!({ "text": "in between" }));
    assert_eq!(proxy.tool_text(2).1, "in between");
    proxy.call(3, "crash", &json!({ "after_ms": 50 }));
    let mut errors = Vec::new();
    while let Some(line) = proxy.next_line() {
        let message: Value = serde_json::from_slice(&line).unwrap();
        if message.get("method").is_none() {
            errors.push(message);
        }
    }
    errors.sort_by_key(|answer| answer["id"].as_u64());
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (answer, (id, asked)) in errors
        .iter()
        .zip([(1, "tools/call `slow`"), (3, "tools/call `crash`")])
    {
        assert_eq!(answer["id"], id);
        let (code, message) = error_of(answer);
        assert_eq!(code, -32000);
        assert_eq!(
            message,
            format!(
                "fence mcp: fence-mcp-test-server closed its output before answering {asked}: it exited or crashed (its stderr may say why)"
            )
        );
    }
    assert_eq!(
        proxy.wait(PATIENCE).code(),
        Some(3),
        "the server's own status"
    );
}

#[test]
fn a_server_exiting_with_0_while_requests_wait_still_makes_the_proxy_exit_non_zero() {
    let mut proxy = Lines::proxy(&[]);
    proxy.call(1, "slow", &json!({}));
    proxy.call(2, "crash", &json!({ "after_ms": 50, "status": 0 }));
    let (code, _) = error_of(&proxy.answer(1));
    assert_eq!(code, -32000);
    assert_eq!(proxy.wait(PATIENCE).code(), Some(1));
}

#[test]
fn garbage_from_the_upstream_is_reported_and_never_reaches_the_client() {
    let mut proxy = Lines::proxy(&[]);
    proxy.call(1, "garbage", &json!({}));
    let answer = proxy.next();
    assert_eq!(
        answer["id"], 1,
        "the first line after the garbage is the answer: {answer}"
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        fence_runtime::parse(text).unwrap().content(),
        "answered after the garbage"
    );
    let stderr = proxy.stderr_until("invalid utf-8");
    for said in [
        r#"dropped a line from the upstream that is not a JSON-RPC message (expected ident at line 1 column 2): "this line is not JSON""#,
        r#"(EOF while parsing a value at line 1 column 32): "{\"jsonrpc\":\"2.0\",\"unterminated\":""#,
        "dropped an answer with the id 424242, which the client has no request waiting on",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert!(
        stderr
            .lines()
            .all(|line| line.starts_with("fence mcp (fence-mcp-test-server): ")),
        "{stderr}"
    );
    proxy.call(2, "echo", &json!({ "text": "still here" }));
    assert_eq!(proxy.next()["id"], 2, "the session goes on");
}

#[test]
fn oversized_messages_are_refused_with_an_error_and_the_session_goes_on() {
    let mut proxy = Lines::proxy(&["--max-message-bytes", "100000"]);
    // An answer too big: the request waiting on it gets an error.
    proxy.call(1, "big", &json!({ "bytes": 200_000 }));
    let answer = proxy.next();
    assert_eq!(answer["id"], 1);
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32603);
    let size = message
        .strip_prefix("fence mcp: dropped the answer to tools/call `big`, which is ")
        .and_then(|rest| {
            rest.strip_suffix(
                " bytes, over the limit of 100000 bytes (raise it with --max-message-bytes)",
            )
        })
        .unwrap_or_else(|| panic!("{message}"));
    assert!(
        size.parse::<u64>().unwrap() > 200_000,
        "the whole line is counted: {message}"
    );
    proxy.stderr_until("dropped the answer to tools/call `big`");
    // A notification too big: reported, and the call's own answer still arrives.
    proxy.call(2, "notify_big", &json!({ "bytes": 200_000 }));
    assert_eq!(proxy.tool_text(2).1, "notified");
    proxy.stderr_until("dropped a notification notifications/message from the upstream, which is ");
    // A request too big from the client.
    let text = "x".repeat(150_000);
    proxy.call(3, "echo", &json!({ "text": text }));
    let (code, message) = error_of(&proxy.answer(3));
    assert_eq!(code, -32600);
    assert!(
        message.starts_with("fence mcp: the request tools/call is 150"),
        "{message}"
    );
    assert!(
        message.ends_with(
            " bytes, over the limit of 100000 bytes (raise it with --max-message-bytes)"
        ),
        "{message}"
    );
    proxy.call(4, "echo", &json!({ "text": "small" }));
    assert_eq!(proxy.tool_text(4).1, "small");
}

#[test]
fn a_request_id_still_waiting_is_refused_however_it_is_spelled() {
    let mut proxy = Lines::proxy(&[]);
    proxy.call(1, "slow", &json!({}));
    for id in [json!(1), json!("1"), json!(" 1")] {
        proxy.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "text": "again" } },
        }));
        let answer = proxy.next();
        assert_eq!(answer["id"], id);
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32600);
        assert_eq!(
            message,
            format!(
                "fence mcp: request id {id} is already in use by a request not answered yet \
                 (clients read ids loosely: \"1\" and 1 are one id); use a new id"
            )
        );
    }
}

#[test]
fn the_upstreams_stderr_passes_through() {
    let mut proxy = Lines::proxy(&[]);
    proxy.call(
        1,
        "stderr",
        &json!({ "text": "upstream says </untrusted-content> hello" }),
    );
    proxy.answer(1);
    let stderr = proxy.stderr_until("hello");
    assert!(
        stderr
            .lines()
            .any(|line| line == "upstream says </untrusted-content> hello"),
        "{stderr}"
    );
}

#[test]
fn a_command_that_cannot_be_found_exits_127() {
    let output = Command::new(&crate::common::binaries().fence)
        .args(["mcp", "--", "/nonexistent/mcp-server", "--stdio"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("fence mcp (mcp-server): cannot start the server \"/nonexistent/mcp-server\": No such file or directory"),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
mod shutdown {
    use super::*;
    use crate::common::{alive, gone_within};

    /// A proxy whose server will outlive its input: the server's pid, and its child's.
    fn lingering(grace_ms: &str) -> (Lines, u32, u32) {
        let mut proxy = Lines::proxy(&["--grace-ms", grace_ms]);
        proxy.call(1, "pid", &json!({}));
        let server: u32 = proxy.tool_text(1).1.parse().unwrap();
        proxy.call(2, "linger", &json!({}));
        let child: u32 = proxy.tool_text(2).1.parse().unwrap();
        assert!(alive(server) && alive(child));
        (proxy, server, child)
    }

    #[test]
    fn the_client_closing_the_proxys_input_ends_the_server() {
        let mut proxy = Lines::proxy(&[]);
        proxy.call(1, "pid", &json!({}));
        let server: u32 = proxy.tool_text(1).1.parse().unwrap();
        assert!(
            alive(server),
            "the server {server} runs before the input closes"
        );
        proxy.close();
        assert_eq!(proxy.wait(PATIENCE).code(), Some(0));
        assert!(!alive(server));
    }

    #[test]
    fn a_server_that_outlives_its_input_is_ended_with_everything_it_started() {
        let (mut proxy, server, child) = lingering("200");
        proxy.close();
        let status = proxy.wait(PATIENCE);
        assert!(
            gone_within(server, Duration::from_secs(2)),
            "the server {server} is gone"
        );
        assert!(
            gone_within(child, Duration::from_secs(2)),
            "the server's child {child} is gone"
        );
        assert_eq!(
            status.code(),
            Some(128 + 15),
            "the server's status: ended by SIGTERM"
        );
        proxy.stderr_until(
            "the upstream did not exit within 200 ms of its input closing; sending it SIGTERM",
        );
    }

    #[test]
    fn sigterm_to_the_proxy_ends_the_server_with_everything_it_started() {
        let (mut proxy, server, child) = lingering("5000");
        let escaped = escape(&mut proxy, 3);
        let killed = Command::new("kill")
            .args(["-TERM", &proxy.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = proxy.wait(Duration::from_secs(4));
        assert_eq!(status.code(), Some(128 + 15));
        assert!(
            gone_within(server, Duration::from_secs(2)),
            "the server {server} is gone"
        );
        assert!(
            gone_within(child, Duration::from_secs(2)),
            "the server's child {child} is gone"
        );
        for pid in escaped {
            assert!(
                gone_within(pid, Duration::from_secs(2)),
                "the process {pid} the server started in a session of its own is gone"
            );
        }
    }

    /// Calls `escape`: a session leader in a session and process group of its own, orphaned,
    /// and its child. Their pids, both running; the orphan adopted by the proxy.
    fn escape(proxy: &mut Lines, id: u64) -> [u32; 2] {
        proxy.call(id, "escape", &json!({}));
        let pids = proxy.tool_text(id).1;
        let pids: Vec<u32> = pids.lines().map(|pid| pid.parse().unwrap()).collect();
        let [leader, child] = pids[..] else {
            panic!("two pids: {pids:?}")
        };
        for pid in [leader, child] {
            assert!(alive(pid), "{pid} runs");
            // Out of reach of a signal to the server's process group.
            assert_eq!(
                stat_field(pid, SESSION),
                Some(leader),
                "{pid} is in a session of its own"
            );
        }
        // Its parent exited before the server answered: the proxy (a child subreaper) adopted
        // it, where without one init would have.
        assert_eq!(
            stat_field(leader, PARENT),
            Some(proxy.pid()),
            "the orphan's parent"
        );
        assert_eq!(
            stat_field(child, PARENT),
            Some(leader),
            "the orphan's child's parent"
        );
        [leader, child]
    }

    /// Fields of `/proc/<pid>/stat`, counted from the state, which follows the command name.
    const PARENT: usize = 1;
    const SESSION: usize = 3;

    /// A numeric field of process `pid`'s `/proc/<pid>/stat`.
    fn stat_field(pid: u32, field: usize) -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses, and may hold spaces and parentheses itself.
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_whitespace().nth(field)?.parse().ok()
    }

    #[test]
    fn what_the_server_started_in_a_session_of_its_own_does_not_outlive_the_proxy() {
        let mut proxy = Lines::proxy(&[]);
        proxy.call(1, "pid", &json!({}));
        let server: u32 = proxy.tool_text(1).1.parse().unwrap();
        assert!(alive(server), "the server {server} runs");
        let escaped = escape(&mut proxy, 2);
        // The server exits as soon as its input closes; the processes it left run on.
        proxy.close();
        assert_eq!(proxy.wait(PATIENCE).code(), Some(0));
        assert!(!alive(server));
        for pid in escaped {
            assert!(
                gone_within(pid, Duration::from_secs(2)),
                "the process {pid} the server started in a session of its own is gone"
            );
        }
    }

    #[test]
    fn orphans_that_exit_while_the_session_runs_are_reaped() {
        let mut proxy = Lines::proxy(&[]);
        let [leader, child] = escape(&mut proxy, 1);
        let killed = Command::new("kill")
            .args(["-KILL", &leader.to_string(), &child.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        for pid in [leader, child] {
            assert!(
                reaped_within(pid, Duration::from_secs(2)),
                "{pid}, which exited, is reaped while the proxy runs, not left a zombie"
            );
        }
        proxy.call(2, "echo", &json!({ "text": "still here" }));
        assert_eq!(proxy.tool_text(2).1, "still here");
    }

    /// Waits up to `patience` for process `pid` to be reaped: gone, not even a zombie.
    fn reaped_within(pid: u32, patience: Duration) -> bool {
        let deadline = std::time::Instant::now() + patience;
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}
