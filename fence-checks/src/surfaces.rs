//! The surface readers and verifiers on arbitrary bytes, and the surface writers on arbitrary
//! tool names and content.
//!
//! Readers, on the whole input:
//! - `read_sse`, `read_record`, `read_trace` and `read_frame` never panic;
//! - every report's counts add up: `items.len() == counts.ok()`, `errors.len() == counts.failed`,
//!   `skipped + failed <= read`; line numbers are 1-based, in order, and within the input; a
//!   JSONL reader reads one unit per line (a leading byte-order mark and one final newline
//!   aside);
//! - `SseReader` fed one byte at a time, or in chunks, reports exactly what `read_sse` does;
//! - a line of text wrapped as one `artifact` event reads as `read_frame` reads it, or fails
//!   with its error.
//!
//! Verifiers, on whatever was read, with an empty context and one learned from the input:
//! - they never panic, and every finding is consistent with its unit (a mismatched label differs
//!   from the markers, a live marker is at its offset, an error is the one `parse` gives, an
//!   unreadable unit is one the reader failed with that error, a part finding points at a part
//!   of its line, and so on); `verify_frame` agrees with `verify_stream` on an unlabelled stream;
//! - nothing vanishes: there are exactly as many unreadable-unit findings as failed units, and
//!   as many live-marker-in-skipped-unit findings as units passed over with a live marker, each
//!   the one the reader handed over;
//! - a clean verdict is safe: every frame, record line, tool result part and trace output with
//!   no finding is what the classification table of the `surfaces` docs says it must be (a
//!   tool's result one block under `tool:<its name>`, exempt text free of live markers, a failed
//!   call or a line of an unknown role one block or free of live markers, a frame cut short not
//!   flagged whole), as the reference reads it.
//!
//! Writers, with the tool name and content taken from the input (split at the first `0xFF`):
//! - a fenced tool result written as an SSE frame, a record line and a trace event reads back
//!   with its content and label intact and verifies with no finding (so its source is its
//!   tool's);
//! - a hook artifact and a skill result written from their `ModelContent` carry no live marker
//!   and verify clean; a hook frame holding the raw text is reported as carrying a fence exactly
//!   when the text holds a marker.
use std::borrow::Cow;

use fence_reference::{self as reference, CLOSER};
use fence_runtime::{ModelContent, Source, SourceKind, ToolOutput, fence, parse};
use fence_surfaces::{
    ArtifactFrame, CallMeta, EventMeta, Finding, FindingKind, Label, LineError, Located,
    MarkerKind, ParsedEvent, ParsedFrame, Part, RecordLine, RecordReader, RecordReport, Report,
    SseEncoder, SseReader, StreamReport, Surface, ToolCallEvent, TraceReader, TraceReport,
    VerifyContext, read_frame, read_record, read_sse, read_trace, verify_frame, verify_record,
    verify_stream, verify_trace,
};

use crate::input::text_parts;
use crate::verdict::{self, Rules};

/// Checks every invariant on `data`; panics on the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// fence_checks::surfaces::check(br#"{"role":"tool","tool_call_id":"c1","is_error":"false","content":"RAW"}"#);
/// ```
pub fn check(data: &[u8]) {
    readers(data);
    let parts = text_parts(data, 2);
    writers(&parts[0], parts.get(1).map_or("", String::as_str));
}

fn readers(data: &[u8]) {
    let lines = line_count(data);

    // SSE: one shot, byte by byte, and in chunks the input's length chooses.
    let stream = read_sse(data);
    counts_add_up(&stream, lines);
    let mut bytewise = StreamReport::default();
    let mut reader = SseReader::new();
    for byte in data {
        reader.push(std::slice::from_ref(byte), |unit| bytewise.add(unit));
    }
    reader.finish(|unit| bytewise.add(unit));
    assert_eq!(bytewise, stream, "SSE read byte by byte");
    let mut chunked = StreamReport::default();
    let mut reader = SseReader::new();
    for chunk in data.chunks(data.len() % 13 + 1) {
        reader.push(chunk, |unit| chunked.add(unit));
    }
    reader.finish(|unit| chunked.add(unit));
    assert_eq!(chunked, stream, "SSE read in chunks");

    // The JSONL readers in the same chunks.
    let mut chunked = RecordReport::default();
    let mut reader = RecordReader::new();
    for chunk in data.chunks(data.len() % 13 + 1) {
        reader.push(chunk, |unit| chunked.add(unit));
    }
    reader.finish(|unit| chunked.add(unit));
    assert_eq!(chunked, read_record(data), "record read in chunks");
    let mut chunked = TraceReport::default();
    let mut reader = TraceReader::new();
    for chunk in data.chunks(data.len() % 7 + 1) {
        reader.push(chunk, |unit| chunked.add(unit));
    }
    reader.finish(|unit| chunked.add(unit));
    assert_eq!(chunked, read_trace(data), "trace read in chunks");

    let record = read_record(data);
    counts_add_up(&record, lines);
    assert_eq!(record.counts.read, jsonl_lines(data), "record lines");
    let trace = read_trace(data);
    counts_add_up(&trace, lines);
    assert_eq!(trace.counts.read, jsonl_lines(data), "trace lines");

    let text = String::from_utf8_lossy(data);
    let frame = read_frame(&text);
    if !text.contains(['\n', '\r']) {
        let wrapped = read_sse(format!("event: artifact\ndata: {text}\n\n").as_bytes());
        assert_eq!(wrapped.counts.read, 1);
        match &frame {
            Ok(frame) => {
                assert_eq!(wrapped.items.len(), 1);
                assert_eq!(wrapped.items[0].line, 2);
                assert_eq!(wrapped.items[0].value.id, None);
                assert_eq!(&wrapped.items[0].value.frame, frame);
            }
            Err(error) => {
                assert_eq!(wrapped.errors.len(), 1);
                assert_eq!(wrapped.errors[0].line, 2);
                assert_eq!(&wrapped.errors[0].error, error);
            }
        }
    }

    verifiers(&stream, &record, &trace, frame.as_ref().ok());
}

/// The verifiers, on what the readers read, with an empty context and one that declares every
/// other tool name read as a skill and the rest as tools, and learns the stream's calls.
fn verifiers(
    stream: &StreamReport,
    record: &RecordReport,
    trace: &TraceReport,
    frame: Option<&ParsedFrame>,
) {
    let names: Vec<String> = stream
        .items
        .iter()
        .filter_map(|item| item.value.frame.artifact.tool_name.clone())
        .collect();
    let mut learned = VerifyContext::new()
        .with_skills(names.iter().step_by(2).cloned())
        .with_tools(names.iter().skip(1).step_by(2).cloned());
    learned.learn_calls_from_stream(stream);
    learned.learn_calls_from_trace(trace);
    let mut learned_rules = Rules {
        skills: names.iter().step_by(2).cloned().collect(),
        tools: Some(names.iter().skip(1).step_by(2).cloned().collect()),
        ..Rules::default()
    };
    learned_rules.learn_from_stream(stream);
    learned_rules.learn_from_trace(trace);
    for (context, rules) in [
        (VerifyContext::new(), Rules::default()),
        (learned, learned_rules),
    ] {
        stream_findings(stream, frame, &context, &rules);
        let mut record_rules = rules.clone();
        record_rules.learn_from_record(record);
        record_findings(record, &context, &record_rules);
        trace_findings(trace, &context, &rules);
    }
}

/// Checks `verify_stream` and `verify_frame` on what was read.
fn stream_findings(
    stream: &StreamReport,
    frame: Option<&ParsedFrame>,
    context: &VerifyContext,
    rules: &Rules,
) {
    let findings = verify_stream(stream, context);
    unreadable_units_add_up(&findings, stream);
    verdict::clean_frames_are_safe(stream, &findings, rules);
    for finding in &findings {
        if unreadable(finding, stream, Surface::ArtifactStream)
            || skipped(finding, stream, Surface::ArtifactStream)
        {
            continue;
        }
        let item = at_line(&stream.items, finding, Surface::ArtifactStream);
        assert_eq!(finding.location.frame_id, item.value.id);
        assert_eq!(finding.location.part, None);
        let artifact = &item.value.frame.artifact;
        match &finding.kind {
            FindingKind::CallIdReused { id, name, other } => {
                assert_eq!(artifact.tool_call_id.value(), Some(id));
                assert_eq!(artifact.tool_name.as_ref(), Some(name));
                assert_ne!(name, other);
            }
            FindingKind::SkillCalledAsTool { name } => {
                assert_eq!(artifact.tool_name.as_ref(), Some(name));
                assert!(artifact.exit_code.is_some());
            }
            kind => consistent(kind, &artifact.content, Some(&artifact.fence_source)),
        }
    }
    let labelled = stream
        .items
        .iter()
        .any(|item| item.value.frame.artifact.fence_source.is_present());
    for item in &stream.items {
        let alone: Vec<FindingKind> = verify_frame(&item.value.frame, context)
            .into_iter()
            .map(|finding| finding.kind)
            .collect();
        if !labelled {
            let in_stream: Vec<FindingKind> = findings
                .iter()
                .filter(|finding| finding.location.line == item.line)
                .map(|finding| finding.kind.clone())
                .collect();
            assert_eq!(alone, in_stream, "verify_frame and verify_stream disagree");
        }
    }
    if let Some(frame) = frame {
        for finding in verify_frame(frame, context) {
            consistent(
                &finding.kind,
                &frame.artifact.content,
                Some(&frame.artifact.fence_source),
            );
        }
    }
}

/// Checks `verify_record` on what was read, and returns its findings; `rules` knows the
/// record's own calls.
pub(crate) fn record_findings(
    record: &RecordReport,
    context: &VerifyContext,
    rules: &Rules,
) -> Vec<Finding> {
    let findings = verify_record(record, context);
    unreadable_units_add_up(&findings, record);
    verdict::clean_lines_are_safe(record, &findings, rules);
    for finding in &findings {
        if unreadable(finding, record, Surface::Record) || skipped(finding, record, Surface::Record)
        {
            continue;
        }
        let line = &at_line(&record.items, finding, Surface::Record).value;
        if let FindingKind::SkillCalledAsTool { name } = &finding.kind {
            let part = finding
                .location
                .part
                .and_then(|index| line.content.get(index));
            assert_eq!(
                rules.skill_ran(line, part).as_ref(),
                Some(name),
                "{finding:?}: no skill's call that ran"
            );
            continue;
        }
        if let FindingKind::CallIdReused { id, name, other } = &finding.kind {
            assert_eq!(finding.location.part, None);
            assert_ne!(name, other);
            let own = (line.tool_call_id.as_deref(), line.name.as_deref());
            assert!(
                line.calls()
                    .any(|call| call == (id.as_str(), name.as_str()))
                    || own == (Some(id.as_str()), Some(name.as_str())),
                "{finding:?} names no call of its line"
            );
            continue;
        }
        match finding.location.part {
            None => consistent(&finding.kind, &line.text(), Some(&line.fence)),
            Some(index) => {
                let part = line
                    .content
                    .get(index)
                    .expect("a part finding points at a part");
                match (&finding.kind, part) {
                    (FindingKind::UnreadablePart { path, .. }, Part::Other(_)) => {
                        // Where the part was read from: a result item's `output` (all of
                        // it for a screenshot, an `mcp_call`'s `error`), else `content`.
                        let expected = match line.item.as_deref() {
                            Some(
                                "function_call_output"
                                | "custom_tool_call_output"
                                | "local_shell_call_output",
                            ) => format!("output[{index}]"),
                            Some("computer_call_output") => "output".to_owned(),
                            Some("mcp_call") => "error".to_owned(),
                            _ => format!("content[{index}]"),
                        };
                        assert_eq!(path, &expected);
                    }
                    (
                        FindingKind::UnreadablePart { path, .. },
                        Part::ToolResult { content, .. },
                    ) => {
                        let nested = path
                            .strip_prefix(&format!("content[{index}].content["))
                            .and_then(|rest| rest.strip_suffix(']'))
                            .and_then(|n| n.parse::<usize>().ok())
                            .expect("a nested part's path");
                        assert!(matches!(content.get(nested), Some(Part::Other(_))));
                    }
                    (kind, Part::ToolResult { .. }) => {
                        let text = part.text().unwrap_or(Cow::Borrowed(""));
                        consistent(kind, &text, None);
                    }
                    (kind, part) => panic!("{kind:?} on a part {part:?}"),
                }
            }
        }
    }
    findings
}

/// Checks `verify_trace` on what was read.
fn trace_findings(trace: &TraceReport, context: &VerifyContext, rules: &Rules) {
    let findings = verify_trace(trace, context);
    unreadable_units_add_up(&findings, trace);
    verdict::clean_events_are_safe(trace, &findings, rules);
    for finding in &findings {
        if unreadable(finding, trace, Surface::Trace) || skipped(finding, trace, Surface::Trace) {
            continue;
        }
        let (output, status) = match &at_line(&trace.items, finding, Surface::Trace).value {
            ParsedEvent::ToolCall(call) => (call.output.as_deref(), Some(call.status.as_str())),
            ParsedEvent::SkillCall(call) => (call.output.as_deref(), call.status.as_deref()),
            _ => (None, None),
        };
        if let FindingKind::SkillCalledAsTool { name } = &finding.kind {
            let item = &at_line(&trace.items, finding, Surface::Trace).value;
            assert!(matches!(item, ParsedEvent::ToolCall(call) if &call.tool_name == name));
            continue;
        }
        if let FindingKind::UnknownStatus { status: said } = &finding.kind {
            assert_eq!(status, Some(said.as_str()));
            assert!(!matches!(said.as_str(), "ok" | "error"));
            continue;
        }
        let output = output.expect("only an event with an output is checked");
        consistent(&finding.kind, output, None);
    }
}

/// Whether a finding is an unreadable unit; if so, it is one the reader failed, with its error.
fn unreadable<T>(finding: &Finding, report: &Report<T>, surface: Surface) -> bool {
    let FindingKind::UnreadableUnit { error } = &finding.kind else {
        return false;
    };
    assert_eq!(finding.location.surface, surface);
    let failed = report
        .errors
        .iter()
        .find(|failed| failed.line == finding.location.line)
        .expect("an unreadable unit the reader failed");
    assert_eq!(&failed.error, error);
    assert_eq!(failed.frame_id, finding.location.frame_id);
    let _ = finding.to_string();
    true
}

/// Whether a finding is a unit passed over with a live marker; if so, it is one the reader
/// passed over, with that marker.
fn skipped<T>(finding: &Finding, report: &Report<T>, surface: Surface) -> bool {
    let FindingKind::LiveMarkerInSkippedUnit {
        unit,
        path,
        offset,
        marker,
    } = &finding.kind
    else {
        return false;
    };
    assert_eq!(finding.location.surface, surface);
    assert_eq!(finding.location.part, None);
    let passed = report
        .skipped_with_markers
        .iter()
        .find(|passed| passed.line == finding.location.line)
        .expect("a unit the reader passed over");
    let value = &passed.value;
    assert_eq!(
        (&value.unit, &value.path, &value.offset, &value.marker),
        (unit, path, offset, marker)
    );
    assert_eq!(value.frame_id, finding.location.frame_id);
    let _ = finding.to_string();
    true
}

/// Every failed unit is one unreadable-unit finding, every unit passed over with a live marker
/// one finding, and findings come in line order.
fn unreadable_units_add_up<T>(findings: &[Finding], report: &Report<T>) {
    let count = findings
        .iter()
        .filter(|finding| matches!(finding.kind, FindingKind::UnreadableUnit { .. }))
        .count();
    assert_eq!(count, report.counts.failed);
    let passed = findings
        .iter()
        .filter(|finding| matches!(finding.kind, FindingKind::LiveMarkerInSkippedUnit { .. }))
        .count();
    assert_eq!(passed, report.skipped_with_markers.len());
    assert!(passed <= report.counts.skipped);
    assert!(
        findings
            .windows(2)
            .all(|pair| pair[0].location.line <= pair[1].location.line),
        "findings out of line order"
    );
}

/// Lines in `data`, however they end: a bound on any line number a reader reports.
fn line_count(data: &[u8]) -> usize {
    data.iter()
        .filter(|&&byte| byte == b'\n' || byte == b'\r')
        .count()
        + 1
}

/// The lines a JSONL reader reads: none in empty input, else one per `\n`-separated line, with
/// a leading byte-order mark dropped and one final `\n` ending the last line.
fn jsonl_lines(data: &[u8]) -> usize {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    if data.is_empty() {
        return 0;
    }
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    body.split(|&byte| byte == b'\n').count()
}

fn counts_add_up<T>(report: &Report<T>, lines: usize) {
    let counts = report.counts;
    assert!(counts.skipped + counts.failed <= counts.read, "{counts:?}");
    assert_eq!(report.items.len(), counts.ok(), "{counts:?}");
    assert_eq!(report.errors.len(), counts.failed, "{counts:?}");
    let item_lines: Vec<usize> = report.items.iter().map(|item| item.line).collect();
    let error_lines: Vec<usize> = report
        .errors
        .iter()
        .map(|error: &LineError| error.line)
        .collect();
    for numbers in [item_lines, error_lines] {
        assert!(
            numbers.windows(2).all(|pair| pair[0] < pair[1]),
            "lines out of order: {numbers:?}"
        );
        assert!(
            numbers.iter().all(|&line| (1..=lines).contains(&line)),
            "{numbers:?} of {lines}"
        );
    }
    for error in &report.errors {
        let _ = error.to_string();
    }
}

/// The item a finding points at: findings carry the line of their unit.
fn at_line<'a, T>(items: &'a [Located<T>], finding: &Finding, surface: Surface) -> &'a Located<T> {
    assert_eq!(finding.location.surface, surface);
    let _ = finding.to_string();
    items
        .iter()
        .find(|item| item.line == finding.location.line)
        .unwrap_or_else(|| {
            panic!(
                "a finding at line {} with no unit there",
                finding.location.line
            )
        })
}

/// A role finding is true of its role: one read as a known role it spells otherwise (in
/// another ASCII casing, with ASCII whitespace around it), or one that is none of the known
/// roles and spells none of `user`, `assistant`, `tool`, `function`.
fn role_consistent(role: &str, read_as: Option<&str>) {
    const KNOWN: [&str; 6] = [
        "user",
        "assistant",
        "tool",
        "function",
        "system",
        "developer",
    ];
    let folded = role
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_ascii_lowercase();
    if let Some(read_as) = read_as {
        assert_ne!(role, read_as);
        assert!(KNOWN[..4].contains(&read_as));
        assert_eq!(folded, read_as);
    } else {
        assert!(!KNOWN.contains(&role));
        assert!(
            !KNOWN[..4].contains(&folded.as_str()),
            "{role:?} spells a known role"
        );
    }
}

/// Checks that a finding says something true of its unit's text and label.
fn consistent(kind: &FindingKind, text: &str, label: Option<&Label>) {
    let block = parse(text);
    match kind {
        FindingKind::LabelMismatch {
            label: said,
            markers,
        } => {
            assert_ne!(said, markers);
            assert_eq!(label.and_then(Label::source), Some(said.as_str()));
            assert_eq!(block.map(|block| block.source()), Ok(markers.as_str()));
        }
        FindingKind::LabelOnInvalidBlock { label: said, error } => {
            assert_eq!(label.and_then(Label::source), Some(said.as_str()));
            assert_eq!(block.err(), Some(*error));
        }
        FindingKind::FenceWithoutLabel { markers, .. } => {
            assert!(label.is_some_and(|label| label.source().is_none()));
            assert_eq!(block.map(|block| block.source()), Ok(markers.as_str()));
        }
        FindingKind::LiveMarkerInBlock { offset, marker } => {
            assert!(block.is_ok());
            assert!(
                *offset > 0 && *offset < text.len() - CLOSER.len(),
                "{offset}"
            );
            assert!(
                reference::is_marker_at(text.as_bytes(), *offset),
                "no marker at {offset}"
            );
            let closer = text.as_bytes()[offset + 1] == b'/';
            assert_eq!(*marker == MarkerKind::Closer, closer);
        }
        FindingKind::UnfencedToolResult { error } => assert_eq!(block.err(), Some(*error)),
        FindingKind::FenceOnExempt { markers, .. } => {
            assert!(!reference::markers(text.as_bytes()).is_empty());
            assert_eq!(markers.as_deref(), block.ok().map(|block| block.source()));
        }
        FindingKind::TruncationDenied => {
            assert!(block.is_ok_and(|block| block.is_truncated()));
        }
        FindingKind::LiveMarkerOutsideBlock { error } => {
            assert!(!reference::markers(text.as_bytes()).is_empty());
            assert_eq!(block.err(), Some(*error));
            assert!(label.is_none_or(|label| label.source().is_none()));
        }
        FindingKind::OutputBytesMismatch {
            output_bytes,
            actual,
        } => {
            assert_eq!(*actual, text.len() as u64);
            assert_ne!(output_bytes, actual);
        }
        FindingKind::UnknownSourceKind { source } => {
            assert!(matches!(SourceKind::of(source), SourceKind::Unknown(_)));
        }
        FindingKind::ToolSourceMismatch { expected, markers } => {
            assert_ne!(expected, markers);
            assert!(expected.starts_with("tool:"));
            assert_eq!(block.map(|block| block.source()), Ok(markers.as_str()));
            assert!(!matches!(SourceKind::of(markers), SourceKind::Unknown(_)));
        }
        FindingKind::NotAHookArtifact {
            exit_code,
            is_error,
        } => {
            assert!(exit_code.is_some() || *is_error != Some(false));
        }
        FindingKind::UnknownRole { role } => role_consistent(role, None),
        FindingKind::RoleSpelledOtherwise { role, read_as } => role_consistent(role, Some(read_as)),
        FindingKind::UnreadableUnit { .. }
        | FindingKind::UnreadablePart { .. }
        | FindingKind::UnknownStatus { .. } => {
            panic!("{kind:?} is not about a unit's text")
        }
        _ => {}
    }
    let _ = kind.to_string();
}

fn writers(tool_name: &str, content: &str) {
    let source = Source::tool(tool_name);
    let output = ToolOutput::ok(fence(&source, content));
    let empty = VerifyContext::new();

    // An SSE frame.
    let mut encoder = SseEncoder::new();
    let frame = ArtifactFrame::tool_result("tsk_1", tool_name, &output, CallMeta::new("c1", 1));
    let capture = encoder.encode(&frame) + SseEncoder::HEARTBEAT;
    let stream = read_sse(capture.as_bytes());
    assert_eq!((stream.items.len(), stream.counts.read), (1, 1));
    let read = &stream.items[0].value.frame.artifact;
    assert_eq!(read.content, output.content().as_str());
    assert_eq!(read.fence_source, Label::Source(source.as_str().into()));
    assert_eq!(read.tool_name.as_deref(), Some(tool_name));
    assert_eq!(verify_stream(&stream, &empty), [], "own frame");

    // A record line.
    let line = RecordLine::tool_result("c1", &output).to_json();
    assert!(!line.contains('\n'));
    let record = read_record(line.as_bytes());
    assert_eq!(record.items.len(), 1);
    assert_eq!(record.items[0].value.text(), output.content().as_str());
    assert_eq!(
        record.items[0].value.fence,
        Label::Source(source.as_str().into())
    );
    assert_eq!(verify_record(&record, &empty), [], "own record line");

    // A trace event with its output recorded.
    let input = serde_json::value::RawValue::from_string("{}".into()).expect("valid JSON");
    let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), tool_name, &input, &output, 1)
        .with_output()
        .to_json();
    let trace = read_trace(event.as_bytes());
    assert_eq!(trace.items.len(), 1);
    assert_eq!(verify_trace(&trace, &empty), [], "own trace event");

    // Exempt text written from its `ModelContent`: neutralised, so it verifies clean, whatever
    // it held.
    let hook = ModelContent::hook_artifact(content);
    let doc = ModelContent::skill_doc(content);
    assert_eq!(hook.as_str(), reference::neutralise_str(content));
    let skills = VerifyContext::new().with_skills(["triage"]);
    let mut encoder = SseEncoder::new();
    let capture = encoder.encode(&ArtifactFrame::hook_artifact("tsk_1", tool_name, &hook))
        + &encoder.encode(&ArtifactFrame::skill_result(
            "tsk_1", "triage", &doc, "c2", 1,
        ));
    assert_eq!(
        verify_stream(&read_sse(capture.as_bytes()), &skills),
        [],
        "own exempt frames"
    );
    let line = RecordLine::skill_result("c2", &doc).to_json();
    assert_eq!(
        verify_record(
            &read_record(line.as_bytes()),
            &skills.with_call("c2", "triage")
        ),
        [],
        "own skill line"
    );

    // A hook frame holding the raw text: never fenced, so any marker in it is a finding.
    let raw = serde_json::json!({
        "id": "tsk_1",
        "artifact": {
            "tool_name": tool_name, "content": content, "fence_source": null,
            "tool_call_id": null, "is_error": false, "duration_ms": null,
            "exit_code": null, "truncated": false,
        }
    })
    .to_string();
    let read = read_frame(&raw).expect("a hook frame");
    assert_eq!(read.artifact.content, content);
    let findings = verify_frame(&read, &empty);
    let on_exempt = findings
        .iter()
        .any(|finding| matches!(finding.kind, FindingKind::FenceOnExempt { .. }));
    assert_eq!(
        on_exempt,
        !reference::markers(content.as_bytes()).is_empty()
    );
    for finding in &findings {
        consistent(&finding.kind, content, Some(&read.artifact.fence_source));
    }
}
