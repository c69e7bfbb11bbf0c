//! MCP Apps (SEP-1865) through `fence mcp`, measured with a real MCP App server: npm's
//! `@modelcontextprotocol/server-basic-vanillajs` (pinned in `tests/sdk/package.json`), whose
//! tool `get-time` names its view, `ui://get-time/mcp-app.html`, in `_meta.ui.resourceUri`.
//! The view is a document the host renders in a sandboxed frame and never hands the model: it
//! must reach the client byte for byte, where a tool's text is fenced.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::{fence, installed, sdk_dir};
use crate::common::Lines;

/// The server's view.
const VIEW: &str = "ui://get-time/mcp-app.html";

/// The server's entry point, as `scripts/sdk-setup.sh` installs it.
fn app_server() -> PathBuf {
    sdk_dir().join("node/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js")
}

/// The raw line answering request `id`, skipping anything else.
fn answer_line(lines: &Lines, id: u64) -> Vec<u8> {
    loop {
        let line = lines
            .next_line()
            .unwrap_or_else(|| panic!("stdout ended; stderr: {}", lines.stderr()));
        let message: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        if message["id"] == id && message.get("method").is_none() {
            return line;
        }
    }
}

/// A session with the app server started by `command`: initialized, then `tools/list`,
/// `resources/read` of the view and `tools/call` of `get-time`, each answer as its raw line.
fn session(command: Command) -> [Vec<u8>; 3] {
    let mut lines = Lines::spawn(command);
    lines.send(&json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": { "extensions": { "io.modelcontextprotocol/ui": {
                "mimeTypes": ["text/html;profile=mcp-app"],
            } } },
            "clientInfo": { "name": "fence-mcp-apps", "version": "1" },
        },
    }));
    answer_line(&lines, 0);
    lines.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    lines.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    let listed = answer_line(&lines, 1);
    lines.send(&json!({
        "jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": { "uri": VIEW },
    }));
    let view = answer_line(&lines, 2);
    lines.call(3, "get-time", &json!({}));
    let called = answer_line(&lines, 3);
    lines.close();
    [listed, view, called]
}

fn parsed(line: &[u8]) -> Value {
    serde_json::from_slice(line).unwrap()
}

#[test]
fn an_mcp_apps_view_reaches_the_client_byte_for_byte_and_its_tools_text_fenced() {
    if !installed() {
        return;
    }
    let server = app_server();
    let mut direct = Command::new("node");
    direct.arg(&server).arg("--stdio");
    let [listed, view, called] = session(direct);
    let read = parsed(&view);
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], VIEW, "{read}");
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app", "{read}");
    assert!(
        contents["text"]
            .as_str()
            .unwrap()
            .starts_with("<!DOCTYPE html>"),
        "{read}"
    );

    let mut proxied = Command::new(fence());
    proxied
        .args(["mcp", "--", "node"])
        .arg(&server)
        .arg("--stdio");
    let [proxied_listed, proxied_view, proxied_called] = session(proxied);
    // The view: the very bytes of the direct session's answer, `_meta.ui` and all.
    assert!(
        proxied_view == view,
        "the view changed through the proxy: {} bytes directly, {} through it",
        view.len(),
        proxied_view.len()
    );
    // The tool's `_meta.ui`, which names the view, as it came.
    let meta = |line: &[u8]| parsed(line)["result"]["tools"][0]["_meta"].clone();
    assert_eq!(meta(&proxied_listed), meta(&listed));
    assert_eq!(meta(&listed)["ui"]["resourceUri"], VIEW);
    // The tool's text fenced, its `structuredContent` (what the view reads) kept.
    let (direct, proxied) = (parsed(&called), parsed(&proxied_called));
    let text = proxied["result"]["content"][0]["text"].as_str().unwrap();
    let block = fence_runtime::parse(text).unwrap_or_else(|err| panic!("{err}: {text}"));
    assert_eq!(block.source(), "tool:get-time");
    assert!(direct["result"]["structuredContent"]["time"].is_string());
    assert!(proxied["result"]["structuredContent"]["time"].is_string());
}
