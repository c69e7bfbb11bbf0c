//! What each SDK's client shows when `fence mcp`'s server cannot start: the proxy's answer to
//! its `initialize`, naming the command and the system's error, not a closed connection.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Both SDKs raise the proxy's error from `initialize`, with the command and the system's
/// error in its text (without the answer, each says only that the connection closed).
#[test]
fn each_sdk_shows_why_the_server_cannot_start() {
    if !installed() {
        return;
    }
    let command = "/nonexistent/mcp-server";
    let sessions = [json!({
        "label": "wrong",
        "command": [fence().display().to_string(), "mcp", "--", command],
        "ops": [],
    })];
    for sdk in [Sdk::Python, Sdk::TypeScript] {
        let reports = run_plan(sdk, &sessions, "startup");
        let report = &reports["wrong"];
        let shown = report["connect_error"].as_str().unwrap_or_default();
        for part in [command, "No such file or directory", "check the path"] {
            assert!(shown.contains(part), "{sdk:?}: {part:?} in {report:#}");
        }
    }
}
