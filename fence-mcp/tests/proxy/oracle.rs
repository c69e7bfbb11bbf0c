//! What `fence mcp` makes of a session's results, for the proxy's tests and the SDK tests: from
//! a direct run's results, the results the same run through the proxy must give (the fencing
//! table, `fence-mcp/docs/fencing-table.md`).

use fence_runtime::{Source, fence, neutralise};
use serde_json::Value;

/// `value` with every string in it, keys too, neutralised: what the proxy makes of structured
/// content and of a JSON-RPC error.
pub(crate) fn neutralised(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(neutralise(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(neutralised).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (neutralise(key).into_owned(), neutralised(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Neutralises the string at `pointer` in `value`, if there is one.
fn neutralise_at(value: &mut Value, pointer: &str) {
    if let Some(Value::String(text)) = value.pointer_mut(pointer) {
        *text = neutralise(text).into_owned();
    }
}

/// What the proxy makes of `direct`, an object of a session's results by name: `"initialize"`
/// (its `instructions` neutralised), `"tools/list"` (each tool's `title`, `description` and
/// `annotations.title` neutralised), and each tool's result by the tool's name, an object with
/// `content` or `{"error": …}` ([`fence_result`]). Any other member (a string a driver adds) is
/// kept.
pub(crate) fn fenced_expectation(direct: &Value) -> Value {
    let mut expected = direct.clone();
    let members = expected.as_object_mut().expect("a session's results");
    for (key, value) in members.iter_mut() {
        match key.as_str() {
            "initialize" => neutralise_at(value, "/instructions"),
            "tools/list" => {
                for tool in value["tools"].as_array_mut().expect("a list of tools") {
                    for pointer in ["/title", "/description", "/annotations/title"] {
                        neutralise_at(tool, pointer);
                    }
                }
            }
            tool if value.get("content").is_some() || value.get("error").is_some() => {
                fence_result(tool, value);
            }
            _ => {}
        }
    }
    expected
}

/// A tool's result as the proxy passes it on: each `text` block's `text`, and each embedded
/// resource's `text`, replaced by exactly `fence_runtime`'s block of it under
/// `tool:<tool>`; `structuredContent` neutralised; everything else kept. A JSON-RPC error
/// (`{"error": {…}}`) has every string neutralised; an error the client raised of its own (a
/// string) is kept.
pub(crate) fn fence_result(tool: &str, result: &mut Value) {
    if let Some(error) = result.get_mut("error") {
        if error.is_object() {
            *error = neutralised(error);
        }
        return;
    }
    let source = Source::tool(tool);
    for block in result["content"]
        .as_array_mut()
        .unwrap_or_else(|| panic!("{tool}: a content array"))
    {
        let pointer = match block["type"].as_str() {
            Some("text") => "/text",
            Some("resource") => "/resource/text",
            _ => continue,
        };
        if let Some(Value::String(text)) = block.pointer_mut(pointer) {
            let block = fence(&source, text);
            block.as_str().clone_into(text);
        }
    }
    if let Some(structured) = result.get_mut("structuredContent") {
        *structured = neutralised(structured);
    }
}

/// Asserts `proxied` is [`fenced_expectation`] of `direct`, member by member, saying which
/// member differs and how. `case` names the run.
pub(crate) fn assert_fenced_run(case: &str, direct: &Value, proxied: &Value) {
    let expected = fenced_expectation(direct);
    assert_ne!(
        &expected, direct,
        "{case}: the direct run has text to fence"
    );
    let keys = |value: &Value| -> Vec<String> {
        let mut keys: Vec<String> = value
            .as_object()
            .unwrap_or_else(|| panic!("{case}: a session's results: {value}"))
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(proxied), keys(&expected), "{case}: the same results");
    for (key, want) in expected.as_object().into_iter().flatten() {
        let got = &proxied[key];
        assert!(
            got == want,
            "{case}: `{key}` through the proxy is not the direct one as the proxy rewrites \
             it\n  got:      {got}\n  expected: {want}\n  direct:   {}",
            direct[key]
        );
    }
}
