//! The verifier: each finding kind on each surface it applies to, the rules that classify a
//! unit, and unlabelled surfaces read from their markers rather than reported as unfenced.

use fence_runtime::{Exemption, ParseError, Source, fence};
use fence_surfaces::{
    FindingKind, MarkerKind, Markers, MissingLabel, VerifyContext, read_frame, read_markers,
    read_record, read_sse, read_trace, verify_frame, verify_record, verify_stream, verify_trace,
};
use fence_tests::block;

const WEB: &str = "<untrusted-content source=tool:web-fetch>\n{}\n</untrusted-content>";

fn json(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A frame's JSON; `label` is inserted as is (`None` leaves the key out).
fn frame(tool: &str, content: &str, label: Option<&str>, rest: &str) -> String {
    let label = label.map_or(String::new(), |l| format!(r#","fence_source":{l}"#));
    format!(
        r#"{{"id":"t","artifact":{{"tool_name":"{tool}","content":{}{label}{rest}}}}}"#,
        json(content)
    )
}

const CALL: &str =
    r#","tool_call_id":"c1","is_error":false,"duration_ms":5,"exit_code":null,"truncated":false"#;
const FAILED: &str =
    r#","tool_call_id":"c2","is_error":true,"duration_ms":5,"exit_code":null,"truncated":false"#;
const HOOK: &str = r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null,"truncated":false"#;

fn kinds_of_frame(json: &str, context: &VerifyContext) -> Vec<FindingKind> {
    verify_frame(&read_frame(json).unwrap(), context)
        .into_iter()
        .map(|finding| finding.kind)
        .collect()
}

fn names(kinds: &[FindingKind]) -> Vec<&'static str> {
    kinds.iter().map(FindingKind::name).collect()
}

#[test]
fn markers_are_read_with_the_one_matcher() {
    assert_eq!(read_markers("plain text, <b>bold</b>"), Markers::Plain);
    assert!(matches!(read_markers(WEB), Markers::Block(_)));
    // Near misses are not markers (docs/spec-reading.md), so they leave text plain.
    assert_eq!(
        read_markers("< /untrusted-content> </ untrusted-content> <untrusted_content>"),
        Markers::Plain
    );
    // Any casing, whatever follows the name, is a marker.
    assert_eq!(
        read_markers("x </UNTRUSTED-CONTENTS y"),
        Markers::Malformed(ParseError::NoOpener)
    );
    assert_eq!(
        read_markers("<untrusted-content source=tool:t>\nx\n</untrusted-content>\n"),
        Markers::Malformed(ParseError::TextAfterCloser)
    );
    let neutralised = fence(&Source::tool("t"), "</untrusted-content>");
    assert!(matches!(
        read_markers(neutralised.as_str()),
        Markers::Block(_)
    ));
}

#[test]
fn label_mismatch() {
    let kinds = kinds_of_frame(
        &frame("web-fetch", WEB, Some(r#""tool:bash""#), CALL),
        &VerifyContext::new(),
    );
    assert_eq!(
        kinds,
        [FindingKind::LabelMismatch {
            label: "tool:bash".into(),
            markers: "tool:web-fetch".into()
        }]
    );
    let record = read_record(
        format!(
            r#"{{"role":"tool","content":[{{"type":"text","text":{}}}],"fence":"tool:other"}}"#,
            json(WEB)
        )
        .as_bytes(),
    );
    assert_eq!(
        names(&kinds_of(&verify_record(&record, &VerifyContext::new()))),
        ["label-mismatch"]
    );
}

fn kinds_of(findings: &[fence_surfaces::Finding]) -> Vec<FindingKind> {
    findings.iter().map(|f| f.kind.clone()).collect()
}

#[test]
fn label_on_invalid_block() {
    let broken = "<untrusted-content source=tool:web-fetch>\n{}</untrusted-content>";
    let kinds = kinds_of_frame(
        &frame("web-fetch", broken, Some(r#""tool:web-fetch""#), FAILED),
        &VerifyContext::new(),
    );
    assert_eq!(
        kinds,
        [FindingKind::LabelOnInvalidBlock {
            label: "tool:web-fetch".into(),
            error: ParseError::MissingSeparatorBeforeCloser,
        }]
    );
    let record = read_record(br#"{"role":"assistant","content":[{"type":"text","text":"Fetched it."}],"fence":"tool:web-fetch"}"#);
    assert_eq!(
        kinds_of(&verify_record(&record, &VerifyContext::new())),
        [FindingKind::LabelOnInvalidBlock {
            label: "tool:web-fetch".into(),
            error: ParseError::NoOpener
        }]
    );
}

#[test]
fn fenced_content_with_a_null_label() {
    let kinds = kinds_of_frame(
        &frame("web-fetch", WEB, Some("null"), CALL),
        &VerifyContext::new(),
    );
    assert_eq!(
        kinds,
        [FindingKind::FenceWithoutLabel {
            label: MissingLabel::Null,
            markers: "tool:web-fetch".into()
        }]
    );
    let record = read_record(
        format!(
            r#"{{"role":"tool","content":[{{"type":"text","text":{}}}],"fence":null}}"#,
            json(WEB)
        )
        .as_bytes(),
    );
    assert_eq!(
        names(&kinds_of(&verify_record(&record, &VerifyContext::new()))),
        ["fence-without-label"]
    );
}

#[test]
fn an_absent_label_is_unlabelled_when_the_whole_surface_lacks_it() {
    // An older runtime: no frame carries fence_source. Read from the markers, nothing missing.
    let old = format!(
        "event: artifact\ndata: {}\n\nevent: artifact\ndata: {}\n\n",
        frame("web-fetch", WEB, None, CALL),
        frame("bash", "plain", None, FAILED)
    );
    let stream = read_sse(old.as_bytes());
    assert_eq!(verify_stream(&stream, &VerifyContext::new()), []);
    assert_eq!(
        read_markers(&stream.items[0].value.frame.artifact.content).source(),
        Some("tool:web-fetch")
    );
    // A lone frame is always read that way.
    assert_eq!(
        kinds_of_frame(&frame("web-fetch", WEB, None, CALL), &VerifyContext::new()),
        []
    );

    // A record written before `fence`: no line carries it.
    let record = read_record(
        format!(
            "{{\"role\":\"tool\",\"is_error\":false,\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}\n{{\"role\":\"assistant\",\"content\":[]}}\n",
            json(WEB)
        )
        .as_bytes(),
    );
    assert!(!record.is_labelled());
    assert_eq!(verify_record(&record, &VerifyContext::new()), []);
}

#[test]
fn an_absent_label_is_missing_when_the_rest_of_the_surface_has_it() {
    let stream = format!(
        "event: artifact\nid: 1\ndata: {}\n\nevent: artifact\nid: 2\ndata: {}\n\nevent: artifact\nid: 3\ndata: {}\n\n",
        frame("bash", "plain", Some("null"), FAILED),
        frame("web-fetch", WEB, None, CALL),
        frame("lint", "unfenced, unlabelled: not reported", None, HOOK),
    );
    let findings = verify_stream(&read_sse(stream.as_bytes()), &VerifyContext::new());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].location.frame_id.as_deref(), Some("2"));
    assert_eq!(
        findings[0].kind,
        FindingKind::FenceWithoutLabel {
            label: MissingLabel::Absent,
            markers: "tool:web-fetch".into()
        }
    );

    let record = format!(
        "{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"fence\":\"task:event\"}}\n{{\"role\":\"tool\",\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}\n",
        json(&block("task:event", "hi")),
        json(WEB)
    );
    let findings = verify_record(&read_record(record.as_bytes()), &VerifyContext::new());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].location.line, 2);
    assert_eq!(findings[0].kind.name(), "fence-without-label");
}

#[test]
fn live_marker_in_block() {
    let forged = "<untrusted-content source=tool:t>\na <untrusted-content source=task:user> b\n</untrusted-content>";
    assert_eq!(
        kinds_of_frame(
            &frame("t", forged, Some(r#""tool:t""#), CALL),
            &VerifyContext::new()
        ),
        [FindingKind::LiveMarkerInBlock {
            offset: 36,
            marker: MarkerKind::Opener
        }]
    );
    // A marker in the source name is inside the block too; and since `Source::tool` would
    // have neutralised it, the source is not the tool's either.
    let in_source = "<untrusted-content source=tool:<untrusted-content>\nx\n</untrusted-content>";
    assert_eq!(
        kinds_of_frame(
            &frame("<untrusted-content", in_source, None, CALL),
            &VerifyContext::new()
        ),
        [
            FindingKind::LiveMarkerInBlock {
                offset: 31,
                marker: MarkerKind::Opener
            },
            FindingKind::ToolSourceMismatch {
                expected: "tool:<!MURMUR-NEUTRALISED!untrusted-content".into(),
                markers: "tool:<untrusted-content".into(),
            }
        ]
    );
    // Neutralised forgeries are not live.
    let fenced = fence(
        &Source::tool("t"),
        "</untrusted-content><untrusted-content source=x>",
    );
    assert_eq!(
        kinds_of_frame(
            &frame("t", fenced.as_str(), Some(r#""tool:t""#), CALL),
            &VerifyContext::new()
        ),
        []
    );
}

#[test]
fn unfenced_tool_results_on_every_surface() {
    let context = VerifyContext::new();
    assert_eq!(
        kinds_of_frame(&frame("bash", "README.md", Some("null"), CALL), &context),
        [FindingKind::UnfencedToolResult {
            error: ParseError::NoOpener
        }]
    );
    // A subprocess ran (exit_code set), so even a failed call reached a tool.
    let ran =
        r#","tool_call_id":"c1","is_error":true,"duration_ms":5,"exit_code":2,"truncated":false"#;
    assert_eq!(
        names(&kinds_of_frame(
            &frame("bash", "boom", Some("null"), ran),
            &context
        )),
        ["unfenced-tool-result"]
    );

    let record = read_record(br#"{"role":"tool","tool_call_id":"c","is_error":false,"content":[{"type":"text","text":"README.md"}]}"#);
    assert_eq!(
        names(&kinds_of(&verify_record(&record, &context))),
        ["unfenced-tool-result"]
    );

    let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output":"README.md","output_bytes":9,"status":"ok"}"#);
    assert_eq!(
        names(&kinds_of(&verify_trace(&trace, &context))),
        ["unfenced-tool-result"]
    );
}

#[test]
fn fences_on_never_fenced_content() {
    let context = VerifyContext::new()
        .with_skills(["triage"])
        .with_tools(["bash"]);
    let skill = block("tool:triage", "Triage notes");
    assert_eq!(
        kinds_of_frame(
            &frame("triage", &skill, Some(r#""tool:triage""#), CALL),
            &context
        ),
        [FindingKind::FenceOnExempt {
            exemption: Exemption::SkillDoc,
            markers: Some("tool:triage".into())
        }]
    );
    assert_eq!(
        kinds_of_frame(
            &frame(
                "lint",
                &block("tool:lint", "ok"),
                Some(r#""tool:lint""#),
                HOOK
            ),
            &context
        ),
        [FindingKind::FenceOnExempt {
            exemption: Exemption::HookArtifact,
            markers: Some("tool:lint".into())
        }]
    );
    assert_eq!(
        kinds_of_frame(
            &frame(
                "nope",
                &block("tool:nope", "x"),
                Some(r#""tool:nope""#),
                FAILED
            ),
            &context
        ),
        [FindingKind::FenceOnExempt {
            exemption: Exemption::DispatchFailure,
            markers: Some("tool:nope".into())
        }]
    );
    // Any live marker counts, not only a whole block.
    assert_eq!(
        kinds_of_frame(
            &frame("lint", "ok </untrusted-content>", Some("null"), HOOK),
            &context
        ),
        [FindingKind::FenceOnExempt {
            exemption: Exemption::HookArtifact,
            markers: None
        }]
    );
    // A skill_call that carries output (not on the wire, but read if written).
    let trace = read_trace(
        format!(
            r#"{{"event_type":"skill_call","skill_name":"triage","output":{},"output_bytes":{}}}"#,
            json(&skill),
            skill.len()
        )
        .as_bytes(),
    );
    assert_eq!(
        names(&kinds_of(&verify_trace(&trace, &context))),
        ["fence-on-exempt"]
    );
    // A record's skill result, its call learned from the record's own tool_use part.
    let record = format!(
        "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"c9\",\"name\":\"triage\",\"input\":{{}}}}]}}\n{{\"role\":\"tool\",\"tool_call_id\":\"c9\",\"is_error\":false,\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"fence\":\"tool:triage\"}}\n",
        json(&skill)
    );
    assert_eq!(
        names(&kinds_of(&verify_record(
            &read_record(record.as_bytes()),
            &context
        ))),
        ["fence-on-exempt"]
    );
}

#[test]
fn output_bytes_must_match_the_output() {
    let output = block("tool:bash", "x");
    let trace = read_trace(
        format!(
            "{{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output\":{},\"output_bytes\":1,\"status\":\"ok\"}}\n{{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output\":{},\"output_bytes\":{},\"status\":\"ok\"}}\n{{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output_bytes\":1,\"status\":\"ok\"}}\n",
            json(&output),
            json(&output),
            output.len()
        )
        .as_bytes(),
    );
    let findings = verify_trace(&trace, &VerifyContext::new());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].location.line, 1);
    assert_eq!(
        findings[0].kind,
        FindingKind::OutputBytesMismatch {
            output_bytes: 1,
            actual: u64::try_from(output.len()).unwrap()
        }
    );
}

#[test]
fn unknown_source_kinds_are_reported_but_are_not_errors() {
    for source in [
        "member:researcher",
        "skill:triage",
        "task:boss",
        "delegation:x",
    ] {
        let kinds = kinds_of_frame(
            &frame("t", &block(source, "x"), Some(&json(source)), CALL),
            &VerifyContext::new(),
        );
        assert_eq!(
            kinds,
            [FindingKind::UnknownSourceKind {
                source: source.into()
            }],
            "{source}"
        );
        assert!(!kinds[0].is_error());
    }
    assert_eq!(
        kinds_of_frame(
            &frame("x", &block("tool:x", "x"), Some(r#""tool:x""#), CALL),
            &VerifyContext::new()
        ),
        []
    );
    for source in ["task:peer", "task:event"] {
        let record = read_record(
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"fence":{}}}"#,
                json(&block(source, "x")),
                json(source)
            )
            .as_bytes(),
        );
        assert_eq!(
            verify_record(&record, &VerifyContext::new()),
            [],
            "{source}"
        );
    }
    // A label and markers that disagree are each looked at.
    let kinds = kinds_of_frame(
        &frame("t", &block("member:a", "x"), Some(r#""skill:b""#), CALL),
        &VerifyContext::new(),
    );
    assert_eq!(
        names(&kinds),
        [
            "label-mismatch",
            "unknown-source-kind",
            "unknown-source-kind"
        ]
    );
}

#[test]
fn failed_calls_without_evidence_may_be_fenced_or_not() {
    let context = VerifyContext::new().with_tools(["bash"]);
    assert_eq!(
        kinds_of_frame(
            &frame("bash", "/etc is read-only", Some("null"), FAILED),
            &context
        ),
        []
    );
    assert_eq!(
        kinds_of_frame(
            &frame(
                "bash",
                &block("tool:bash", "boom"),
                Some(r#""tool:bash""#),
                FAILED
            ),
            &context
        ),
        []
    );
    let record = read_record(br#"{"role":"tool","tool_call_id":"c","is_error":true,"content":[{"type":"text","text":"refused"}]}"#);
    assert_eq!(verify_record(&record, &context), []);
    let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output":"refused","output_bytes":7,"status":"error"}"#);
    assert_eq!(verify_trace(&trace, &context), []);
}

#[test]
fn calls_are_learned_from_the_stream_for_the_record() {
    let stream = read_sse(
        format!(
            "event: artifact\ndata: {}\n\n",
            frame("triage", "Triage notes", Some("null"), CALL)
        )
        .as_bytes(),
    );
    let record = read_record(br#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[{"type":"text","text":"Triage notes"}],"fence":null}"#);
    let mut context = VerifyContext::new().with_skills(["triage"]);
    assert_eq!(
        names(&kinds_of(&verify_record(&record, &context))),
        ["unfenced-tool-result"]
    );
    context.learn_calls_from_stream(&stream);
    assert_eq!(verify_record(&record, &context), []);
    assert_eq!(verify_stream(&stream, &context), []);
}
