//! The front's own safety, its sessions and processes, and how it ends streams.

#[allow(clippy::wildcard_imports)]
use super::*;
#[cfg(target_os = "linux")]
use crate::common::children_of;

// ---------------------------------------------------------------------------------------------
// The front's own safety.

#[test]
fn listen_on_every_address_is_refused_without_the_flag() {
    let output = Command::new(&binaries().fence)
        .args([
            "mcp",
            "--listen",
            "0.0.0.0:0",
            "--url",
            "http://127.0.0.1:9/mcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed if it listens after all, so a regression fails rather than hangs.
    let mut refused = KillOnDrop(output);
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = refused.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "--listen 0.0.0.0:0 was not refused"
        );
        thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut refused.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("--allow-network-clients-without-auth"),
        "{stderr}"
    );
    let front = Listening::start_at(
        "0.0.0.0:0",
        &[
            "--allow-network-clients-without-auth",
            "--url",
            "http://127.0.0.1:9/mcp",
        ],
    );
    assert!(front.url.starts_with("http://0.0.0.0:"), "{}", front.url);
}

/// The `--listen` shapes, each with what is behind it.
fn both_fronts(upstream: &str) -> Vec<(&'static str, Listening)> {
    let server = binaries().server.to_str().unwrap().to_owned();
    vec![
        (
            "reverse",
            Listening::start(&["--max-message-bytes", "1000", "--url", upstream]),
        ),
        (
            "child",
            Listening::start(&["--max-message-bytes", "1000", "--", &server]),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_refuses_foreign_hosts_and_origins_and_oversized_bodies() {
    let hostile = Hostile::start(plain).await;
    for (shape, front) in both_fronts(&hostile.url) {
        let body = initialize(0).to_string();
        let request = |host: &str, origin: Option<&str>, body: &str| {
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\n{}Content-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                origin
                    .map(|origin| format!("Origin: {origin}\r\n"))
                    .unwrap_or_default(),
                body.len()
            )
        };
        // Every refusal is a JSON-RPC error an SDK can show: "Invalid Request", no id.
        let refused = |response: &Raw, status: u16| {
            assert_eq!(response.status, status, "{shape}");
            let error: Value = serde_json::from_slice(&response.body)
                .unwrap_or_else(|err| panic!("{shape}: {err}: {:?}", response.body));
            assert_eq!(error["error"]["code"], -32600, "{shape}: {error}");
            assert_eq!(error["id"], Value::Null, "{shape}: {error}");
        };
        let evil = raw(&front.addr, request("evil.example", None, &body).as_bytes()).await;
        refused(&evil, 403);
        let elsewhere = request(&front.addr, None, &body).replacen("POST /mcp ", "POST /other ", 1);
        refused(&raw(&front.addr, elsewhere.as_bytes()).await, 404);
        let evil_origin = request(&front.addr, Some("http://evil.example"), &body);
        assert_eq!(
            raw(&front.addr, evil_origin.as_bytes()).await.status,
            403,
            "{shape}"
        );
        let local = format!("http://localhost:{}", front.port());
        let ours = raw(
            &front.addr,
            request(&front.addr, Some(&local), &body).as_bytes(),
        )
        .await;
        assert_eq!(
            ours.status,
            200,
            "{shape}: {}",
            String::from_utf8_lossy(&ours.body)
        );
        assert!(
            String::from_utf8_lossy(&ours.body).contains(r#""protocolVersion""#),
            "{shape}: the server's answer to initialize: {}",
            String::from_utf8_lossy(&ours.body)
        );

        // A body of exactly `--max-message-bytes` is within the limit.
        let at_limit = |id: u64| {
            let message = |text: &str| {
                json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": "echo", "arguments": { "text": text } },
                })
                .to_string()
            };
            message(&"x".repeat(1000 - message("").len()))
        };
        let exact = at_limit(76);
        assert_eq!(exact.len(), 1000);
        let response = raw(&front.addr, request(&front.addr, None, &exact).as_bytes()).await;
        assert_ne!(response.status, 413, "{shape}");
        // A body that breaks off (a chunk size that is no number) is a parse error.
        let broken = request(&front.addr, None, &body)
            .replacen("Content-Length", "Transfer-Encoding: chunked\r\nX-Was", 1)
            .replacen("\r\n\r\n", "\r\n\r\nzz\r\n", 1);
        let response = raw(&front.addr, broken.as_bytes()).await;
        assert_eq!(response.status, 400, "{shape}");
        let error: Value = serde_json::from_slice(&response.body)
            .unwrap_or_else(|err| panic!("{shape}: {err}: {:?}", response.body));
        assert_eq!(error["error"]["code"], -32700, "{shape}: {error}");

        let big = json!({
            "jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "text": "x".repeat(2000) } },
        })
        .to_string();
        let response = raw(&front.addr, request(&front.addr, None, &big).as_bytes()).await;
        assert_eq!(response.status, 413, "{shape}");
        let error: Value = serde_json::from_slice(&response.body)
            .unwrap_or_else(|err| panic!("{shape}: {err}: {:?}", response.body));
        assert_eq!(error["id"], 77, "{shape}: {error}");
        assert!(
            error["error"]["message"].as_str().is_some(),
            "{shape}: {error}"
        );
        assert!(front.stderr().contains("refused a request"), "{shape}");
    }
}

// ---------------------------------------------------------------------------------------------
// The child shape's sessions.

pub(super) async fn child_session(front: &Listening) -> String {
    let response = post(&front.url, &initialize(0), None).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let answer = answer_of(&messages(response).await, 0);
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(
        post(&front.url, &initialized(), Some(&session))
            .await
            .status(),
        202
    );
    session
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn child_sessions_unknown_id_404_delete_ends_one_sigterm_ends_all() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    let pid = front.child.id();

    let unknown = post(&front.url, &call(1, "echo"), Some("no-such-session")).await;
    assert_eq!(unknown.status(), 404);

    let first = child_session(&front).await;
    let second = child_session(&front).await;
    assert_ne!(first, second);
    let answer = answer_of(
        &messages(post(&front.url, &call(1, "fetch"), Some(&first)).await).await,
        1,
    );
    assert_fenced(&answer, "fetch");
    let servers = children_of(pid);
    assert_eq!(servers.len(), 2, "{servers:?}");

    let deleted = client()
        .delete(&front.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let deadline = Instant::now() + PATIENCE;
    while children_of(pid).len() != 1 {
        assert!(
            Instant::now() < deadline,
            "DELETE left {:?}",
            children_of(pid)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let gone = post(&front.url, &call(2, "echo"), Some(&first)).await;
    assert_eq!(gone.status(), 404);
    let left = children_of(pid);

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut front = front;
    let deadline = Instant::now() + PATIENCE;
    while front.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the proxy outlived SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for server in left {
        assert!(
            crate::common::gone_within(server, Duration::from_secs(5)),
            "server {server} outlived the proxy"
        );
    }
}

/// Answers `tools/call` on an event stream, then holds the stream open for 5 s before ending
/// it, as a server slow to close (or one whose last write waits on Nagle's algorithm) does.
fn lingering(seen: &Seen) -> Response<HBody> {
    if seen.method == Method::POST && seen.rpc_method() == "tools/call" {
        let id = seen.message()["id"].clone();
        let (sender, body) = streamed();
        tokio::spawn(async move {
            let event = format!("data: {}\n\n", tool_result(&id, "answered"));
            let _ = sender.send(Bytes::from(event)).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        return sse_reply(body);
    }
    plain(seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_ends_the_clients_stream_once_its_requests_are_answered() {
    let hostile = Hostile::start(lingering).await;
    let front = Listening::start(&["--url", &hostile.url]);
    let session = listen_initialize(&front).await;
    let start = Instant::now();
    let response = post(&front.url, &call(1, "fetch"), session.as_deref()).await;
    let all = messages(response).await;
    let elapsed = start.elapsed();
    assert_fenced(&answer_of(&all, 1), "fetch");
    assert!(
        elapsed < Duration::from_secs(2),
        "the stream ended {elapsed:?} after the call, not with its answer"
    );
}

/// Answers `tools/call` with an event stream: the answer's event, then the stream's end, at once
/// or `after` the event.
fn evented(after: Duration) -> impl Fn(&Seen) -> Response<HBody> + Send + Sync {
    move |seen| {
        if seen.method != Method::POST || seen.rpc_method() != "tools/call" {
            return plain(seen);
        }
        let event = format!(
            "data: {}\n\n",
            tool_result(&seen.message()["id"], "answered")
        );
        if after.is_zero() {
            return sse_reply(full(event));
        }
        let (sender, body) = streamed();
        tokio::spawn(async move {
            let _ = sender.send(Bytes::from(event)).await;
            tokio::time::sleep(after).await;
        });
        sse_reply(body)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_url_reuses_its_upstream_connection_after_each_answered_stream() {
    for after in [Duration::ZERO, Duration::from_millis(50)] {
        let hostile = Hostile::start(evented(after)).await;
        let front = Listening::start(&["--url", &hostile.url]);
        let session = listen_initialize(&front).await;
        for id in 1..=10 {
            let response = post(&front.url, &call(id, "fetch"), session.as_deref()).await;
            assert_fenced(&answer_of(&messages(response).await, id), "fetch");
            // The stream's end, read apart from the client's answer, frees the connection.
            tokio::time::sleep(after * 2).await;
        }
        let connections = hostile.connections.load(Ordering::SeqCst);
        assert!(
            connections <= 2,
            "{connections} connections to the upstream for 10 calls answered by streams that end \
             {after:?} after their answer"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC batches (2025-03-26).

/// The process ids a fenced answer of the test server's `escape` names, one a line.
#[cfg(target_os = "linux")]
fn escaped(answer: &Value) -> [u32; 2] {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text block: {answer}"));
    let pids: Vec<u32> = text.lines().filter_map(|line| line.parse().ok()).collect();
    let [leader, child] = pids[..] else {
        panic!("two pids: {text}")
    };
    [leader, child]
}

/// The parent of process `pid`, from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn child_sessions_leave_nothing_behind_not_even_what_left_their_process_group() {
    let server = binaries().server.to_str().unwrap().to_owned();
    let front = Listening::start(&["--", &server]);
    let pid = front.child.id();
    let session = child_session(&front).await;
    let escape = |id| {
        let (url, session) = (front.url.clone(), session.clone());
        async move {
            let response = post(&url, &call(id, "escape"), Some(&session)).await;
            escaped(&answer_of(&messages(response).await, id))
        }
    };

    // A process in a session of its own, whose parent exited before the server answered: the
    // proxy, a child subreaper, adopted it, where without one init would have.
    let [leader, child] = escape(1).await;
    assert_eq!(parent_of(leader), Some(pid), "the orphan's parent");
    assert_eq!(
        parent_of(child),
        Some(leader),
        "the orphan's child's parent"
    );

    // Orphans that exit while the proxy runs are reaped, not left zombies.
    let [gone_leader, gone_child] = escape(2).await;
    for orphan in [gone_leader, gone_child] {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(orphan).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    }
    let deadline = Instant::now() + PATIENCE;
    for orphan in [gone_leader, gone_child] {
        while std::path::Path::new(&format!("/proc/{orphan}")).exists() {
            assert!(Instant::now() < deadline, "{orphan} is left a zombie");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    // And what still runs ends with the proxy.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut front = front;
    let deadline = Instant::now() + PATIENCE;
    while front.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the proxy outlived SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for orphan in [leader, child] {
        assert!(
            crate::common::gone_within(orphan, Duration::from_secs(5)),
            "{orphan}, which the server started in a session of its own, outlived the proxy"
        );
    }
}
