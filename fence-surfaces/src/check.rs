//! Checking one unit of a surface, once [`classify`](crate::classify) has said what it is: the
//! findings, in the order the [crate docs](crate#findings) list them.

use fence_runtime::{CLOSING_MARKER, Exemption, ParseError, Source, SourceKind, live_markers};

use crate::artifact::ParsedArtifact;
use crate::classify::{ResultKind, has_hook_ids, is_tool_line, known_role};
use crate::context::VerifyContext;
use crate::finding::{FindingKind, MissingLabel};
use crate::markers::{Markers, read_markers};
use crate::record::{ParsedMessage, Part};
use crate::report::Label;
use crate::trace::ParsedEvent;

/// Checks an artifact frame: whether it is the hook artifact it looks like (1), its content (2
/// and 3), then whether its `truncated` flag denies what its block says (4).
pub(crate) fn check_frame(
    artifact: &ParsedArtifact,
    surface_labels: bool,
    context: &VerifyContext,
    out: &mut Vec<FindingKind>,
) {
    let kind = context.classify_frame(artifact);
    if has_hook_ids(artifact) && kind != ResultKind::HookArtifact {
        out.push(FindingKind::NotAHookArtifact {
            exit_code: artifact.exit_code,
            is_error: artifact.is_error,
        });
    }
    if let Some(name) = &artifact.tool_name {
        if let Some(id) = artifact.tool_call_id.value() {
            check_call(id, name, context, out);
        }
        if artifact.exit_code.is_some() && context.is_skill(name) {
            out.push(FindingKind::SkillCalledAsTool { name: name.clone() });
        }
    }
    check_content(
        &Unit {
            text: &artifact.content,
            label: &artifact.fence_source,
            surface_labels,
            kind,
            tool: artifact.tool_name.as_deref(),
        },
        out,
    );
    if artifact.truncated == Some(false)
        && fence_runtime::parse(&artifact.content).is_ok_and(|block| block.is_truncated())
    {
        out.push(FindingKind::TruncationDenied);
    }
}

/// Checks a record line: its role (1), its own text (2 and 3) unless the line carries only tool
/// result parts and no label, then each part in order (5). The line's findings come first, with
/// no part index, then each part's, with its index.
pub(crate) fn check_message(
    message: &ParsedMessage,
    surface_labels: bool,
    context: &VerifyContext,
) -> Vec<(Option<usize>, Vec<FindingKind>)> {
    let mut findings = Vec::new();
    match known_role(&message.role) {
        None => findings.push(FindingKind::UnknownRole {
            role: message.role.clone(),
        }),
        Some(known) if known != message.role => {
            findings.push(FindingKind::RoleSpelledOtherwise {
                role: message.role.clone(),
                read_as: known.into(),
            });
        }
        Some(_) => {}
    }
    // The calls the line names, and the call a `tool` line answering one names as its own.
    let own = match (&message.tool_call_id, &message.name) {
        (Some(id), Some(name)) if is_tool_line(message) => Some((id.as_str(), name.as_str())),
        _ => None,
    };
    // Each call id reused is reported once per line.
    let mut reported: Vec<&str> = Vec::new();
    for (id, name) in message.calls().chain(own) {
        if !reported.contains(&id) && context.other_name(id, name).is_some() {
            reported.push(id);
            check_call(id, name, context, &mut findings);
        }
    }
    let has_text = message
        .content
        .iter()
        .any(|part| matches!(part, Part::Text(_)));
    let has_results = message
        .content
        .iter()
        .any(|part| matches!(part, Part::ToolResult { .. }));
    // A `computer_call_output` with no text and no label holds a screenshot, or nothing: no
    // text a fence could mark.
    let screenshot = !has_text
        && message.item.as_deref() == Some("computer_call_output")
        && message.fence.source().is_none();
    if (has_text || !has_results || message.fence.source().is_some()) && !screenshot {
        if let Some(name) = context.skill_called_as_tool(message, None) {
            findings.push(FindingKind::SkillCalledAsTool { name: name.into() });
        }
        check_content(
            &Unit {
                text: &message.text(),
                label: &message.fence,
                // A Responses item has no `fence` of its own in that format: unlabelled, as a
                // part is, unless it carries one.
                surface_labels: surface_labels && message.item.is_none(),
                kind: context.classify_message(message),
                tool: if is_tool_line(message) {
                    context.line_call(message)
                } else {
                    None
                },
            },
            &mut findings,
        );
    }
    let mut out = Vec::with_capacity(1 + message.content.len());
    out.push((None, findings));
    for (index, part) in message.content.iter().enumerate() {
        out.push((Some(index), check_part(message, index, part, context)));
    }
    out
}

/// Checks one part of a record line: a tool result part's content, as a unit of its own, and
/// any part that cannot be read, also inside a tool result's content.
fn check_part(
    message: &ParsedMessage,
    index: usize,
    part: &Part,
    context: &VerifyContext,
) -> Vec<FindingKind> {
    let mut findings = Vec::new();
    match part {
        Part::ToolResult { content, .. } => {
            if let Some(name) = context.skill_called_as_tool(message, Some(part)) {
                findings.push(FindingKind::SkillCalledAsTool { name: name.into() });
            }
            check_content(
                &Unit {
                    text: &part.text().unwrap_or_default(),
                    label: &Label::Absent,
                    surface_labels: false,
                    kind: context.classify_part(message, part),
                    tool: context.part_call(message, part),
                },
                &mut findings,
            );
            for (nested, inner) in content.iter().enumerate() {
                if let Part::Other(value) = inner {
                    findings.push(FindingKind::UnreadablePart {
                        path: format!("content[{index}].content[{nested}]"),
                        part_type: Part::type_of(value).map(String::from),
                    });
                }
            }
        }
        Part::Other(value) => findings.push(FindingKind::UnreadablePart {
            path: part_path(message, index),
            part_type: Part::type_of(value).map(String::from),
        }),
        Part::Text(_) | Part::ToolUse { .. } | Part::NoText(_) => {}
    }
    findings
}

/// A call id bound to a name other than `name`, the one this unit gives it.
fn check_call(id: &str, name: &str, context: &VerifyContext, out: &mut Vec<FindingKind>) {
    if let Some(other) = context.other_name(id, name) {
        out.push(FindingKind::CallIdReused {
            id: id.into(),
            name: name.into(),
            other: other.into(),
        });
    }
}

/// Where a line's part `index` was read from: a Responses result item's `output` (a
/// screenshot is the whole `output`, and an `mcp_call`'s only part that cannot be read its
/// `error`), else `content`.
fn part_path(message: &ParsedMessage, index: usize) -> String {
    match message.item.as_deref() {
        Some("function_call_output" | "custom_tool_call_output" | "local_shell_call_output") => {
            format!("output[{index}]")
        }
        Some("computer_call_output") => "output".into(),
        Some("mcp_call") => "error".into(),
        _ => format!("content[{index}]"),
    }
}

/// Checks a trace event: a `tool_call` to a declared skill and its status (1), its `output`
/// when recorded (2 and 3), and the byte count of that output (4).
pub(crate) fn check_event(event: &ParsedEvent, context: &VerifyContext) -> Vec<FindingKind> {
    let mut findings = Vec::new();
    if let ParsedEvent::ToolCall(call) = event {
        if context.is_skill(&call.tool_name) {
            findings.push(FindingKind::SkillCalledAsTool {
                name: call.tool_name.clone(),
            });
        }
    }
    let (output, output_bytes, kind, tool, status) = match event {
        ParsedEvent::ToolCall(call) => (
            call.output.as_deref(),
            call.output_bytes,
            context.classify_tool_call(call),
            Some(call.tool_name.as_str()),
            Some(call.status.as_str()),
        ),
        ParsedEvent::SkillCall(call) => (
            call.output.as_deref(),
            call.output_bytes,
            ResultKind::SkillResult,
            None,
            call.status.as_deref(),
        ),
    };
    if let Some(status) = status.filter(|status| !known_status(status)) {
        findings.push(FindingKind::UnknownStatus {
            status: status.into(),
        });
    }
    if let Some(output) = output {
        check_content(
            &Unit {
                text: output,
                label: &Label::Absent,
                surface_labels: false,
                kind,
                tool,
            },
            &mut findings,
        );
        let actual = u64::try_from(output.len()).unwrap_or(u64::MAX);
        if actual != output_bytes {
            findings.push(FindingKind::OutputBytesMismatch {
                output_bytes,
                actual,
            });
        }
    }
    findings
}

/// Whether a trace `status` is one the wire format has.
fn known_status(status: &str) -> bool {
    matches!(status, "ok" | "error")
}

/// One unit's content, its label, what it is, and the tool it came from.
struct Unit<'a> {
    text: &'a str,
    label: &'a Label,
    /// Whether an absent label means "unlabelled" (false) or "missing" (true).
    surface_labels: bool,
    kind: ResultKind,
    /// The tool or skill the unit is the result of, when known: a tool's fence must name it.
    tool: Option<&'a str>,
}

/// Checks the text of a tool's result as every surface's tool result is checked: one valid
/// block, under `tool:<tool>` when the tool is known, with no live marker inside.
pub(crate) fn check_tool_result(text: &str, tool: Option<&str>) -> Vec<FindingKind> {
    let mut out = Vec::new();
    check_content(
        &Unit {
            text,
            label: &Label::Absent,
            surface_labels: false,
            kind: ResultKind::ToolResult,
            tool,
        },
        &mut out,
    );
    out
}

/// Checks a unit's content against its label (2), then the content itself (3).
fn check_content(unit: &Unit<'_>, out: &mut Vec<FindingKind>) {
    let markers = read_markers(unit.text);
    check_label(unit, &markers, out);
    check_live_markers(unit, &markers, out);
    check_fence_expected(unit, &markers, out);
    check_tool_source(unit, &markers, out);
    check_source_kinds(unit, &markers, out);
}

/// A label that disagrees with the markers, a label on content that is not a valid block, or
/// fenced content whose label is `null` or missing.
fn check_label(unit: &Unit<'_>, markers: &Markers<'_>, out: &mut Vec<FindingKind>) {
    match (unit.label, markers) {
        (Label::Source(label), Markers::Block(block)) if label != block.source() => {
            out.push(FindingKind::LabelMismatch {
                label: label.clone(),
                markers: block.source().into(),
            });
        }
        (Label::Source(label), Markers::Plain | Markers::Malformed(_)) => {
            out.push(FindingKind::LabelOnInvalidBlock {
                label: label.clone(),
                error: markers.error().unwrap_or(ParseError::NoOpener),
            });
        }
        (Label::Null, Markers::Block(block)) => out.push(FindingKind::FenceWithoutLabel {
            label: MissingLabel::Null,
            markers: block.source().into(),
        }),
        (Label::Absent, Markers::Block(block)) if unit.surface_labels => {
            out.push(FindingKind::FenceWithoutLabel {
                label: MissingLabel::Absent,
                markers: block.source().into(),
            });
        }
        // A matching label, or no label on content that needs none.
        _ => {}
    }
}

/// A live marker inside a valid block, other than its own opener and final closer.
fn check_live_markers(unit: &Unit<'_>, markers: &Markers<'_>, out: &mut Vec<FindingKind>) {
    if let Markers::Block(_) = markers {
        // The opener starts at 0 and the final closer ends the text (parse checked both): any
        // other marker between them is live.
        let inside = &unit.text[..unit.text.len() - CLOSING_MARKER.len()];
        if let Some((offset, marker)) = live_markers(inside).find(|&(offset, _)| offset > 0) {
            out.push(FindingKind::LiveMarkerInBlock { offset, marker });
        }
    }
}

/// Content that is never fenced carrying a fence or any live marker; content that may be
/// fenced or not carrying live markers that make no block; or a tool result that is not a
/// valid block.
fn check_fence_expected(unit: &Unit<'_>, markers: &Markers<'_>, out: &mut Vec<FindingKind>) {
    match (unit.kind.exemption(), unit.kind) {
        (Some(exemption), _) if *markers != Markers::Plain => {
            out.push(FindingKind::FenceOnExempt {
                exemption,
                markers: markers.source().map(ToString::to_string),
            });
        }
        // A task is fenced (one valid block, labelled where the surface labels) or trusted
        // (plain text); live markers that make no block are trusted text carrying markers,
        // unless a label already says the content was meant to be fenced.
        (None, ResultKind::Task)
            if matches!(markers, Markers::Malformed(_)) && unit.label.source().is_none() =>
        {
            out.push(FindingKind::FenceOnExempt {
                exemption: Exemption::TrustedTask,
                markers: None,
            });
        }
        // A failed call, or a line of an unknown role, may be fenced or not: one valid block,
        // or no live marker. Live markers that make no block are neither, unless a label
        // already says the content was meant to be fenced.
        (None, ResultKind::FailedCall | ResultKind::UnknownRole)
            if unit.label.source().is_none() =>
        {
            if let Markers::Malformed(error) = markers {
                out.push(FindingKind::LiveMarkerOutsideBlock { error: *error });
            }
        }
        (None, ResultKind::ToolResult) => {
            if let Some(error) = markers.error() {
                out.push(FindingKind::UnfencedToolResult { error });
            }
        }
        _ => {}
    }
}

/// A tool's result fenced under a source other than its tool's.
fn check_tool_source(unit: &Unit<'_>, markers: &Markers<'_>, out: &mut Vec<FindingKind>) {
    if let (true, Some(tool), Markers::Block(block)) =
        (unit.kind.may_be_tool_output(), unit.tool, markers)
    {
        // A source of a kind the verifier does not know (a member's or a delegation's reply,
        // say) is reported by `check_source_kinds`; which name it should carry is the
        // runtime's business.
        let source = block.source();
        if !matches!(SourceKind::of(source), SourceKind::Unknown(_)) {
            let expected = Source::tool(tool);
            if expected.as_str() != source {
                out.push(FindingKind::ToolSourceMismatch {
                    expected: expected.as_str().into(),
                    markers: source.into(),
                });
            }
        }
    }
}

/// A source, in the label or the markers, that is neither `tool:` nor `task:<known origin>`.
fn check_source_kinds(unit: &Unit<'_>, markers: &Markers<'_>, out: &mut Vec<FindingKind>) {
    let label = unit.label.source();
    let block = markers.source();
    for source in [label, block.filter(|block| Some(*block) != label)]
        .into_iter()
        .flatten()
    {
        if let SourceKind::Unknown(_) = SourceKind::of(source) {
            out.push(FindingKind::UnknownSourceKind {
                source: source.into(),
            });
        }
    }
}
