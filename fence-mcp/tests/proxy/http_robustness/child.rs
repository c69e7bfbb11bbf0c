//! `--listen -- SERVER` when its clients misbehave: stateless clients sharing one server that
//! spell a member the proxy renumbers twice, name a progress token or a request that is not
//! theirs; sessions left open without a DELETE; a stream its client never reads; and a pin
//! held across the sessions of one run.

use super::eras::{cancellations, post_in, posting, read_progress, slow_call, stateless_meta};
use super::front::child_session;
#[allow(clippy::wildcard_imports)]
use super::*;
#[cfg(target_os = "linux")]
use crate::common::children_of;

/// The members of [`stateless_meta`], as JSON text without its braces, to write a `_meta` by
/// hand (with a member twice).
fn meta_members() -> String {
    let meta = stateless_meta().to_string();
    meta[1..meta.len() - 1].to_owned()
}

/// POSTs `body`, as it is, as a stateless 2026-07-28 request that takes JSON or events: the
/// messages of the response.
async fn post_raw(front: &Listening, body: String) -> Vec<Value> {
    let response = posting(front, None, "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .expect("the front answers");
    messages(response).await
}

/// A stateless call of `tool` with `arguments`, taking JSON or events.
fn stateless_call(id: u64, tool: &str, arguments: &Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments, "_meta": stateless_meta() },
    })
}

/// The text of a tool's result among `messages`, answering `id`, inside its fence.
fn result_text(messages: &[Value], id: u64) -> String {
    let answer = answer_of(messages, id);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"));
    let block = fence_runtime::parse(text).unwrap_or_else(|err| panic!("{err}: {text}"));
    block.content().to_owned()
}

/// Asserts nothing more arrives on `stream` for half a second.
async fn quiet(which: &str, stream: &mut reqwest::Response) {
    if let Ok(chunk) = tokio::time::timeout(Duration::from_millis(500), stream.chunk()).await {
        let chunk = chunk.ok().flatten().unwrap_or_default();
        panic!(
            "{which} received what is not its own: {}",
            String::from_utf8_lossy(&chunk)
        );
    }
}

/// The names of the tools the stateless server was called with.
async fn stateless_calls(front: &Listening) -> Vec<String> {
    let messages = post_raw(front, stateless_call(900, "calls", &json!({})).to_string()).await;
    serde_json::from_str(&result_text(&messages, 900)).unwrap()
}

/// `--listen -- SERVER` in 2026-07-28: a stateless request that spells its `id`, `params`,
/// `_meta` or `progressToken` twice is refused, and nothing of it reaches the shared server.
/// The server reads the last copy, so a second token naming the proxy's id for another
/// client's request would send that client's progress (with its own token) to the other.
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_refuses_a_stateless_request_with_two_of_a_member_it_renumbers() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    let mut victim = post_in(&front, &slow_call(1, None), None).await;
    read_progress("the victim's", &mut victim).await;

    let meta = meta_members();
    let params = |token: &str| {
        format!(r#"{{"name":"slow","arguments":{{}},"_meta":{{{meta},"progressToken":{token}}}}}"#)
    };
    let cases = [
        (
            "two progress tokens",
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"slow","arguments":{{}},"_meta":{{{meta},"progressToken":"a","progressToken":1}}}}}}"#
            ),
            json!(2),
        ),
        (
            "two _meta",
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"slow","arguments":{{}},"_meta":{{{meta},"progressToken":"a"}},"_meta":{{{meta},"progressToken":1}}}}}}"#
            ),
            json!(3),
        ),
        (
            "two params",
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{},"params":{}}}"#,
                params(r#""a""#),
                params("1")
            ),
            json!(4),
        ),
        (
            "two ids",
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"id":1,"method":"tools/call","params":{}}}"#,
                params(r#""a""#)
            ),
            Value::Null,
        ),
    ];
    for (case, body, id) in cases {
        let answers = post_raw(&front, body).await;
        let [answer] = answers.as_slice() else {
            panic!("{case}: one answer: {answers:?}");
        };
        assert_eq!(answer["id"], id, "{case}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "{case}: {answer}");
        let why = error_message(answer);
        assert!(why.contains("two"), "{case}: {why}");
    }
    quiet("the victim's stream", &mut victim).await;
    let calls = stateless_calls(&front).await;
    assert_eq!(
        calls.iter().filter(|name| *name == "slow").count(),
        1,
        "only the victim's call reached the server: {calls:?}"
    );
}

/// `--listen -- SERVER` in 2026-07-28: progress whose token the proxy did not give (the
/// server's own choice, or a client's token the server echoes) reaches no client: it is
/// dropped, and stderr says so.
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_drops_progress_with_a_token_it_did_not_give() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    let mut victim = post_in(&front, &slow_call(1, None), None).await;
    read_progress("the victim's", &mut victim).await;

    // The proxy's ids counted from 1, so 1 named the victim's request; "t" is its client's own
    // token; "zzz" no request's.
    for (id, token) in [(2, json!(1)), (3, json!("t")), (4, json!("zzz"))] {
        let answers = post_raw(
            &front,
            stateless_call(id, "progress_as", &json!({ "token": token })).to_string(),
        )
        .await;
        assert_eq!(result_text(&answers, id), "sent", "{token}");
        let progress: Vec<&Value> = answers
            .iter()
            .filter(|message| message["method"] == "notifications/progress")
            .collect();
        assert!(progress.is_empty(), "{token}: {progress:?}");
    }
    quiet("the victim's stream", &mut victim).await;
    let stderr = front.stderr();
    assert_eq!(
        stderr
            .matches("dropped a notifications/progress whose token")
            .count(),
        3,
        "{stderr}"
    );
}

/// `--listen -- SERVER` in 2026-07-28: a stateless client cannot cancel another's request. A
/// `notifications/cancelled` is passed on only for a request of its own POST (a stateless POST
/// is tied to no other), any other is dropped; the proxy's ids are not to be guessed; and
/// closing a request's stream, or its connection when it waits for JSON, is what cancels it.
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_lets_no_stateless_client_cancel_anothers_request() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    let mut victim = post_in(&front, &slow_call(1, None), None).await;
    read_progress("the victim's", &mut victim).await;

    for id in [json!(1), json!("1"), json!(2)] {
        let cancel = json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "not yours", "_meta": stateless_meta() },
        });
        let response = post_in(&front, &cancel, None).await;
        assert_eq!(response.status(), 202, "{id}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancelled = cancellations(&front, None, 1).await;
    assert!(cancelled.is_empty(), "{cancelled:?}");
    quiet("the victim's stream", &mut victim).await;
    let stderr = front.stderr();
    assert_eq!(
        stderr
            .matches("dropped a stateless client's notifications/cancelled")
            .count(),
        3,
        "{stderr}"
    );

    // The ids the server sees are the proxy's own, and not to be guessed from one another.
    let mut seen = Vec::new();
    for id in [10, 11] {
        let answers = post_raw(
            &front,
            stateless_call(id, "request_id", &json!({})).to_string(),
        )
        .await;
        let id: u64 = result_text(&answers, id).parse().expect("a number");
        seen.push(id);
    }
    assert!(
        seen.iter().all(|id| *id > 1 << 20) && seen[0].abs_diff(seen[1]) > 1 << 10,
        "the proxy's ids: {seen:?}"
    );

    // Closing the stream cancels the victim's request, under the proxy's id for it.
    drop(victim);
    let cancelled = cancellations(&front, None, 1).await;
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    let request = cancelled[0]["params"]["requestId"].as_u64().unwrap_or(0);
    assert!(request > 1 << 20, "{cancelled:?}");

    // A request answered as JSON is cancelled when its client leaves before the answer.
    let waiting = posting(&front, None, "application/json")
        .body(slow_call(2, None).to_string())
        .send();
    assert!(
        tokio::time::timeout(Duration::from_millis(500), waiting)
            .await
            .is_err(),
        "slow answers only once cancelled"
    );
    let cancelled = cancellations(&front, None, 2).await;
    assert_eq!(cancelled.len(), 2, "{cancelled:?}");
    assert_eq!(
        cancelled[1]["params"]["reason"], "the client closed its connection",
        "{cancelled:?}"
    );
}

/// `--listen -- SERVER --max-sessions 2`: a third session is refused with 503, a
/// `Retry-After` and a JSON-RPC error saying why, and no process is started for it; ending a
/// session makes room for another.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_runs_at_most_max_sessions() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--max-sessions", "2", "--", &server]);
    let pid = front.child.id();
    let first = child_session(&front).await;
    let _second = child_session(&front).await;

    let refused = post(&front.url, &initialize(0), None).await;
    assert_eq!(refused.status(), 503);
    let retry = refused.headers().get("retry-after").map(|value| {
        value
            .to_str()
            .unwrap()
            .parse::<u64>()
            .expect("Retry-After in seconds")
    });
    assert!(retry.is_some_and(|seconds| seconds > 0), "{retry:?}");
    let why = error_message(&messages(refused).await[0]);
    assert!(why.contains("--max-sessions"), "{why}");
    assert_eq!(children_of(pid).len(), 2, "{:?}", children_of(pid));

    let deleted = client()
        .delete(&front.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let _third = child_session(&front).await;
}

/// The id of the process of the test server behind a session.
async fn server_pid(front: &Listening, session: &str) -> u32 {
    let response = post(&front.url, &call(7, "pid"), Some(session)).await;
    result_text(&messages(response).await, 7)
        .trim()
        .parse()
        .unwrap()
}

/// Waits until process `pid` is gone, reaped (no zombie left): `false` after [`PATIENCE`].
fn reaped_within_patience(pid: u32) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    true
}

/// `--listen -- SERVER --session-idle 1`: a session no request has named for a second, with
/// no stream open, is ended, its process ended and reaped, and a request naming it gets 404
/// (so a client initializes anew); a session with its GET stream open is kept until the
/// stream closes.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_ends_a_session_idle_with_no_stream_open() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--session-idle", "1", "--", &server]);
    let pid = front.child.id();
    let idle = child_session(&front).await;
    let idle_server = server_pid(&front, &idle).await;
    let listening = child_session(&front).await;
    let listening_server = server_pid(&front, &listening).await;
    let stream = client()
        .get(&front.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &listening)
        .send()
        .await
        .expect("the GET stream opens");
    assert_eq!(stream.status(), 200);

    let started = Instant::now();
    assert!(
        reaped_within_patience(idle_server),
        "the idle session's server {idle_server} is left"
    );
    let ended_after = started.elapsed();
    assert!(ended_after >= Duration::from_millis(500), "{ended_after:?}");
    let gone = post(&front.url, &call(8, "echo"), Some(&idle)).await;
    assert_eq!(gone.status(), 404);
    assert!(front.stderr().contains("idle"), "{}", front.stderr());

    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(children_of(pid), [listening_server]);
    drop(stream);
    assert!(
        reaped_within_patience(listening_server),
        "the session whose stream closed is left"
    );
    assert!(children_of(pid).is_empty(), "{:?}", children_of(pid));
}

/// A process's resident set and its peak, in KiB, from `/proc/PID/status`.
#[cfg(target_os = "linux")]
fn resident(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// How many times `pattern` occurs in what `stream` gives, until `enough` have.
async fn count_until(stream: &mut TcpStream, pattern: &[u8], enough: usize) -> usize {
    let mut found = 0;
    let mut carry: Vec<u8> = Vec::new();
    let mut buffer = vec![0; 1 << 16];
    while found < enough {
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut buffer))
            .await
            .unwrap_or_else(|_| panic!("only {found} of {enough} within {PATIENCE:?}"))
            .unwrap();
        assert!(read > 0, "the stream ended after {found} of {enough}");
        carry.extend_from_slice(&buffer[..read]);
        found += carry
            .windows(pattern.len())
            .filter(|window| *window == pattern)
            .count();
        let keep = carry.len().min(pattern.len() - 1);
        carry.drain(..carry.len() - keep);
    }
    found
}

/// `--listen -- SERVER`: a server that writes 100 MiB of notifications to a GET stream its
/// client does not read is held up, as over stdio, and the proxy's memory stays within its
/// bound (a few messages of `--max-message-bytes`, and what waits on the stream); once the
/// client reads, every notification arrives, then the answer.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_holds_up_a_server_whose_get_stream_is_not_read() {
    const COUNT: usize = 200;
    const BYTES: usize = 512 << 10;
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--max-message-bytes", "1048576", "--", &server]);
    let pid = front.child.id();
    let session = child_session(&front).await;

    let mut stream = TcpStream::connect(&front.addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\
         Mcp-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {session}\r\n\r\n",
        front.addr
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let mut byte = [0];
        stream.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );

    let (_, before) = resident(pid);
    let flood = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "flood", "arguments": { "count": COUNT, "bytes": BYTES } },
    });
    let (url, session_id) = (front.url.clone(), session.clone());
    let answered = tokio::spawn(async move {
        let response = posting_to(&url, &session_id)
            .body(flood.to_string())
            .send()
            .await
            .expect("the front answers");
        messages(response).await
    });
    // Until the proxy's memory has not grown for a second (the server is held up).
    let mut last = resident(pid).0;
    let mut still = Instant::now();
    let deadline = Instant::now() + PATIENCE;
    while still.elapsed() < Duration::from_secs(1) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = resident(pid).0;
        if now != last {
            (last, still) = (now, Instant::now());
        }
    }
    let (_, peak) = resident(pid);
    let grown = peak.saturating_sub(before);
    eprintln!("the proxy's peak grew by {grown} KiB while its GET stream was not read");
    // The bound docs/mcp-proxy.md gives: what waits on the stream (1 MiB), and a few messages
    // of --max-message-bytes (1 MiB here), held while read, fenced and written.
    assert!(
        grown < 8 << 10,
        "the proxy held {grown} KiB for a stream its client does not read"
    );
    assert!(!answered.is_finished(), "the server was not held up");

    let found = count_until(&mut stream, b"notifications/message", COUNT).await;
    assert_eq!(found, COUNT);
    let answers = tokio::time::timeout(PATIENCE, answered)
        .await
        .expect("the flood is answered once its notifications are read")
        .unwrap();
    assert_eq!(result_text(&answers, 1).trim(), format!("flooded {COUNT}"));
}

/// `--listen -- SERVER` in 2026-07-28: a stateless client that stops reading its stream holds up
/// the server every stateless client shares for 10 s at most: then its response is closed,
/// stderr says so, and another client's request is answered.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_does_not_let_one_stateless_client_hold_up_the_others() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    // Started, so the stalled client's POST finds it running.
    let echo = |id| stateless_call(id, "echo", &json!({ "text": "mine" })).to_string();
    assert_eq!(result_text(&post_raw(&front, echo(1)).await, 1), "mine");

    let flood = stateless_call(2, "flood", &json!({ "count": 100, "bytes": 512 << 10 }));
    let body = flood.to_string();
    let mut stalled = TcpStream::connect(&front.addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Content-Length: {}\r\n\r\n{body}",
        front.addr,
        body.len()
    );
    stalled.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let started = Instant::now();
    assert_eq!(result_text(&post_raw(&front, echo(3)).await, 3), "mine");
    let waited = started.elapsed();
    // The 10 s the stalled client is given, and the patience of a loaded machine.
    assert!(waited < Duration::from_secs(10) + PATIENCE, "{waited:?}");
    // Its stderr is read on a thread of its own: the line may come a little after the answer.
    front
        .says("closed a stateless client's response that read nothing for 10 s")
        .await;
    drop(stalled);
}

/// A POST in the session `session` that takes JSON.
fn posting_to(url: &str, session: &str) -> reqwest::RequestBuilder {
    client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", session)
}

/// The names `tools/list` gives in `session`.
async fn listed_tools(front: &Listening, session: &str, id: u64) -> Vec<String> {
    let list = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" });
    let answer = answer_of(
        &messages(post(&front.url, &list, Some(session)).await).await,
        id,
    );
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {answer}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `--listen -- SERVER --pin FILE`, FILE new: the first session that lists the tools pins
/// them (trust on first use), and a later session of the same run is held to the pin as a
/// later run would be: its server's rug pull is withheld, a call to the changed tool refused,
/// and FILE keeps what was pinned.
#[tokio::test(flavor = "multi_thread")]
async fn listen_server_holds_later_sessions_of_the_first_run_to_the_pin() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pin.json");
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--pin", file.to_str().unwrap(), "--", &server]);

    let first = child_session(&front).await;
    assert!(
        listed_tools(&front, &first, 1)
            .await
            .contains(&"fetch".to_owned())
    );
    let pinned = std::fs::read_to_string(&file).expect("the first session pinned the tools");
    assert!(!pinned.contains("id_rsa"), "{pinned}");

    let later = child_session(&front).await;
    assert!(
        listed_tools(&front, &later, 1)
            .await
            .contains(&"fetch".to_owned())
    );
    let pull = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "rug_pull", "arguments": { "variants": "injected" } },
    });
    let pulled = answer_of(
        &messages(post(&front.url, &pull, Some(&later)).await).await,
        2,
    );
    assert!(pulled.get("result").is_some(), "{pulled}");
    let listed = listed_tools(&front, &later, 3).await;
    assert!(!listed.contains(&"fetch".to_owned()), "{listed:?}");
    let refused = answer_of(
        &messages(post(&front.url, &call(4, "fetch"), Some(&later)).await).await,
        4,
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        error_message(&refused).contains("withheld by the pin"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), pinned);
    assert!(front.stderr().contains("changed since it was pinned"));
}
