//! Printing what the model read, with the fences and the neutralised markers highlighted.

use std::io::{self, Write};

use fence_runtime::{ModelContent, NEUTRALISED_INFIX, parse};

use super::turn::Step;
use crate::style;

/// Prints every step of the turn as the model read it.
pub(super) fn turn(steps: &[Step], out: &mut dyn Write) -> io::Result<()> {
    let heading = style::HEADING;
    writeln!(
        out,
        "{heading}what the model read{heading:#}\none agent turn, scripted: no network, no model; every tool really ran, through its #[fence_boundary]"
    )?;
    // The first neutralised marker shown says what the infix is; the rest just count.
    let mut explained = false;
    let mut body = |out: &mut dyn Write, content: &ModelContent| body(out, content, &mut explained);
    for step in steps {
        match step {
            Step::Task { origin, content } => {
                let trust = if content.is_fenced() {
                    "untrusted, fenced"
                } else {
                    "trusted: the operator's own instruction, never fenced"
                };
                head(
                    out,
                    "user",
                    &format!("a task from `{}`, {trust}", origin.as_str()),
                )?;
                body(out, content)?;
            }
            Step::Model(text) => {
                head(out, "assistant", "the model's own text, never fenced")?;
                body(out, text)?;
            }
            Step::Tool(call) => {
                let error = if call.output.is_error() {
                    ", is_error"
                } else {
                    ""
                };
                head(
                    out,
                    &format!("tool {} ({}{error})", call.name, call.id),
                    call.about,
                )?;
                body(out, call.output.content())?;
            }
            Step::Skill { name, id, doc, .. } => {
                head(
                    out,
                    &format!("skill {name} ({id})"),
                    "the skill's own doc, never fenced; markers it names are neutralised",
                )?;
                body(out, doc)?;
            }
            Step::Hook { name, text } => {
                head(
                    out,
                    &format!("hook {name}"),
                    "the operator's hook speaking, never fenced",
                )?;
                body(out, text)?;
            }
        }
    }
    Ok(())
}

fn head(out: &mut dyn Write, who: &str, what: &str) -> io::Result<()> {
    let (place, dim) = (style::PLACE, style::DIM);
    writeln!(out, "\n{place}── {who}{place:#} {dim}{what}{dim:#}")
}

/// The content, its fence's markers and every neutralised marker highlighted.
fn body(out: &mut dyn Write, content: &ModelContent, explained: &mut bool) -> io::Result<()> {
    let text = content.as_str();
    let (fence, neutralised) = (style::FENCE, style::NEUTRALISED);
    // The fence's own markers, when the content is a block: the opener is its first line (a
    // source name holds no newline), the closer follows the content and its separator.
    let (opener, inner, closer) = match parse(text) {
        Ok(block) => {
            let start = text.find('\n').map_or(0, |at| at + 1);
            let end = start + block.content().len();
            (&text[..start], &text[start..end], &text[end..])
        }
        Err(_) => ("", text, ""),
    };
    write!(out, "{fence}{}{fence:#}", opener.trim_end_matches('\n'))?;
    if !opener.is_empty() {
        writeln!(out)?;
    }
    let mut count = 0;
    let mut rest = inner;
    let needle = format!("<{NEUTRALISED_INFIX}");
    while let Some(at) = rest.find(&needle) {
        write!(out, "{}", &rest[..at])?;
        let after = &rest[at + needle.len()..];
        let slash = usize::from(after.starts_with('/'));
        // The forged marker's name, as written: 17 ASCII bytes after the infix (and its `/`).
        let name = after
            .get(slash..slash + "untrusted-content".len())
            .filter(|name| name.eq_ignore_ascii_case("untrusted-content"))
            .map_or(0, str::len);
        let end = at + needle.len() + slash + name;
        write!(out, "{neutralised}{}{neutralised:#}", &rest[at..end])?;
        count += 1;
        rest = &rest[end..];
    }
    write!(out, "{rest}")?;
    if !closer.is_empty() {
        write!(out, "{fence}{closer}{fence:#}")?;
    }
    writeln!(out)?;
    if count > 0 {
        let note = style::NOTE;
        writeln!(
            out,
            "{note}↳ {count} marker{} the text spelled, neutralised: {} open or close a fence{note:#}",
            if count == 1 { "" } else { "s" },
            if count == 1 { "it cannot" } else { "none can" }
        )?;
        if !*explained {
            *explained = true;
            writeln!(
                out,
                "{note}  (the fence writes `{NEUTRALISED_INFIX}` after the `<` of every marker a text spells: the model still reads the text, but no longer as a marker){note:#}"
            )?;
        }
    }
    Ok(())
}
