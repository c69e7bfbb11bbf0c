//! A tool's result is fenced under that tool's own source; a hook artifact is recognised only
//! by all four of its fields; a trace status the verifier does not know is reported, and the
//! output checked as strictly as a tool result.

use fence_runtime::{ParseError, Source, fence};
use fence_surfaces::{
    FindingKind, VerifyContext, read_frame, read_record, read_sse, read_trace, verify_frame,
    verify_record, verify_stream, verify_trace,
};
use fence_tests::block;

fn json(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A frame for `tool` whose content is `content`, labelled with what its markers say.
fn frame(tool: &str, content: &str, rest: &str) -> String {
    let label = fence_surfaces::read_markers(content)
        .source()
        .map_or("null".to_owned(), json);
    format!(
        r#"{{"id":"t","artifact":{{"tool_name":{},"content":{},"fence_source":{label}{rest}}}}}"#,
        json(tool),
        json(content)
    )
}

const CALL: &str =
    r#","tool_call_id":"c1","is_error":false,"duration_ms":5,"exit_code":0,"truncated":false"#;
const FAILED: &str =
    r#","tool_call_id":"c1","is_error":true,"duration_ms":5,"exit_code":null,"truncated":false"#;

fn frame_kinds(json: &str, context: &VerifyContext) -> Vec<FindingKind> {
    verify_frame(&read_frame(json).unwrap(), context)
        .into_iter()
        .map(|finding| finding.kind)
        .collect()
}

fn mismatch(expected: &str, markers: &str) -> FindingKind {
    FindingKind::ToolSourceMismatch {
        expected: expected.into(),
        markers: markers.into(),
    }
}

#[test]
fn a_frame_fenced_under_another_tool_or_a_task_is_a_finding() {
    // The issue's examples: a `bash` frame, fenced and labelled under `tool:web-fetch` or
    // `task:user`, label and markers agreeing.
    let context = VerifyContext::new();
    for source in ["tool:web-fetch", "task:user", "task:event"] {
        let kinds = frame_kinds(&frame("bash", &block(source, "ok"), CALL), &context);
        assert_eq!(kinds, [mismatch("tool:bash", source)], "{source}");
        assert!(kinds[0].is_error());
    }
    assert_eq!(
        mismatch("tool:bash", "tool:web-fetch").to_string(),
        "a tool result is fenced under `tool:web-fetch`, but its tool's results are fenced under `tool:bash`"
    );
    // Its own tool's source is clean, and so is a tool that ran and failed, fenced.
    assert_eq!(
        frame_kinds(&frame("bash", &block("tool:bash", "ok"), CALL), &context),
        []
    );
    assert_eq!(
        frame_kinds(
            &frame("bash", &block("tool:web-fetch", "boom"), FAILED),
            &context
        ),
        [mismatch("tool:bash", "tool:web-fetch")]
    );
}

#[test]
fn the_expected_source_is_the_name_as_source_tool_sanitises_it() {
    let context = VerifyContext::new();
    for name in ["a>b", "two\nlines", "</untrusted-content>", "é 🦀"] {
        let own = fence(&Source::tool(name), "ok");
        assert_eq!(
            frame_kinds(&frame(name, own.as_str(), CALL), &context),
            [],
            "{name:?}"
        );
        let other = block("tool:other", "ok");
        assert_eq!(
            frame_kinds(&frame(name, &other, CALL), &context),
            [mismatch(Source::tool(name).as_str(), "tool:other")],
            "{name:?}"
        );
    }
}

#[test]
fn sources_of_unknown_kinds_and_exempt_results_are_not_tied_to_the_name() {
    let context = VerifyContext::new()
        .with_skills(["triage"])
        .with_tools(["bash"]);
    // A peer hand-off tool's reply fenced under `member:`: reported as an unknown kind only.
    assert_eq!(
        frame_kinds(
            &frame("ask-researcher", &block("member:researcher", "x"), CALL),
            &context
        ),
        [FindingKind::UnknownSourceKind {
            source: "member:researcher".into()
        }]
    );
    // A skill's or a dispatch failure's fence is wrong whatever it names.
    let names: Vec<_> = frame_kinds(
        &frame(
            "triage",
            &block("tool:web-fetch", "x"),
            &CALL.replace(r#""exit_code":0"#, r#""exit_code":null"#),
        ),
        &context,
    )
    .iter()
    .map(FindingKind::name)
    .collect();
    assert_eq!(names, ["fence-on-exempt"]);
}

#[test]
fn record_lines_are_tied_to_the_tool_their_call_went_to() {
    let fetched = json(&block("tool:web-fetch", "ok"));
    // The name from the record's own tool_use part.
    let record = format!(
        "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"bash\",\"input\":{{}}}}]}}\n\
         {{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"is_error\":false,\"content\":[{{\"type\":\"text\",\"text\":{fetched}}}],\"fence\":\"tool:web-fetch\"}}\n\
         {{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":{fetched}}}]}}\n"
    );
    let findings = verify_record(&read_record(record.as_bytes()), &VerifyContext::new());
    let found: Vec<_> = findings
        .iter()
        .map(|f| (f.location.line, f.location.part, f.kind.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (2, None, mismatch("tool:bash", "tool:web-fetch")),
            (3, Some(0), mismatch("tool:bash", "tool:web-fetch")),
        ]
    );

    // The name from the context, and from a legacy `function` line's own `name`.
    let line =
        format!(r#"{{"role":"tool","tool_call_id":"c9","is_error":false,"content":{fetched}}}"#);
    let report = read_record(line.as_bytes());
    assert_eq!(verify_record(&report, &VerifyContext::new()), []);
    let findings = verify_record(&report, &VerifyContext::new().with_call("c9", "bash"));
    assert_eq!(findings[0].kind, mismatch("tool:bash", "tool:web-fetch"));
    let legacy = format!(r#"{{"role":"function","name":"bash","content":{fetched}}}"#);
    let findings = verify_record(&read_record(legacy.as_bytes()), &VerifyContext::new());
    assert_eq!(findings[0].kind, mismatch("tool:bash", "tool:web-fetch"));
}

#[test]
fn trace_tool_calls_are_tied_to_their_tool_name() {
    let output = block("tool:web-fetch", "ok");
    let trace = format!(
        r#"{{"event_type":"tool_call","tool_name":"bash","output":{},"output_bytes":{},"status":"ok"}}"#,
        json(&output),
        output.len()
    );
    let findings = verify_trace(&read_trace(trace.as_bytes()), &VerifyContext::new());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind, mismatch("tool:bash", "tool:web-fetch"));
}

#[test]
fn a_raw_output_with_an_exit_code_and_null_ids_is_not_a_hook_artifact() {
    // The issue's example: classed as a hook artifact, this verified clean.
    let raw = r#"{"id":"t","artifact":{"tool_name":"bash","content":"RAW","fence_source":null,"tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":0,"truncated":false}}"#;
    let frame = read_frame(raw).unwrap();
    let context = VerifyContext::new();
    let kinds: Vec<FindingKind> = verify_frame(&frame, &context)
        .into_iter()
        .map(|finding| finding.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            FindingKind::NotAHookArtifact {
                exit_code: Some(0),
                is_error: Some(false)
            },
            FindingKind::UnfencedToolResult {
                error: ParseError::NoOpener
            },
        ]
    );
    assert_eq!(
        kinds[0].to_string(),
        "`tool_call_id` and `duration_ms` are null as on a hook artifact, but `exit_code` is 0 and `is_error` is false (a hook artifact has `exit_code` null and `is_error` false): checked as a call"
    );
    let stream = read_sse(format!("event: artifact\nid: 4\ndata: {raw}\n\n").as_bytes());
    let names: Vec<_> = verify_stream(&stream, &context)
        .iter()
        .map(|f| f.kind.name())
        .collect();
    assert_eq!(names, ["not-a-hook-artifact", "unfenced-tool-result"]);
}

#[test]
fn a_hook_artifact_has_all_four_of_its_fields() {
    let context = VerifyContext::new();
    let with = |rest: &str| {
        format!(
            r#"{{"artifact":{{"tool_name":"lint","content":"lint passed","fence_source":null{rest}}}}}"#
        )
    };
    let hook = with(r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null"#);
    assert_eq!(frame_kinds(&hook, &context), []);
    // Checked as a call: a failed call may be plain text, a tool's result may not.
    for (rest, exit_code, is_error, then) in [
        (
            r#","tool_call_id":null,"is_error":true,"duration_ms":null,"exit_code":null"#,
            None,
            Some(true),
            &[][..],
        ),
        (
            r#","tool_call_id":null,"duration_ms":null,"exit_code":null"#,
            None,
            None,
            &["unfenced-tool-result"][..],
        ),
        (
            r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":2"#,
            Some(2),
            Some(false),
            &["unfenced-tool-result"][..],
        ),
    ] {
        let json = with(rest);
        let kinds = frame_kinds(&json, &context);
        assert_eq!(
            kinds[0],
            FindingKind::NotAHookArtifact {
                exit_code,
                is_error
            },
            "{rest}"
        );
        assert_eq!(
            kinds[1..].iter().map(FindingKind::name).collect::<Vec<_>>(),
            then,
            "{rest}"
        );
    }
    // One of the two ids null is not hook-shaped at all: an ordinary call.
    let half = with(r#","tool_call_id":null,"is_error":false,"duration_ms":3,"exit_code":null"#);
    assert_eq!(
        frame_kinds(&half, &context)
            .iter()
            .map(FindingKind::name)
            .collect::<Vec<_>>(),
        ["unfenced-tool-result"]
    );
}

#[test]
fn an_unknown_trace_status_is_a_finding_and_its_output_must_be_fenced() {
    // The issue's examples: read as a failed call, their raw outputs were accepted.
    for status in ["OK", "success", "Error", ""] {
        let trace = format!(
            r#"{{"event_type":"tool_call","tool_name":"bash","output":"RAW","output_bytes":3,"status":{}}}"#,
            json(status)
        );
        let findings = verify_trace(&read_trace(trace.as_bytes()), &VerifyContext::new());
        let kinds: Vec<_> = findings.iter().map(|f| f.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                FindingKind::UnknownStatus {
                    status: status.into()
                },
                FindingKind::UnfencedToolResult {
                    error: ParseError::NoOpener
                },
            ],
            "{status}"
        );
        assert!(kinds[0].is_error());
    }
    assert_eq!(
        FindingKind::UnknownStatus {
            status: "OK".into()
        }
        .to_string(),
        "`status` `OK` is neither `ok` nor `error`: checked as a tool result"
    );

    // Fenced, or with no output recorded, only the status is reported; a skill_call's too.
    let fenced = block("tool:bash", "ok");
    let trace = format!(
        "{{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output\":{},\"output_bytes\":{},\"status\":\"success\"}}\n\
         {{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output_bytes\":3,\"status\":\"OK\"}}\n\
         {{\"event_type\":\"skill_call\",\"skill_name\":\"triage\",\"output_bytes\":3,\"status\":\"done\"}}\n\
         {{\"event_type\":\"skill_call\",\"skill_name\":\"triage\",\"output_bytes\":3}}\n\
         {{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output\":\"refused\",\"output_bytes\":7,\"status\":\"error\"}}\n",
        json(&fenced),
        fenced.len()
    );
    let found: Vec<_> = verify_trace(&read_trace(trace.as_bytes()), &VerifyContext::new())
        .iter()
        .map(|f| (f.location.line, f.kind.name()))
        .collect();
    assert_eq!(
        found,
        [
            (1, "unknown-status"),
            (2, "unknown-status"),
            (3, "unknown-status")
        ]
    );
}
