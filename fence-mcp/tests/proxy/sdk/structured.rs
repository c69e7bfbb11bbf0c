//! `--structured-content remove` with the Python SDK.

#[allow(clippy::wildcard_imports)]
use super::*;

/// `--structured-content remove`, with the Python SDK, which refuses a result without
/// `structuredContent` only when the tool declares an `outputSchema`: the proxy removes both,
/// and the client reads the fenced text.
#[test]
fn structured_content_removed_with_the_output_schema_leaves_the_python_sdk_the_fenced_text() {
    if !installed() {
        return;
    }
    let server = |scenario: &str| {
        vec![
            python().display().to_string(),
            here().join("hostile_server.py").display().to_string(),
            scenario.to_owned(),
        ]
    };
    let proxied = |options: &[&str], scenario: &str| {
        let mut command = vec![fence().display().to_string(), "mcp".into()];
        command.extend(options.iter().map(|option| (*option).to_owned()));
        command.push("--".into());
        command.extend(server(scenario));
        command
    };
    let sessions: Vec<Value> = [
        ("direct", server("structured")),
        ("neutralised", proxied(&[], "structured")),
        (
            "removed",
            proxied(&["--structured-content", "remove"], "structured"),
        ),
        ("missing", server("structured-missing")),
    ]
    .into_iter()
    .map(|(label, command)| {
        json!({ "label": label, "command": command, "ops": scenario("structured").ops_json() })
    })
    .collect();
    let reports = run_plan(Sdk::Python, &sessions, "structured");
    let outcome = |label: &str| {
        reports[label]["ops"][0]["outcome"]
            .as_str()
            .map(str::to_owned)
    };
    // Directly, the forged structured content is handed on; through the proxy it is
    // neutralised, and with `remove` it is gone, the text fenced and the result accepted.
    assert!(
        !violations(&reports["direct"]).is_empty(),
        "{:#}",
        reports["direct"]
    );
    assert!(
        violations(&reports["neutralised"]).is_empty(),
        "{:#}",
        reports["neutralised"]
    );
    let removed = &reports["removed"];
    assert_eq!(outcome("removed").as_deref(), Some("result"), "{removed:#}");
    assert!(violations(removed).is_empty(), "{removed:#}");
    assert!(
        strs(&removed["ops"][0]["texts"]).next().is_some(),
        "{removed:#}"
    );
    assert!(
        strs(&removed["ops"][0]["strings"]).all(|string| !string.contains("ignore previous")),
        "no structured content is left: {removed:#}"
    );
    // Why the output schema goes too: the SDK refuses a result without structured content
    // from a tool that declares one.
    assert_eq!(
        outcome("missing").as_deref(),
        Some("error"),
        "{:#}",
        reports["missing"]
    );
}
