//! The fixture workdir holds one planted defect of each finding kind (see
//! `fixtures/workdir/DEFECTS.md`): each is found exactly once, and nothing else is found.

use std::path::PathBuf;

use fence_runtime::{Exemption, ParseError};
use fence_surfaces::{
    Finding, FindingKind, Location, MarkerKind, MissingLabel, ReadError, Surface, VerifyContext,
    read_record, read_sse, read_trace, verify_record, verify_stream, verify_trace,
};

fn read(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/workdir")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn at(surface: Surface, line: usize, frame_id: Option<&str>) -> Location {
    let at = Location::new(surface, line);
    match frame_id {
        Some(id) => at.with_frame_id(id),
        None => at,
    }
}

fn at_part(line: usize, part: usize) -> Location {
    at(Surface::Record, line, None).with_part(part)
}

fn verify_workdir() -> Vec<Finding> {
    let stream = read_sse(&read("artifacts.sse"));
    let record = read_record(&read("conversation.jsonl"));
    let trace = read_trace(&read("trace.jsonl"));

    // The one unit that fails and the skipped units are the ones planted.
    assert_eq!(
        (
            stream.counts.read,
            stream.counts.skipped,
            stream.counts.failed
        ),
        (11, 1, 1)
    );
    assert_eq!(
        (
            record.counts.read,
            record.counts.skipped,
            record.counts.failed
        ),
        (15, 1, 0)
    );
    assert_eq!(
        (trace.counts.read, trace.counts.skipped, trace.counts.failed),
        (11, 3, 0)
    );

    let mut context =
        VerifyContext::new()
            .with_skills(["triage"])
            .with_tools(["bash", "web-fetch", "read-file"]);
    context.learn_calls_from_stream(&stream);

    let mut findings = verify_stream(&stream, &context);
    findings.extend(verify_record(&record, &context));
    findings.extend(verify_trace(&trace, &context));
    findings
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one finding per planted defect, spelled out"
)]
fn each_planted_defect_is_found_exactly_once_and_nothing_else() {
    let expected = [
        Finding::new(
            at(Surface::ArtifactStream, 27, Some("5")),
            FindingKind::LabelMismatch {
                label: "tool:web-search".into(),
                markers: "tool:web-fetch".into(),
            },
        ),
        Finding::new(
            at(Surface::ArtifactStream, 31, Some("6")),
            FindingKind::FenceOnExempt {
                exemption: Exemption::HookArtifact,
                markers: Some("tool:lint".into()),
            },
        ),
        Finding::new(
            at(Surface::ArtifactStream, 35, Some("7")),
            FindingKind::FenceWithoutLabel {
                label: MissingLabel::Absent,
                markers: "tool:read-file".into(),
            },
        ),
        Finding::new(
            at(Surface::ArtifactStream, 39, Some("8")),
            FindingKind::NotAHookArtifact {
                exit_code: Some(0),
                is_error: Some(false),
            },
        ),
        Finding::new(
            at(Surface::ArtifactStream, 43, Some("9")),
            FindingKind::UnreadableUnit {
                error: ReadError::DuplicateKey {
                    key: "content".into(),
                    column: 262,
                },
            },
        ),
        Finding::new(
            at(Surface::ArtifactStream, 47, Some("10")),
            FindingKind::TruncationDenied,
        ),
        Finding::new(
            at(Surface::Record, 6, None),
            FindingKind::UnfencedToolResult {
                error: ParseError::NoOpener,
            },
        ),
        Finding::new(
            at(Surface::Record, 7, None),
            FindingKind::UnknownSourceKind {
                source: "member:researcher".into(),
            },
        ),
        Finding::new(
            at(Surface::Record, 8, None),
            FindingKind::LabelOnInvalidBlock {
                label: "tool:web-fetch".into(),
                error: ParseError::NoOpener,
            },
        ),
        Finding::new(
            at(Surface::Record, 10, None),
            FindingKind::ToolSourceMismatch {
                expected: "tool:bash".into(),
                markers: "tool:web-fetch".into(),
            },
        ),
        Finding::new(
            at_part(12, 1),
            FindingKind::UnreadablePart {
                path: "content[1]".into(),
                part_type: Some("document".into()),
            },
        ),
        Finding::new(
            at(Surface::Record, 13, None),
            FindingKind::UnknownRole {
                role: "narrator".into(),
            },
        ),
        Finding::new(
            at(Surface::Record, 14, None),
            FindingKind::LiveMarkerOutsideBlock {
                error: ParseError::NoOpener,
            },
        ),
        Finding::new(
            at(Surface::Record, 15, None),
            FindingKind::CallIdReused {
                id: "toolu_11".into(),
                name: "read-file".into(),
                other: "bash".into(),
            },
        ),
        Finding::new(
            at(Surface::Trace, 4, None),
            FindingKind::OutputBytesMismatch {
                output_bytes: 10,
                actual: 68,
            },
        ),
        Finding::new(
            at(Surface::Trace, 5, None),
            FindingKind::LiveMarkerInBlock {
                offset: 46,
                marker: MarkerKind::Closer,
            },
        ),
        Finding::new(
            at(Surface::Trace, 9, None),
            FindingKind::UnknownStatus {
                status: "success".into(),
            },
        ),
        Finding::new(
            at(Surface::Trace, 10, None),
            FindingKind::LiveMarkerInSkippedUnit {
                unit: "a trace event of type `llm_response`".into(),
                path: "text".into(),
                offset: 6,
                marker: MarkerKind::Closer,
            },
        ),
        Finding::new(
            at(Surface::Trace, 11, None),
            FindingKind::SkillCalledAsTool {
                name: "triage".into(),
            },
        ),
    ];
    assert_eq!(verify_workdir(), expected);
}

#[test]
fn the_fixture_covers_every_finding_kind_once() {
    let mut names: Vec<_> = verify_workdir().iter().map(|f| f.kind.name()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "call-id-reused",
            "fence-on-exempt",
            "fence-without-label",
            "label-mismatch",
            "label-on-invalid-block",
            "live-marker-in-block",
            "live-marker-in-skipped-unit",
            "live-marker-outside-block",
            "not-a-hook-artifact",
            "output-bytes-mismatch",
            "skill-called-as-tool",
            "tool-source-mismatch",
            "truncation-denied",
            "unfenced-tool-result",
            "unknown-role",
            "unknown-source-kind",
            "unknown-status",
            "unreadable-part",
            "unreadable-unit",
        ]
    );
}

#[test]
fn only_the_unknown_source_kind_and_role_are_not_errors() {
    let not_errors: Vec<_> = verify_workdir()
        .into_iter()
        .filter(|finding| !finding.is_error())
        .map(|finding| finding.kind.name())
        .collect();
    assert_eq!(not_errors, ["unknown-source-kind", "unknown-role"]);
}

#[test]
fn findings_read_well() {
    let text: Vec<_> = verify_workdir().iter().map(ToString::to_string).collect();
    assert_eq!(
        text[0],
        "artifact stream, line 27 (frame id 5): the label says `tool:web-search` but the markers say `tool:web-fetch`"
    );
    assert_eq!(
        text[4],
        "artifact stream, line 43 (frame id 9): cannot be read, so nothing in it was checked: duplicate key `content` at column 262: readers disagree on which value wins; write each key once"
    );
    assert_eq!(
        text[10],
        "conversation record, line 12, content[1]: the part at `content[1]` (type `document`) is of a type the verifier does not know, or lacks the key that holds its text: its text is not checked"
    );
    assert_eq!(
        text[15],
        "trace, line 5: a live closing marker at byte 46 inside a fenced block"
    );
}
