//! Properties of the surface readers and writers.
//!
//! - Random bytes and random JSON fed to every reader never panic, and the counts add up:
//!   `read == items + skipped + failed`, one error per failed unit, line numbers in range and
//!   increasing. The verifiers never panic on whatever was read, report every failed unit as
//!   exactly one unreadable-unit finding, and give their findings in line order.
//! - The SSE reader gives the same report however the stream is split into chunks.
//! - Whatever the writers write reads back to the same content and label, and verifies clean.

use std::fmt::Write as _;

use fence_runtime::{Source, ToolOutput, fence};
use fence_surfaces::{
    ArtifactFrame, CallMeta, EventMeta, Finding, FindingKind, Label, RecordLine, Report,
    SseEncoder, SseReader, StreamReport, ToolCallEvent, VerifyContext, read_frame, read_record,
    read_sse, read_trace, verify_frame, verify_record, verify_stream, verify_trace,
};
use proptest::prelude::*;
use serde_json::Value;
use serde_json::value::RawValue;

/// The invariants every report keeps. `units` bounds the line numbers (`None`: no bound known).
fn check_report<T>(report: &Report<T>, units: Option<usize>) {
    let counts = report.counts;
    assert_eq!(
        counts.read,
        report.items.len() + counts.skipped + counts.failed
    );
    assert_eq!(counts.ok(), report.items.len());
    assert_eq!(report.errors.len(), counts.failed);
    let item_lines: Vec<_> = report.items.iter().map(|item| item.line).collect();
    let error_lines: Vec<_> = report.errors.iter().map(|error| error.line).collect();
    for lines in [&item_lines, &error_lines] {
        assert!(
            lines.windows(2).all(|w| w[0] < w[1]),
            "lines not increasing: {lines:?}"
        );
        assert!(lines.iter().all(|&line| line >= 1));
        if let Some(units) = units {
            assert!(
                lines.iter().all(|&line| line <= units),
                "{lines:?} beyond {units}"
            );
        }
    }
}

/// The number of lines a JSONL reader sees in `bytes`.
fn jsonl_lines(bytes: &[u8]) -> usize {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.is_empty() {
        return 0;
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    1 + body
        .iter()
        .fold(0, |lines, &b| lines + usize::from(b == b'\n'))
}

/// Every failed unit is one unreadable-unit finding at its line, and findings come in line
/// order.
fn nothing_vanishes<T>(findings: &[Finding], report: &Report<T>) {
    let unreadable: Vec<_> = findings
        .iter()
        .filter(|finding| matches!(finding.kind, FindingKind::UnreadableUnit { .. }))
        .map(|finding| finding.location.line)
        .collect();
    let failed: Vec<_> = report.errors.iter().map(|error| error.line).collect();
    assert_eq!(unreadable, failed);
    assert!(
        findings
            .windows(2)
            .all(|pair| pair[0].location.line <= pair[1].location.line)
    );
}

fn read_everything(bytes: &[u8]) {
    let context = VerifyContext::new()
        .with_skills(["triage"])
        .with_tools(["bash"]);
    let lines = jsonl_lines(bytes);

    let record = read_record(bytes);
    check_report(&record, Some(lines));
    assert_eq!(record.counts.read, lines);
    nothing_vanishes(&verify_record(&record, &context), &record);

    let trace = read_trace(bytes);
    check_report(&trace, Some(lines));
    assert_eq!(trace.counts.read, lines);
    nothing_vanishes(&verify_trace(&trace, &context), &trace);

    let stream = read_sse(bytes);
    check_report(&stream, None);
    let mut context = context;
    context.learn_calls_from_stream(&stream);
    nothing_vanishes(&verify_stream(&stream, &context), &stream);

    if let Ok(frame) = read_frame(&String::from_utf8_lossy(bytes)) {
        let _findings = verify_frame(&frame, &context);
    }
}

/// Text that often holds markers, near misses and characters JSON and SSE treat specially.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,6}",
        Just("<untrusted-content source=tool:web-fetch>\n".to_owned()),
        Just("</untrusted-content>".to_owned()),
        Just("</UNTRUSTED-CONTENT>".to_owned()),
        Just("<!MURMUR-NEUTRALISED!/untrusted-content>".to_owned()),
        Just("< /untrusted-content>".to_owned()),
        Just("<untrusted-content".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\u{2028}é\u{0}\"\\".to_owned()),
        Just(">".to_owned()),
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

/// Text with no `<`, so it holds no marker.
fn plain_text() -> impl Strategy<Value = String> {
    any::<String>().prop_map(|text| text.replace('<', "("))
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "role",
            "content",
            "fence",
            "tool_call_id",
            "is_error",
            "id",
            "type",
            "text",
            "name",
            "tool_use_id",
            "call_id",
            "thinking",
            "event_type",
            "tool_name",
            "output",
            "output_bytes",
            "status",
            "skill_name",
            "artifact",
            "fence_source",
            "duration_ms",
            "exit_code",
            "truncated",
            "input",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,8}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec![
            "tool",
            "user",
            "assistant",
            "text",
            "input_text",
            "tool_use",
            "tool_result",
            "function_call_output",
            "image",
            "tool_call",
            "skill_call",
            "ok",
            "error",
            "tool:bash",
            "triage",
            "bash"
        ])
        .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Objects shaped like the surfaces' units, with random values under their keys.
fn unit_like() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["record", "tool_call", "skill_call", "frame"]),
        prop::collection::vec((key(), json_value()), 0..8),
        json_value(),
    )
        .prop_map(|(shape, entries, content)| {
            let mut object: serde_json::Map<String, Value> = entries.into_iter().collect();
            match shape {
                "record" => {
                    object.insert("role".into(), "tool".into());
                    object.insert("content".into(), content);
                }
                "frame" => {
                    object.insert("content".into(), content);
                    return serde_json::json!({ "id": "t", "artifact": object });
                }
                event => {
                    object.insert("event_type".into(), event.into());
                    object.insert("output".into(), content);
                }
            }
            Value::Object(object)
        })
}

/// SSE-ish lines, joined with random line endings.
fn sse_stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(b"event: artifact".to_vec()),
        Just(b"event:status".to_vec()),
        Just(b":heartbeat".to_vec()),
        Just(Vec::new()),
        "id: [0-9]{1,3}".prop_map(String::into_bytes),
        unit_like().prop_map(|value| format!("data: {value}").into_bytes()),
        Just(br#"data: {"artifact":{"content":"x"}}"#.to_vec()),
        Just(b"data: {\"artifact\":".to_vec()),
        Just(b"data:{\"content\":\"y\"}}".to_vec()),
        Just(b"data".to_vec()),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    let ending = prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r"]);
    prop::collection::vec((line, ending), 0..24).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(line, ending)| line.into_iter().chain(ending.iter().copied()))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic_and_counts_add_up(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        read_everything(&bytes);
    }

    #[test]
    fn random_json_lines_never_panic_and_counts_add_up(
        values in prop::collection::vec(prop_oneof![json_value(), unit_like()], 0..12),
        crlf in any::<bool>(),
    ) {
        let ending = if crlf { "\r\n" } else { "\n" };
        let text = values.iter().fold(String::new(), |mut text, value| {
            let _ = write!(text, "{value}{ending}");
            text
        });
        read_everything(text.as_bytes());
        for value in &values {
            // Every value as a lone frame, and wrapped as the artifact of one.
            if let Ok(frame) = read_frame(&value.to_string()) {
                let _findings = verify_frame(&frame, &VerifyContext::new());
            }
            let wrapped = serde_json::json!({ "id": "t", "artifact": value }).to_string();
            if let Ok(frame) = read_frame(&wrapped) {
                let _findings = verify_frame(&frame, &VerifyContext::new());
            }
            let event = format!("event: artifact\ndata: {wrapped}\n\n");
            let report = read_sse(event.as_bytes());
            check_report(&report, Some(3));
            prop_assert_eq!(report.counts.read, 1);
        }
    }

    #[test]
    fn the_sse_reader_does_not_care_how_the_stream_is_split(
        stream in sse_stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let whole = read_sse(&stream);
        check_report(&whole, None);
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(stream.len() + 1)).collect();
        cuts.sort_unstable();
        let mut report = StreamReport::default();
        let mut reader = SseReader::new();
        let mut from = 0;
        for cut in cuts {
            reader.push(&stream[from..cut], |unit| report.add(unit));
            from = cut;
        }
        reader.push(&stream[from..], |unit| report.add(unit));
        reader.finish(|unit| report.add(unit));
        prop_assert_eq!(report, whole);
    }

    #[test]
    fn what_the_writers_write_reads_back_and_verifies_clean(
        content in text(),
        runtime_text in plain_text(),
        tool in any::<String>(),
        shape in 0..4_u8,
        exit_code in proptest::option::of(any::<i32>()),
    ) {
        let source = Source::tool(&tool);
        let output = match shape {
            0 => ToolOutput::ok(fence(&source, &content)),
            1 => ToolOutput::error(fence(&source, &content)),
            2 => ToolOutput::dispatch_failure(runtime_text.clone()),
            _ => ToolOutput::refusal(runtime_text.clone()),
        };
        let call = exit_code.map_or(CallMeta::new("c1", 1), |code| CallMeta::new("c1", 1).with_exit_code(code));
        let frame = ArtifactFrame::tool_result("tsk", &tool, &output, call);
        let line = RecordLine::tool_result("c1", &output).with_id("m1");
        let input = RawValue::from_string("{}".into()).unwrap();
        let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), &tool, &input, &output, 1).with_output();
        let expected_label = output.content().fence_source();

        let mut encoder = SseEncoder::new();
        let capture = format!("{}{}", SseEncoder::HEARTBEAT, encoder.encode(&frame));
        let stream = read_sse(capture.as_bytes());
        prop_assert_eq!(stream.counts.ok(), 1);
        let artifact = &stream.items[0].value.frame.artifact;
        prop_assert_eq!(&artifact.content, output.content().as_str());
        prop_assert_eq!(artifact.fence_source.source(), expected_label);
        prop_assert!(artifact.fence_source != Label::Absent);
        prop_assert_eq!(verify_stream(&stream, &VerifyContext::new()), vec![]);

        let record = read_record(format!("{}\n", line.to_json()).as_bytes());
        prop_assert_eq!(record.counts.ok(), 1);
        prop_assert_eq!(record.items[0].value.text(), output.content().as_str());
        prop_assert_eq!(record.items[0].value.fence.source(), expected_label);
        prop_assert_eq!(verify_record(&record, &VerifyContext::new()), vec![]);

        let trace = read_trace(format!("{}\n", event.to_json()).as_bytes());
        prop_assert_eq!(trace.counts.ok(), 1);
        prop_assert_eq!(verify_trace(&trace, &VerifyContext::new()), vec![]);
    }
}

#[test]
fn deeply_nested_json_is_an_error_not_a_crash() {
    let deep = "[".repeat(100_000);
    read_everything(deep.as_bytes());
    let frame = format!("event: artifact\ndata: {{\"artifact\":{deep}\n\n");
    let report = read_sse(frame.as_bytes());
    assert_eq!(report.counts.failed, 1);
}

#[test]
fn a_long_stream_of_lines_is_counted_exactly() {
    let line = "{\"role\":\"user\",\"content\":[]}\n";
    let record = line.repeat(10_000) + "garbage\n" + &"\n".repeat(5);
    let report = read_record(record.as_bytes());
    assert_eq!(
        (
            report.counts.read,
            report.counts.skipped,
            report.counts.failed
        ),
        (10_006, 5, 1)
    );
    assert_eq!(report.errors[0].line, 10_001);
}
