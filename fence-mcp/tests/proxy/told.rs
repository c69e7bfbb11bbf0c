//! What the proxy tells a client of its own accord, where its stderr does not reach: a
//! `notifications/message` warning for each tool, prompt or instructions the pin withheld, to a
//! client that asked for warnings with `logging/setLevel`. Spoken to line by line, through the
//! real binary, the test server's definitions switched by `FENCE_TEST_DEFINITIONS`.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Lines, PATIENCE, proxy_command};

/// `fence mcp --pin PIN -- <the test server>` with the definitions `variants`, initialized.
fn pinned(pin: &Path, variants: &str) -> Lines {
    let mut command = proxy_command(&["--pin", pin.to_str().unwrap()]);
    command.env("FENCE_TEST_DEFINITIONS", variants);
    let mut client = Lines::spawn(command);
    client.send(&json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "fence-mcp-tests", "version": "1" },
        },
    }));
    assert!(client.answer(0).get("result").is_some());
    client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    client
}

/// Sends request `id` asking `method` with `params` and waits for its answer, then sends a
/// `ping` and waits for that: every message until the ping's answer, which is not among them.
/// The server may answer requests in any order, but what the proxy writes is in order: its
/// warnings come before the ping's answer (with the answer they follow, or before it).
fn ask(client: &mut Lines, id: u64, method: &str, params: &Value) -> Vec<Value> {
    client.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    let mut messages = Vec::new();
    let answers = |message: &Value, id: u64| message["id"] == id && message.get("method").is_none();
    loop {
        let message = client.next();
        let answered = answers(&message, id);
        messages.push(message);
        if answered {
            break;
        }
    }
    let ping = 1000 + id;
    client.send(&json!({ "jsonrpc": "2.0", "id": ping, "method": "ping" }));
    loop {
        let message = client.next();
        if answers(&message, ping) {
            return messages;
        }
        messages.push(message);
    }
}

/// The answer among `messages` to request `id`.
fn answer(messages: &[Value], id: u64) -> &Value {
    messages
        .iter()
        .find(|message| message["id"] == id && message.get("method").is_none())
        .unwrap_or_else(|| panic!("no answer to {id}: {messages:?}"))
}

/// The texts of the proxy's warnings among `messages`.
fn warnings(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|message| message["method"] == "notifications/message")
        .map(|message| {
            assert_eq!(message["params"]["level"], "warning", "{message}");
            assert_eq!(message["params"]["logger"], "fence", "{message}");
            message["params"]["data"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// A client that asked for warnings is told what the pin withheld, once: the instructions
/// withheld before it asked, when it asks; a tool withheld from a list, after the list. One
/// that asked for errors only, or for nothing, is told nothing.
#[test]
fn a_client_that_enabled_logging_is_warned_of_what_the_pin_withheld() {
    let dir = tempfile::tempdir().unwrap();
    let pin = dir.path().join("server.pin.json");
    let mut first = pinned(&pin, "");
    ask(&mut first, 1, "tools/list", &json!({}));
    first.close();
    assert_eq!(first.wait(PATIENCE).code(), Some(0), "{}", first.stderr());
    let file = pin.display().to_string();
    let fetch = format!(
        "fence mcp: the tool `fetch` is withheld by the pin: its description changed since it \
         was pinned in {file}; to approve it, run the proxy once with --pin-update"
    );
    let instructions = format!(
        "fence mcp: the server's instructions are withheld by the pin {file}: the instructions \
         changed since they were pinned; to approve them, run the proxy once with --pin-update"
    );

    let mut warned = pinned(&pin, "injected,instructions");
    let set = ask(
        &mut warned,
        1,
        "logging/setLevel",
        &json!({ "level": "info" }),
    );
    assert_eq!(warnings(&set), [instructions], "{set:?}");
    let listed = ask(&mut warned, 2, "tools/list", &json!({}));
    assert_eq!(warnings(&listed), [fetch], "{listed:?}");
    let tools = &answer(&listed, 2)["result"]["tools"];
    assert!(
        !tools
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "fetch"),
        "{tools}"
    );
    // Once a session.
    let again = ask(&mut warned, 3, "tools/list", &json!({}));
    assert_eq!(warnings(&again), Vec::<String>::new(), "{again:?}");
    let again = ask(
        &mut warned,
        4,
        "logging/setLevel",
        &json!({ "level": "debug" }),
    );
    assert_eq!(warnings(&again), Vec::<String>::new(), "{again:?}");

    for level in [Some("error"), None] {
        let mut quiet = pinned(&pin, "injected,instructions");
        if let Some(level) = level {
            let set = ask(
                &mut quiet,
                1,
                "logging/setLevel",
                &json!({ "level": level }),
            );
            assert_eq!(warnings(&set), Vec::<String>::new(), "{set:?}");
        }
        let listed = ask(&mut quiet, 2, "tools/list", &json!({}));
        assert_eq!(
            warnings(&listed),
            Vec::<String>::new(),
            "{level:?}: {listed:?}"
        );
        // stderr says it all the same.
        quiet.stderr_until("the tool `fetch` changed since it was pinned");
    }
}
