//! The incremental readers and the unit-by-unit verifiers: however a surface is split into
//! chunks, they read and verify it exactly as the whole-slice functions do, and the line
//! splitting agrees with a naive reference; `live_markers` agrees with `fence-reference`, the one
//! naive oracle of the marker rule.

use std::path::PathBuf;

use fence_reference as reference;
use fence_runtime::{MarkerKind, live_markers};
use fence_surfaces::{
    Finding, ReadError, RecordReader, RecordReport, RecordVerifier, Report, SseReader,
    StreamReport, StreamVerifier, TraceReader, TraceReport, TraceVerifier, Unit, VerifyContext,
    read_record, read_sse, read_trace, verify_record, verify_stream, verify_trace,
};
use proptest::prelude::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/workdir")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn context() -> VerifyContext {
    VerifyContext::new()
        .with_skills(["triage"])
        .with_tools(["bash", "web-fetch", "read-file"])
}

/// Splits `bytes` at the given cut points (taken modulo its length, in order).
fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// Everything `reader` reads from `pieces`, fed one after another, then finished. (The three
/// readers share no trait, so this is a macro.)
macro_rules! read_in_chunks {
    ($reader:expr, $pieces:expr) => {{
        let mut report = Report::default();
        let mut reader = $reader;
        for piece in $pieces {
            reader.push(piece, |unit| report.add(unit));
        }
        reader.finish(|unit| report.add(unit));
        report
    }};
}

fn record_in_chunks(pieces: &[&[u8]]) -> RecordReport {
    read_in_chunks!(RecordReader::new(), pieces)
}

/// A record read in chunks by a reader that holds no line over `limit` bytes.
fn record_in_chunks_within(pieces: &[&[u8]], limit: usize) -> RecordReport {
    read_in_chunks!(RecordReader::new().with_max_line_bytes(limit), pieces)
}

/// An SSE stream read in chunks by a reader that holds no line, and no event's data, over
/// `limit` bytes.
fn sse_in_chunks_within(pieces: &[&[u8]], limit: usize) -> StreamReport {
    read_in_chunks!(SseReader::new().with_max_line_bytes(limit), pieces)
}

fn trace_in_chunks(pieces: &[&[u8]]) -> TraceReport {
    read_in_chunks!(TraceReader::new(), pieces)
}

fn sse_in_chunks(pieces: &[&[u8]]) -> StreamReport {
    read_in_chunks!(SseReader::new(), pieces)
}

/// The record's findings from two streamed passes, chunk by chunk.
fn record_streamed(pieces: &[&[u8]], context: VerifyContext) -> Vec<Finding> {
    let mut verifier = RecordVerifier::new(context);
    let mut first = RecordReader::new();
    for piece in pieces {
        first.push(piece, |unit| {
            if let Unit::Item(line) = unit {
                verifier.learn(&line.value);
            }
        });
    }
    first.finish(|unit| {
        if let Unit::Item(line) = unit {
            verifier.learn(&line.value);
        }
    });
    let mut findings = Vec::new();
    let mut second = RecordReader::new();
    for piece in pieces {
        second.push(piece, |unit| findings.extend(verifier.verify(&unit)));
    }
    second.finish(|unit| findings.extend(verifier.verify(&unit)));
    findings
}

fn stream_streamed(pieces: &[&[u8]], context: VerifyContext) -> Vec<Finding> {
    let mut verifier = StreamVerifier::new(context);
    let mut first = SseReader::new();
    for piece in pieces {
        first.push(piece, |unit| {
            if let Unit::Item(frame) = unit {
                verifier.learn(&frame.value);
            }
        });
    }
    first.finish(|unit| {
        if let Unit::Item(frame) = unit {
            verifier.learn(&frame.value);
        }
    });
    let mut findings = Vec::new();
    let mut second = SseReader::new();
    for piece in pieces {
        second.push(piece, |unit| findings.extend(verifier.verify(&unit)));
    }
    second.finish(|unit| findings.extend(verifier.verify(&unit)));
    findings
}

fn trace_streamed(pieces: &[&[u8]], context: VerifyContext) -> Vec<Finding> {
    let verifier = TraceVerifier::new(context);
    let mut findings = Vec::new();
    let mut reader = TraceReader::new();
    for piece in pieces {
        reader.push(piece, |unit| findings.extend(verifier.verify(&unit)));
    }
    reader.finish(|unit| findings.extend(verifier.verify(&unit)));
    findings
}

/// How the whole-slice readers split a JSONL surface before this change, kept as the
/// reference: a leading byte-order mark dropped, one final `\n` dropped, then every `\n` ends a
/// line, numbered from 1 (each line read on its own then drops a `\r` at its end).
fn reference_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .collect()
}

/// Pieces a JSONL surface is made of: good and bad lines, blank lines, CRLF, bytes that are not
/// UTF-8, a line cut short.
fn jsonl_piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#.to_vec()),
        Just(br#"{"role":"tool","tool_call_id":"c1","content":"raw","fence":"tool:x"}"#.to_vec()),
        Just(br#"{"type":"murmur.record"}"#.to_vec()),
        Just(br#"{"event_type":"tool_call","tool_name":"bash","output":"x","output_bytes":1,"status":"ok"}"#.to_vec()),
        Just(br#"{"event_type":"turn_end"}"#.to_vec()),
        Just(br#"{"role":"user","content":5}"#.to_vec()),
        Just(br#"{"a":1,"a":2}"#.to_vec()),
        Just(b"not json".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"   \t".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"{\"role\":".to_vec()),
    ]
}

fn jsonl() -> impl Strategy<Value = Vec<u8>> {
    (any::<bool>(), prop::collection::vec(jsonl_piece(), 0..24)).prop_map(|(bom, pieces)| {
        let mut bytes = if bom {
            b"\xEF\xBB\xBF".to_vec()
        } else {
            Vec::new()
        };
        for piece in pieces {
            bytes.extend_from_slice(&piece);
        }
        bytes
    })
}

fn sse() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"event: artifact\n".to_vec()),
        Just(b"event: status\n".to_vec()),
        Just(b"id: 7\r\n".to_vec()),
        Just(br#"data: {"artifact":{"tool_name":"bash","content":"<untrusted-content source=tool:bash>\nx\n</untrusted-content>","fence_source":"tool:bash"}}"#.to_vec()),
        Just(br#"data: {"artifact":{"tool_name":"bash","content":"<untrusted-content source=tool:bash>\nx\n</untrusted-content>"}}"#.to_vec()),
        Just(b"data: {oops}".to_vec()),
        Just(b"data: \xff".to_vec()),
        Just(b":heartbeat\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn jsonl_readers_read_any_chunking_as_the_whole(
        bytes in jsonl(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let pieces = chunks(&bytes, &cuts);
        prop_assert_eq!(record_in_chunks(&pieces), read_record(&bytes));
        prop_assert_eq!(trace_in_chunks(&pieces), read_trace(&bytes));
    }

    #[test]
    fn jsonl_lines_are_split_as_the_reference_splits_them(bytes in jsonl()) {
        let report = read_record(&bytes);
        let lines = reference_lines(&bytes);
        prop_assert_eq!(report.counts.read, lines.len());
        // Each line read on its own gives the unit the whole read gave at its number.
        let mut expected = RecordReport::default();
        for (number, line) in &lines {
            let mut alone = read_record(line);
            if alone.counts.read == 0 {
                // A line that is only a byte-order mark, after line 1: a blank unit.
                alone.add(Unit::Skipped);
            }
            for item in &mut alone.items {
                item.line = *number;
            }
            for error in &mut alone.errors {
                error.line = *number;
            }
            expected.items.append(&mut alone.items);
            expected.errors.append(&mut alone.errors);
            expected.counts.read += alone.counts.read;
            expected.counts.skipped += alone.counts.skipped;
            expected.counts.failed += alone.counts.failed;
        }
        prop_assert_eq!(report, expected);
    }

    #[test]
    fn a_line_over_the_limit_fails_at_its_number_and_every_other_line_reads_as_ever(
        bytes in jsonl(),
        limit in 0usize..80,
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let whole = read_record(bytes);
        let long: Vec<(usize, u64)> = reference_lines(bytes)
            .into_iter()
            .filter(|(_, line)| line.len() > limit)
            .map(|(number, line)| (number, line.len() as u64))
            .collect();
        let is_long = |number: usize| long.iter().any(|(at, _)| *at == number);
        let mut expected = RecordReport::default();
        expected.items = whole.items.iter().filter(|item| !is_long(item.line)).cloned().collect();
        let mut errors: Vec<(usize, ReadError)> = whole
            .errors
            .iter()
            .filter(|error| !is_long(error.line))
            .map(|error| (error.line, error.error.clone()))
            .collect();
        errors.extend(long.iter().map(|&(number, bytes)| (number, ReadError::TooLong { bytes, limit })));
        errors.sort_by_key(|(number, _)| *number);

        let limited = record_in_chunks_within(&chunks(bytes, &cuts), limit);
        prop_assert_eq!(&limited.items, &expected.items);
        let got: Vec<(usize, ReadError)> =
            limited.errors.iter().map(|error| (error.line, error.error.clone())).collect();
        prop_assert_eq!(got, errors);
        prop_assert_eq!(limited.counts.read, whole.counts.read);
        prop_assert_eq!(
            limited.counts.skipped,
            whole.counts.read - limited.items.len() - limited.errors.len()
        );
    }

    #[test]
    fn the_sse_reader_within_a_limit_reads_any_chunking_as_the_whole(
        bytes in sse(),
        limit in 0usize..200,
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = sse_in_chunks_within(&[&bytes], limit);
        prop_assert_eq!(sse_in_chunks_within(&chunks(&bytes, &cuts), limit), whole.clone());
        // Every event the unlimited reader reads is either read alike or failed as too long.
        let unlimited = read_sse(&bytes);
        prop_assert_eq!(whole.counts.read, unlimited.counts.read);
        for item in &whole.items {
            prop_assert!(unlimited.items.contains(item));
        }
        for error in &whole.errors {
            prop_assert!(
                matches!(error.error, ReadError::TooLong { .. }) || unlimited.errors.contains(error),
                "{error}"
            );
        }
    }

    #[test]
    fn the_sse_reader_reads_any_chunking_as_the_whole(
        bytes in sse(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        prop_assert_eq!(sse_in_chunks(&chunks(&bytes, &cuts)), read_sse(&bytes));
    }

    #[test]
    fn streamed_verifiers_find_what_the_whole_surface_verifiers_find(
        record in jsonl(),
        stream in sse(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        prop_assert_eq!(
            record_streamed(&chunks(&record, &cuts), context()),
            verify_record(&read_record(&record), &context())
        );
        prop_assert_eq!(
            trace_streamed(&chunks(&record, &cuts), context()),
            verify_trace(&read_trace(&record), &context())
        );
        prop_assert_eq!(
            stream_streamed(&chunks(&stream, &cuts), context()),
            verify_stream(&read_sse(&stream), &context())
        );
    }

    #[test]
    fn live_markers_are_every_marker_the_reference_finds(text in "(<|/|[uU]ntrusted-|[cC]ontent|<!MURMUR-NEUTRALISED!|x|é|>){0,40}") {
        let closers = reference::closers(text.as_bytes());
        let naive: Vec<_> = reference::markers(text.as_bytes())
            .into_iter()
            .map(|at| (at, if closers.contains(&at) { MarkerKind::Closer } else { MarkerKind::Opener }))
            .collect();
        prop_assert_eq!(live_markers(&text).collect::<Vec<_>>(), naive);
    }
}

#[test]
fn the_fixture_workdir_verifies_alike_byte_by_byte_and_whole() {
    let stream = fixture("artifacts.sse");
    let record = fixture("conversation.jsonl");
    let trace = fixture("trace.jsonl");
    let bytewise = |bytes: &[u8]| -> Vec<Vec<u8>> { bytes.iter().map(|b| vec![*b]).collect() };

    let mut learned = context();
    learned.learn_calls_from_stream(&read_sse(&stream));
    let mut from_frames = context();
    let mut reader = SseReader::new();
    reader.push(&stream, |unit| {
        if let Unit::Item(frame) = unit {
            from_frames.learn_call_from_frame(&frame.value.frame);
        }
    });
    reader.finish(|_| {});
    assert_eq!(from_frames, learned);

    for (streamed, whole) in [
        (
            stream_streamed(
                &bytewise(&stream)
                    .iter()
                    .map(Vec::as_slice)
                    .collect::<Vec<_>>(),
                learned.clone(),
            ),
            verify_stream(&read_sse(&stream), &learned),
        ),
        (
            record_streamed(
                &bytewise(&record)
                    .iter()
                    .map(Vec::as_slice)
                    .collect::<Vec<_>>(),
                learned.clone(),
            ),
            verify_record(&read_record(&record), &learned),
        ),
        (
            trace_streamed(
                &bytewise(&trace)
                    .iter()
                    .map(Vec::as_slice)
                    .collect::<Vec<_>>(),
                learned.clone(),
            ),
            verify_trace(&read_trace(&trace), &learned),
        ),
    ] {
        assert!(
            !whole.is_empty(),
            "the fixture plants a defect on every surface"
        );
        assert_eq!(streamed, whole);
    }
}

#[test]
fn a_record_verifier_learns_calls_named_after_the_line_that_answers_them() {
    let record = b"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"is_error\":false,\"content\":\"Triage notes\"}\n\
        {\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"triage\",\"input\":{}}]}\n";
    let context = VerifyContext::new().with_skills(["triage"]);
    assert_eq!(record_streamed(&[record], context.clone()), []);
    // Without the first pass, line 1 cannot be known as the skill's doc.
    let unlearned = RecordVerifier::new(context);
    let mut findings = Vec::new();
    let mut reader = RecordReader::new();
    reader.push(record, |unit| findings.extend(unlearned.verify(&unit)));
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind.name(), "unfenced-tool-result");
}

#[test]
fn a_stream_verifier_told_the_stream_is_labelled_needs_no_first_pass() {
    let capture = b"event: artifact\nid: 1\ndata: {\"artifact\":{\"tool_name\":\"bash\",\"content\":\"<untrusted-content source=tool:bash>\\nx\\n</untrusted-content>\"}}\n\n";
    let verify = |verifier: &StreamVerifier| {
        let mut findings = Vec::new();
        let mut reader = SseReader::new();
        reader.push(capture, |unit| findings.extend(verifier.verify(&unit)));
        reader.finish(|unit| findings.extend(verifier.verify(&unit)));
        findings
    };
    let unlabelled = StreamVerifier::new(VerifyContext::new());
    assert_eq!(verify(&unlabelled), []);
    let labelled = unlabelled.with_labelled(true);
    let findings = verify(&labelled);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind.name(), "fence-without-label");
}

#[test]
fn a_unit_reports_its_line_and_a_report_extends_from_units() {
    let mut units = Vec::new();
    let mut reader = TraceReader::new();
    reader.push(
        b"\n{\"event_type\":\"skill_call\",\"skill_name\":\"k\",\"output_bytes\":0}\n{",
        |unit| units.push(unit),
    );
    reader.finish(|unit| units.push(unit));
    let lines: Vec<_> = units.iter().map(Unit::line).collect();
    assert_eq!(lines, [None, Some(2), Some(3)]);
    let mut report = TraceReport::default();
    report.extend(units);
    assert_eq!(
        report,
        read_trace(b"\n{\"event_type\":\"skill_call\",\"skill_name\":\"k\",\"output_bytes\":0}\n{")
    );
}

#[test]
fn an_sse_event_over_the_limit_fails_and_the_stream_goes_on() {
    let frame = |content: &str| {
        format!(
            "event: artifact\nid: 1\ndata: {{\"artifact\":{{\"tool_name\":\"bash\",\"content\":\"{content}\"}}}}\n\n"
        )
    };
    let big = "x".repeat(300);
    let stream = format!(":{big}\n\n{}{}", frame(&big), frame("small"));
    for pieces in [
        vec![stream.as_bytes()],
        stream.as_bytes().chunks(7).collect(),
    ] {
        let report = sse_in_chunks_within(&pieces, 200);
        assert_eq!(report.items.len(), 1, "{report:?}");
        assert_eq!(report.items[0].value.frame.artifact.content, "small");
        assert_eq!(report.errors.len(), 1);
        let error = &report.errors[0];
        // The first data line of the second event, with its id; the comment was skipped.
        assert_eq!((error.line, error.frame_id.as_deref()), (5, Some("1")));
        assert!(
            matches!(error.error, ReadError::TooLong { bytes, limit: 200 } if bytes > 300),
            "{error}"
        );
    }
    // Data spread over many short lines counts whole.
    let spread = format!("event: artifact\n{}\n", "data: xxxxxxxxxx\n".repeat(30));
    let report = sse_in_chunks_within(&[spread.as_bytes()], 200);
    assert!(matches!(
        report.errors[..],
        [ref error] if error.line == 2 && matches!(error.error, ReadError::TooLong { .. })
    ));
}

#[test]
fn an_sse_data_line_over_the_limit_is_data_whatever_the_chunking() {
    // After a byte-order mark, one byte at a time, with a limit smaller than `data:`: the line
    // is still known as data, and its event fails rather than vanishing.
    let stream =
        b"\xEF\xBB\xBFdata: {\"artifact\":{\"content\":\"x\"}}\n\nid: 1234567890\ndata: {}\n\n";
    for limit in [0, 3, 10] {
        let report = sse_in_chunks_within(&stream.chunks(1).collect::<Vec<_>>(), limit);
        let lines: Vec<_> = report.errors.iter().map(|error| error.line).collect();
        assert_eq!(lines, [1, 4], "limit {limit}: {report:?}");
        assert!(
            report
                .errors
                .iter()
                .all(|error| matches!(error.error, ReadError::TooLong { .. }))
        );
    }
}
