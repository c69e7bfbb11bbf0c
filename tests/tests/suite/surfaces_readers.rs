//! The line readers: headers and role-less lines skipped and counted, lines that are no JSON
//! object failed, unknown keys ignored,
//! absent told apart from null, malformed lines reported with their line numbers while reading
//! goes on.

use fence_surfaces::{
    Label, Nullable, ParsedEvent, Part, ReadError, read_frame, read_record, read_trace,
};

#[test]
fn a_record_skips_its_header_and_lines_without_a_string_role_and_fails_lines_that_are_no_object() {
    let record = b"{\"type\":\"murmur.record\",\"version\":1}\n\
        {\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}\n\
        {\"role\":null,\"content\":[]}\n\
        {\"role\":[\"tool\"],\"content\":[]}\n\
        [1,2,3]\n\
        \"a string\"\n\
        \n   \t\n\
        {\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}";
    let report = read_record(record);
    assert_eq!(
        (
            report.counts.read,
            report.counts.skipped,
            report.counts.failed
        ),
        (9, 5, 2)
    );
    let lines: Vec<_> = report.items.iter().map(|item| item.line).collect();
    assert_eq!(lines, [2, 9]);
    let failed: Vec<_> = report.errors.iter().map(|error| error.line).collect();
    assert_eq!(failed, [5, 6]);
}

#[test]
fn a_record_line_ignores_unknown_keys_and_tells_absent_from_null() {
    let report = read_record(
        br#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[{"type":"text","text":"x"}],"id":"m1","fence":null,"model":"m","usage":{"in":1}}
{"role":"tool","content":[{"type":"text","text":"x"}]}
{"role":"tool","tool_call_id":null,"is_error":null,"content":[],"id":null}"#,
    );
    assert_eq!(report.counts.failed, 0);
    assert_eq!(report.items[0].value.fence, Label::Null);
    assert_eq!(report.items[0].value.id.as_deref(), Some("m1"));
    assert_eq!(report.items[1].value.fence, Label::Absent);
    assert_eq!(report.items[1].value.is_error, None);
    assert_eq!(report.items[2].value.tool_call_id, None);
}

#[test]
fn content_parts_are_read_tolerantly() {
    let report = read_record(
        br#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":7},{"type":"image","source":{}},{"type":"tool_use","id":"c","name":"bash","input":{}},{"type":"tool_use","id":"c"},"bare",{"type":"text","text":"b"}]}
{"role":"user","content":"a bare string is one text part"}"#,
    );
    let parts = &report.items[0].value.content;
    assert_eq!(parts[0], Part::Text("a".into()));
    assert!(matches!(parts[1], Part::Other(_)));
    assert_eq!(
        parts[3],
        Part::ToolUse {
            id: "c".into(),
            name: "bash".into()
        }
    );
    assert!(matches!(parts[4], Part::Other(_)));
    assert_eq!(report.items[0].value.text(), "ab");
    assert_eq!(
        report.items[1].value.text(),
        "a bare string is one text part"
    );
}

#[test]
fn a_malformed_line_fails_with_its_number_and_reading_goes_on() {
    let mut record = Vec::new();
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":[]}\n");
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":[]\n"); // 2: unterminated
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":[],\"fence\":3}\n"); // 3: fence not a string
    record.extend_from_slice(b"{\"role\":\"user\"}\n"); // 4: no content
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":[],\"is_error\":\"no\"}\r\n"); // 5
    record.extend_from_slice(b"{\"role\":\"us\xc3\x28\",\"content\":[]}\n"); // 6: not UTF-8
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":{}}\n"); // 7: content an object
    record.extend_from_slice(b"{\"role\":\"user\",\"content\":[]}\r\n");
    let report = read_record(&record);
    assert_eq!(
        (
            report.counts.read,
            report.counts.skipped,
            report.counts.failed
        ),
        (8, 0, 6)
    );
    let failed: Vec<_> = report.errors.iter().map(|e| e.line).collect();
    assert_eq!(failed, [2, 3, 4, 5, 6, 7]);
    assert!(matches!(report.errors[0].error, ReadError::Json { .. }));
    assert!(matches!(report.errors[1].error, ReadError::Shape(_)));
    assert_eq!(
        report.errors[4].error,
        ReadError::NotUtf8 { valid_up_to: 11 }
    );
    let read: Vec<_> = report.items.iter().map(|i| i.line).collect();
    assert_eq!(read, [1, 8]);
}

#[test]
fn empty_input_reads_nothing() {
    for input in [&b""[..], b"\xEF\xBB\xBF"] {
        let report = read_record(input);
        assert_eq!(report.counts.read, 0);
        assert_eq!(read_trace(input).counts.read, 0);
    }
    assert_eq!(read_record(b"\n").counts.skipped, 1);
}

#[test]
fn a_trace_reads_tool_and_skill_calls_and_skips_other_events() {
    let trace = br#"{"event_type":"session_start","session_id":"s","timestamp":1}
{"event_type":"tool_call","session_id":"s","timestamp":2,"turn":1,"tool_name":"bash","input":{"command":"ls"},"input_bytes":16,"output":"x","output_bytes":1,"duration_ms":3,"status":"ok","state_effect":"read","resource_id":"r","new_key":true}
{"event_type":"skill_call","session_id":"s","timestamp":3,"turn":1,"skill_name":"triage","output_bytes":31,"duration_ms":1,"status":"ok"}
{"event_type":"tool_call","tool_name":"bash","output_bytes":-1,"status":"ok"}
{"event_type":"tool_call","tool_name":"bash","status":"ok"}
{"event_type":"skill_call","skill_name":"triage","output_bytes":1,"output":null}
{"event_type":7}
{"event_type":"turn_end"}"#;
    let report = read_trace(trace);
    assert_eq!(
        (
            report.counts.read,
            report.counts.skipped,
            report.counts.failed
        ),
        (8, 2, 3)
    );
    let failed: Vec<_> = report.errors.iter().map(|e| e.line).collect();
    assert_eq!(failed, [4, 5, 7]);
    let ParsedEvent::ToolCall(call) = &report.items[0].value else {
        panic!("not a tool_call")
    };
    assert_eq!(call.tool_name, "bash");
    assert_eq!(call.output.as_deref(), Some("x"));
    assert_eq!(call.input_bytes, Some(16));
    assert_eq!(call.state_effect.as_deref(), Some("read"));
    let ParsedEvent::SkillCall(skill) = &report.items[1].value else {
        panic!("not a skill_call")
    };
    assert_eq!(skill.output_bytes, 31);
    assert_eq!(skill.output, None);
}

#[test]
fn a_frame_reads_with_any_subset_of_its_keys() {
    let frame = read_frame(r#"{"artifact":{"content":"x"}}"#).unwrap();
    assert_eq!(frame.id, None);
    assert_eq!(frame.artifact.fence_source, Label::Absent);
    assert_eq!(frame.artifact.tool_call_id, Nullable::Absent);

    for bad in [
        r#"{"artifact":{"content":null}}"#,
        r#"{"artifact":{"content":"x","exit_code":3000000000}}"#,
        r#"{"artifact":{"content":"x","duration_ms":-1}}"#,
        r#"{"artifact":{"content":"x","fence_source":{}}}"#,
        r#"{"artifact":"x"}"#,
        r#"{"id":1,"artifact":{"content":"x"}}"#,
        r"[]",
    ] {
        assert!(matches!(read_frame(bad), Err(ReadError::Shape(_))), "{bad}");
    }
    for bad in ["", "{", r#"{"artifact":{"content":"x"}} trailing"#, "nul\0"] {
        assert!(
            matches!(read_frame(bad), Err(ReadError::Json { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn errors_say_what_and_where() {
    let report = read_record(b"{\"role\":\"user\",\"content\":[]}\n{\"role\":\"user\",\"content\":[],\"is_error\":\"no\"}\n");
    let text = report.errors[0].to_string();
    assert!(
        text.starts_with(
            "line 2: unexpected shape: invalid type: string \"no\", expected a boolean"
        ),
        "{text}"
    );
}
