//! The `agent_turn` example, run as a user runs it: rmcp's client calls the test server over
//! stdio through `FencedClient`, and the Chat Completions request it builds carries exactly one
//! block per tool message, under the tool its call named.

use std::process::Command;

use serde_json::Value;

use crate::common::binaries;

#[test]
fn the_agent_turn_sends_its_model_one_block_per_tool_message() {
    let binaries = binaries();
    let output = Command::new(&binaries.agent_turn)
        .arg(&binaries.server)
        .output()
        .expect("the example runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8(output.stdout).expect("it prints UTF-8");
    // The last-step check a runtime would run: every tool message one block, under its tool.
    let found = fence_surfaces::check_chat_request(&printed).expect("the request reads");
    assert!(found.is_empty(), "{found:?}");
    let request: Value = serde_json::from_str(&printed).expect("it prints JSON");
    let messages = request["messages"]
        .as_array()
        .expect("a request has messages");
    let calls = messages
        .iter()
        .find_map(|message| message["tool_calls"].as_array())
        .expect("the model asked for tools");
    let tool_messages: Vec<&Value> = messages
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(tool_messages.len(), calls.len(), "every call is answered");
    for message in tool_messages {
        let id = &message["tool_call_id"];
        let call = calls
            .iter()
            .find(|call| call["id"] == *id)
            .expect("each tool message answers a call");
        let tool = call["function"]["name"].as_str().unwrap();
        let text = message["content"]
            .as_str()
            .expect("the content is one text");
        let block = fence_runtime::parse(text)
            .unwrap_or_else(|error| panic!("{id}: not one well-formed block ({error}): {text}"));
        assert_eq!(block.source(), format!("tool:{tool}"), "{id}");
    }
}
