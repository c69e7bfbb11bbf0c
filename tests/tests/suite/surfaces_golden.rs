//! Byte-exact golden tests: serialising the examples of the reference page and of surfaces.md
//! gives exactly their JSON, and every golden file reads back and verifies clean.
//!
//! `golden/spec_*` and `golden/surfaces_*` are the examples copied byte for byte from the two
//! spec pages and are never regenerated. `golden/own_*` are this crate's own examples; run with
//! `UPDATE_GOLDEN=1` to rewrite them, and read the diff before committing.

use std::path::PathBuf;

use fence_runtime::{ModelContent, Source, TaskOrigin, TaskProvenance, ToolOutput, fence};
use fence_surfaces::{
    ArtifactFrame, CallMeta, EventMeta, Label, Nullable, RecordHeader, RecordLine, SkillCallEvent,
    SseEncoder, StateEffect, ToolCallEvent, VerifyContext, read_frame, read_record, read_sse,
    read_trace, verify_frame, verify_record, verify_stream, verify_trace,
};
use serde_json::value::RawValue;

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name)
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(golden_path(name))
        .unwrap_or_else(|error| panic!("golden file {name}: {error}"))
}

/// Compares `actual` with a golden file byte for byte. Only `own_*` files may be rewritten.
fn assert_golden(name: &str, actual: &str) {
    if name.starts_with("own_") && std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(golden_path(name), actual).unwrap();
    }
    let expected = golden(name);
    assert!(
        actual == expected,
        "{name} differs\n expected: {expected:?}\n   actual: {actual:?}"
    );
}

fn line(json: &str) -> String {
    format!("{json}\n")
}

fn bash_output() -> ToolOutput {
    ToolOutput::ok(fence(
        &Source::tool("bash"),
        "$ echo hello\nExit code: 0\nStdout:\nhello\n\nStderr:\n",
    ))
}

fn no_such_tool() -> ToolOutput {
    ToolOutput::dispatch_failure("tool 'no-such-tool' is not declared in manifest allowlist")
}

fn triage_doc() -> ModelContent {
    ModelContent::skill_doc("Triage: read the ticket first.\n")
}

fn web_fetch_output() -> ToolOutput {
    ToolOutput::ok(fence(&Source::tool("web-fetch"), "{\"status\":200}"))
}

#[test]
fn surfaces_md_successful_call() {
    let output = bash_output();
    let frame = ArtifactFrame::tool_result(
        "tsk_1",
        "bash",
        &output,
        CallMeta::new("toolu_01", 12).with_exit_code(0),
    );
    assert_golden("surfaces_artifact_bash_ok.json", &line(&frame.to_json()));
}

#[test]
fn surfaces_md_call_that_never_reached_a_tool() {
    let output = no_such_tool();
    // Whatever the metadata says, a call that never ran has no exit code.
    let frame = ArtifactFrame::tool_result(
        "tsk_1",
        "no-such-tool",
        &output,
        CallMeta::new("toolu_03", 0).with_exit_code(127),
    );
    assert_golden(
        "surfaces_artifact_dispatch_failure.json",
        &line(&frame.to_json()),
    );
}

#[test]
fn reference_page_record_lines() {
    let output = web_fetch_output();
    let tool = RecordLine::tool_result("toolu_1", &output).with_id("msg_01a0…");
    assert_golden("spec_record_tool_line.json", &line(&tool.to_json()));

    let reply = ModelContent::model_text("Fetched it.");
    let assistant = RecordLine::assistant(&reply).with_id("msg_01a0…");
    assert_golden(
        "spec_record_assistant_line.json",
        &line(&assistant.to_json()),
    );
}

/// The reference page's frame shows only the three keys that concern the fence; surfaces.md
/// says every frame carries all eight. So the page's frame, without its two closing braces, is
/// exactly the start of ours, and ours goes on with the other keys.
#[test]
fn reference_page_artifact_frame_is_the_start_of_ours() {
    let output = web_fetch_output();
    let frame = ArtifactFrame::tool_result(
        "task_01a0…",
        "web-fetch",
        &output,
        CallMeta::new("toolu_1", 8),
    );
    let json = frame.to_json();
    let spec = golden("spec_artifact_frame.json");
    let shown = spec.strip_suffix("}}\n").unwrap();
    assert!(
        json.starts_with(shown),
        "{json}\ndoes not start with\n{shown}"
    );
    assert_eq!(
        &json[shown.len()..],
        r#","tool_call_id":"toolu_1","is_error":false,"duration_ms":8,"exit_code":null,"truncated":false}}"#
    );
}

#[test]
fn own_frames_of_the_other_kinds() {
    let lint = ModelContent::hook_artifact("lint passed\n");
    let hook = ArtifactFrame::hook_artifact("tsk_1", "lint", &lint);
    assert_golden("own_artifact_hook.json", &line(&hook.to_json()));

    let doc = triage_doc();
    let skill = ArtifactFrame::skill_result("tsk_1", "triage", &doc, "toolu_02", 1);
    assert_golden("own_artifact_skill.json", &line(&skill.to_json()));

    let failed = ToolOutput::error(fence(
        &Source::tool("read-file"),
        "No such file or directory (os error 2)",
    ));
    let frame =
        ArtifactFrame::tool_result("tsk_1", "read-file", &failed, CallMeta::new("toolu_04", 2));
    assert_golden("own_artifact_tool_error.json", &line(&frame.to_json()));
}

#[test]
fn own_record() {
    let header = RecordHeader::new().with_field("version", 1);
    let task = ModelContent::task(
        &TaskProvenance::derive(TaskOrigin::Event),
        "New ticket: the export button does nothing.",
    );
    let fetched = web_fetch_output();
    let refused = ToolOutput::refusal("/etc is read-only");
    let reply = ModelContent::model_text("Fetched it.");
    let doc = triage_doc();
    let lines = [
        header.to_json(),
        RecordLine::user(&task).with_id("msg_1").to_json(),
        RecordLine::tool_result("toolu_1", &fetched)
            .with_id("msg_2")
            .to_json(),
        RecordLine::skill_result("toolu_2", &doc)
            .with_id("msg_3")
            .to_json(),
        RecordLine::tool_result("toolu_3", &refused)
            .with_id("msg_4")
            .to_json(),
        RecordLine::assistant(&reply).with_id("msg_5").to_json(),
    ];
    let record: String = lines.iter().map(|l| line(l)).collect();
    assert_golden("own_record.jsonl", &record);
}

#[test]
fn own_trace() {
    let input = RawValue::from_string(r#"{"url":"https://example.com/status"}"#.into()).unwrap();
    let fetched = web_fetch_output();
    let bash_input = RawValue::from_string(r#"{"command":"echo hello"}"#.into()).unwrap();
    let bash = bash_output();
    let events = [
        ToolCallEvent::new(
            EventMeta::new("ses_1", 1_767_225_600_000, 1),
            "web-fetch",
            &input,
            &fetched,
            40,
        )
        .with_state_effect(StateEffect::Read)
        .with_resource_id("https://example.com/status")
        .to_json(),
        ToolCallEvent::new(
            EventMeta::new("ses_1", 1_767_225_600_050, 1),
            "bash",
            &bash_input,
            &bash,
            12,
        )
        .with_output()
        .to_json(),
        SkillCallEvent::new(
            EventMeta::new("ses_1", 1_767_225_600_090, 2),
            "triage",
            &triage_doc(),
            1,
        )
        .to_json(),
    ];
    let trace: String = events.iter().map(|l| line(l)).collect();
    assert_golden("own_trace.jsonl", &trace);
}

#[test]
fn own_sse_capture() {
    let bash = bash_output();
    let failure = no_such_tool();
    let mut encoder = SseEncoder::new();
    let mut capture = String::from(SseEncoder::HEARTBEAT);
    capture += &encoder.encode(&ArtifactFrame::tool_result(
        "tsk_1",
        "bash",
        &bash,
        CallMeta::new("toolu_01", 12).with_exit_code(0),
    ));
    capture += &encoder.encode(&ArtifactFrame::tool_result(
        "tsk_1",
        "no-such-tool",
        &failure,
        CallMeta::new("toolu_03", 0),
    ));
    capture += SseEncoder::HEARTBEAT;
    capture += &encoder.encode(&ArtifactFrame::hook_artifact(
        "tsk_1",
        "lint",
        &ModelContent::hook_artifact("lint passed\n"),
    ));
    assert_golden("own_capture.sse", &capture);
}

#[test]
fn every_golden_frame_reads_back_and_verifies_clean() {
    let context =
        VerifyContext::new()
            .with_skills(["triage"])
            .with_tools(["bash", "web-fetch", "read-file"]);
    for name in [
        "spec_artifact_frame.json",
        "surfaces_artifact_bash_ok.json",
        "surfaces_artifact_dispatch_failure.json",
        "own_artifact_hook.json",
        "own_artifact_skill.json",
        "own_artifact_tool_error.json",
    ] {
        let frame = read_frame(golden(name).trim_end()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(verify_frame(&frame, &context), [], "{name}");
    }
}

#[test]
fn the_reference_frame_reads_with_its_missing_keys_absent() {
    let frame = read_frame(golden("spec_artifact_frame.json").trim_end()).unwrap();
    assert_eq!(frame.id.as_deref(), Some("task_01a0…"));
    let artifact = &frame.artifact;
    assert_eq!(artifact.tool_name.as_deref(), Some("web-fetch"));
    assert_eq!(
        artifact.fence_source,
        Label::Source("tool:web-fetch".into())
    );
    assert_eq!(artifact.tool_call_id, Nullable::Absent);
    assert_eq!(artifact.duration_ms, Nullable::Absent);
    assert_eq!(artifact.is_error, None);
}

#[test]
fn the_dispatch_failure_example_reads_as_written() {
    let frame = read_frame(golden("surfaces_artifact_dispatch_failure.json").trim_end()).unwrap();
    let artifact = &frame.artifact;
    assert_eq!(artifact.fence_source, Label::Null);
    assert_eq!(artifact.tool_call_id, Nullable::Value("toolu_03".into()));
    assert_eq!(artifact.is_error, Some(true));
    assert_eq!(artifact.duration_ms, Nullable::Value(0));
    assert_eq!(artifact.exit_code, None);
    assert_eq!(artifact.truncated, Some(false));
}

#[test]
fn golden_record_trace_and_capture_read_back_clean() {
    let context = VerifyContext::new()
        .with_skills(["triage"])
        .with_tools(["bash", "web-fetch"])
        .with_call("toolu_2", "triage");

    let record = read_record(golden("own_record.jsonl").as_bytes());
    assert_eq!(
        (
            record.counts.read,
            record.counts.skipped,
            record.counts.failed
        ),
        (6, 1, 0)
    );
    assert!(record.is_labelled());
    assert_eq!(verify_record(&record, &context), []);

    let spec_lines =
        golden("spec_record_tool_line.json") + &golden("spec_record_assistant_line.json");
    let spec_record = read_record(spec_lines.as_bytes());
    assert_eq!(spec_record.counts.ok(), 2);
    assert_eq!(
        spec_record.items[0].value.fence,
        Label::Source("tool:web-fetch".into())
    );
    assert_eq!(spec_record.items[1].value.fence, Label::Absent);
    assert_eq!(verify_record(&spec_record, &context), []);

    let trace = read_trace(golden("own_trace.jsonl").as_bytes());
    assert_eq!(trace.counts.ok(), 3);
    assert_eq!(verify_trace(&trace, &context), []);

    let stream = read_sse(golden("own_capture.sse").as_bytes());
    assert_eq!(
        (
            stream.counts.read,
            stream.counts.skipped,
            stream.counts.failed
        ),
        (3, 0, 0)
    );
    let ids: Vec<_> = stream.items.iter().map(|f| f.value.id.as_deref()).collect();
    assert_eq!(ids, [Some("1"), Some("2"), Some("3")]);
    assert_eq!(verify_stream(&stream, &context), []);
}

#[test]
fn a_frame_of_a_block_cut_short_says_it_is_truncated_whatever_the_call_says() {
    let mut buffer = fence_runtime::FenceBuffer::new(&Source::tool("bash"));
    buffer.push_str("$ make\nbuilding");
    let cut = ToolOutput::error(buffer.into_truncated_block());
    let whole = bash_output();
    let truncated = |output: &ToolOutput, flag: bool| {
        let frame = ArtifactFrame::tool_result(
            "tsk_1",
            "bash",
            output,
            CallMeta::new("toolu_1", 3).with_truncated(flag),
        );
        read_frame(&frame.to_json()).unwrap().artifact.truncated
    };
    assert_eq!(truncated(&cut, false), Some(true));
    assert_eq!(truncated(&cut, true), Some(true));
    assert_eq!(truncated(&whole, false), Some(false));
    assert_eq!(truncated(&whole, true), Some(true));
    // The notice inside an unfenced text is the runtime's own words, not a cut stream.
    let refusal = ToolOutput::refusal(format!("x\n{}", fence_runtime::TRUNCATION_NOTICE));
    assert_eq!(truncated(&refusal, false), Some(false));
}
