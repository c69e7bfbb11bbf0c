//! Nothing read vanishes from a verdict: every unit a reader could not read is a finding at its
//! line, and a key written twice makes a unit unreadable on every surface alike.

use fence_surfaces::{
    Finding, FindingKind, Location, ReadError, Surface, VerifyContext, read_frame, read_record,
    read_sse, read_trace, verify_record, verify_stream, verify_trace,
};

const BLOCK: &str = r#""<untrusted-content source=tool:bash>\nok\n</untrusted-content>""#;

/// A bash frame's JSON with `content` (JSON) and the rest of its keys as `rest`.
fn bash_frame(content: &str, rest: &str) -> String {
    format!(r#"{{"id":"tsk_1","artifact":{{"tool_name":"bash","content":{content}{rest}}}}}"#)
}

const CALL: &str = r#","fence_source":"tool:bash","tool_call_id":"c1","is_error":false,"duration_ms":3,"exit_code":0,"truncated":false"#;

fn event(id: usize, data: &str) -> String {
    format!("event: artifact\nid: {id}\ndata: {data}\n\n")
}

fn unreadable(finding: &Finding) -> &ReadError {
    match &finding.kind {
        FindingKind::UnreadableUnit { error } => error,
        other => panic!("not an unreadable unit: {other:?}"),
    }
}

#[test]
fn a_frame_with_a_fractional_duration_is_a_finding_at_its_line() {
    // The issue's example: the raw tool output hides behind a key of the wrong type.
    let raw = bash_frame(
        r#""RAW, unfenced""#,
        r#","fence_source":null,"tool_call_id":"c2","is_error":false,"duration_ms":1.5,"exit_code":0,"truncated":false"#,
    );
    let capture = event(1, &bash_frame(BLOCK, CALL)) + &event(2, &raw);
    let stream = read_sse(capture.as_bytes());
    assert_eq!(stream.counts.failed, 1);
    let findings = verify_stream(&stream, &VerifyContext::new());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        findings[0].location,
        Location::new(Surface::ArtifactStream, 7).with_frame_id("2")
    );
    assert!(findings[0].is_error());
    assert_eq!(findings[0].kind.name(), "unreadable-unit");
    let ReadError::Shape(message) = unreadable(&findings[0]) else {
        panic!("{:?}", findings[0]);
    };
    assert!(message.contains("1.5"), "{message}");
    assert_eq!(
        findings[0].to_string(),
        "artifact stream, line 7 (frame id 2): cannot be read, so nothing in it was checked: unexpected shape: invalid type: floating point `1.5`, expected u64"
    );
}

#[test]
fn a_frame_with_its_content_written_twice_is_a_finding() {
    // The issue's example: a fenced `content` first, the raw one second.
    let twice = bash_frame(&format!(r#"{BLOCK},"content":"RAW""#), CALL);
    let findings = verify_stream(
        &read_sse(event(1, &twice).as_bytes()),
        &VerifyContext::new(),
    );
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        unreadable(&findings[0]),
        &ReadError::DuplicateKey {
            key: "content".into(),
            column: 129,
        }
    );
    assert_eq!(findings[0].location.frame_id.as_deref(), Some("1"));
    assert_eq!(
        findings[0].to_string(),
        "artifact stream, line 3 (frame id 1): cannot be read, so nothing in it was checked: duplicate key `content` at column 129: readers disagree on which value wins; write each key once"
    );
}

#[test]
fn a_record_line_with_a_string_is_error_is_a_finding_at_its_line() {
    // The issue's example: `"is_error":"false"` hides an unfenced tool result.
    let record = format!(
        "{{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"is_error\":false,\"content\":[{{\"type\":\"text\",\"text\":{BLOCK}}}],\"fence\":\"tool:bash\"}}\n\
         {{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"is_error\":\"false\",\"content\":[{{\"type\":\"text\",\"text\":\"RAW\"}}]}}\n"
    );
    let findings = verify_record(&read_record(record.as_bytes()), &VerifyContext::new());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].location.line, 2);
    assert_eq!(findings[0].location.surface, Surface::Record);
    assert!(matches!(unreadable(&findings[0]), ReadError::Shape(m) if m.contains("\"false\"")));
}

#[test]
fn every_kind_of_unreadable_unit_is_a_finding_on_every_surface() {
    let lines: &[&[u8]] = &[
        b"{\"role\":\"user\",\"content\":[]}",
        b"not json",
        b"{\"role\":\"tool\",\"content\":5}",
        b"{\"role\":\"tool\",\"content\":[],\"x\":1,\"x\":2}",
        b"{\"role\":\"tool\",\"content\":\"\xff\"}",
    ];
    let record = lines.join(&b'\n');
    let findings = verify_record(&read_record(&record), &VerifyContext::new());
    let errors: Vec<_> = findings
        .iter()
        .map(|f| (f.location.line, unreadable(f).clone()))
        .collect();
    assert!(
        matches!(errors[0], (2, ReadError::Json { .. })),
        "{errors:?}"
    );
    assert!(matches!(errors[1], (3, ReadError::Shape(_))), "{errors:?}");
    assert!(
        matches!(&errors[2], (4, ReadError::DuplicateKey { key, .. }) if key == "x"),
        "{errors:?}"
    );
    assert_eq!(errors[3], (5, ReadError::NotUtf8 { valid_up_to: 26 }));
    assert_eq!(errors.len(), 4);

    let trace = b"{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output_bytes\":0,\"status\":\"ok\"}\n\
        {\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output\":\"RAW\",\"output_bytes\":3.0,\"status\":\"ok\"}\n\
        {\"event_type\":\"tool_call\"}\n";
    let findings = verify_trace(&read_trace(trace), &VerifyContext::new());
    let lines: Vec<_> = findings.iter().map(|f| f.location.line).collect();
    assert_eq!(lines, [2, 3]);
    assert!(findings.iter().all(|f| f.kind.name() == "unreadable-unit"));

    // An SSE event that is not UTF-8 keeps its id too.
    let stream =
        read_sse(b"event: artifact\nid: 9\ndata: {\"artifact\":{\"content\":\"\xff\"}}\n\n");
    let findings = verify_stream(&stream, &VerifyContext::new());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].location.frame_id.as_deref(), Some("9"));
    assert!(matches!(
        unreadable(&findings[0]),
        ReadError::NotUtf8 { .. }
    ));
}

#[test]
fn findings_come_in_line_order_with_unreadable_units_among_them() {
    let record = format!(
        "{{\"role\":\"tool\",\"is_error\":false,\"content\":\"RAW 1\"}}\n\
         {{oops\n\
         {{\"role\":\"tool\",\"is_error\":false,\"content\":\"RAW 3\"}}\n\
         {{\"role\":\"tool\",\"content\":[],\"content\":[]}}\n\
         {{\"role\":\"tool\",\"is_error\":false,\"content\":{BLOCK}}}\n"
    );
    let report = read_record(record.as_bytes());
    let findings = verify_record(&report, &VerifyContext::new());
    let seen: Vec<_> = findings
        .iter()
        .map(|f| (f.location.line, f.kind.name()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "unfenced-tool-result"),
            (2, "unreadable-unit"),
            (3, "unfenced-tool-result"),
            (4, "unreadable-unit"),
        ]
    );
    // As many unreadable-unit findings as failed units: none is lost, none is invented.
    let unreadable = findings
        .iter()
        .filter(|f| f.kind.name() == "unreadable-unit")
        .count();
    assert_eq!(unreadable, report.counts.failed);
}

/// A key written twice, anywhere in a unit, at any depth, known or not, makes the unit
/// unreadable: the same rule on frames, SSE events, record lines and trace events.
#[test]
fn a_duplicate_key_makes_any_unit_unreadable() {
    let frames = [
        // A known key at the top, in the artifact, and an unknown one.
        r#"{"id":"a","id":"b","artifact":{"content":"x"}}"#.to_owned(),
        bash_frame(BLOCK, &format!("{CALL},\"fence_source\":null")),
        bash_frame(BLOCK, &format!("{CALL},\"future\":1,\"future\":2")),
        bash_frame(
            BLOCK,
            &format!("{CALL},\"meta\":{{\"a\":[{{\"k\":1,\"k\":1}}]}}"),
        ),
    ];
    let keys = ["id", "fence_source", "future", "k"];
    for (frame, key) in frames.iter().zip(keys) {
        let error = read_frame(frame).expect_err(frame);
        assert!(
            matches!(&error, ReadError::DuplicateKey { key: k, .. } if k == key),
            "{frame}: {error:?}"
        );
        let findings = verify_stream(&read_sse(event(1, frame).as_bytes()), &VerifyContext::new());
        assert_eq!(findings.len(), 1, "{frame}");
        assert_eq!(unreadable(&findings[0]), &error);
    }

    // A record line: today's main let the last `content` win and verified this clean.
    let records = [
        format!(
            r#"{{"role":"tool","tool_call_id":"c","is_error":false,"content":[{{"type":"text","text":"RAW"}}],"content":[{{"type":"text","text":{BLOCK}}}],"fence":"tool:bash"}}"#
        ),
        format!(
            r#"{{"role":"tool","tool_call_id":"c","is_error":false,"content":[{{"type":"text","text":"RAW","text":{BLOCK}}}],"fence":"tool:bash"}}"#
        ),
        r#"{"role":"user","role":"tool","content":[]}"#.to_owned(),
        r#"{"type":"murmur.record","type":"x"}"#.to_owned(),
    ];
    for line in &records {
        let report = read_record(line.as_bytes());
        assert_eq!(report.counts.failed, 1, "{line}");
        let findings = verify_record(&report, &VerifyContext::new());
        assert_eq!(findings.len(), 1, "{line}");
        assert!(
            matches!(unreadable(&findings[0]), ReadError::DuplicateKey { .. }),
            "{line}"
        );
    }

    let traces = [
        format!(
            r#"{{"event_type":"tool_call","tool_name":"bash","output":"RAW","output":{BLOCK},"output_bytes":60,"status":"ok"}}"#
        ),
        r#"{"event_type":"tool_call","tool_name":"bash","input":{"a":1,"a":2},"output_bytes":0,"status":"ok"}"#.to_owned(),
        r#"{"event_type":"session_start","event_type":"tool_call"}"#.to_owned(),
    ];
    for line in &traces {
        let findings = verify_trace(&read_trace(line.as_bytes()), &VerifyContext::new());
        assert_eq!(findings.len(), 1, "{line}");
        assert!(
            matches!(unreadable(&findings[0]), ReadError::DuplicateKey { .. }),
            "{line}"
        );
    }
}

#[test]
fn the_same_key_in_sibling_objects_is_not_a_duplicate() {
    let record = format!(
        r#"{{"role":"tool","tool_call_id":"c","is_error":false,"content":[{{"type":"text","text":{BLOCK}}},{{"type":"image","source":{{"type":"url"}}}}],"fence":"tool:bash"}}"#
    );
    let report = read_record(record.as_bytes());
    assert_eq!(report.counts.failed, 0);
    assert_eq!(verify_record(&report, &VerifyContext::new()), []);
    let frame = read_frame(&bash_frame(BLOCK, CALL)).unwrap();
    assert_eq!(frame.artifact.tool_name.as_deref(), Some("bash"));
}

#[test]
fn json_values_read_as_before() {
    // Numbers of each kind, escapes, nesting and null still read through the duplicate check.
    let trace = br#"{"event_type":"tool_call","tool_name":"b\u0061sh","input":{"n":-1,"f":0.5,"big":18446744073709551615,"e":1e3,"l":[null,true,{"x":"y"}]},"output_bytes":0,"status":"ok","turn":4294967295}"#;
    let report = read_trace(trace);
    assert_eq!(report.counts.failed, 0, "{:?}", report.errors);
    let fence_surfaces::ParsedEvent::ToolCall(call) = &report.items[0].value else {
        panic!()
    };
    assert_eq!(call.tool_name, "bash");
    assert_eq!(call.turn, Some(u32::MAX));
    assert_eq!(
        call.input,
        Some(
            serde_json::json!({"n":-1,"f":0.5,"big":18_446_744_073_709_551_615_u64,"e":1000.0,"l":[null,true,{"x":"y"}]})
        )
    );
}
