//! `fence parse`: read one block back, or say which rule of the grammar it broke, and where.

use std::io::{self, Write};

use fence_runtime::{CLOSING_MARKER as CLOSER, MarkerKind, live_markers};
use fence_runtime::{ParseError, parse};
use serde::Serialize;

use crate::exit::{Failure, Status};
use std::path::PathBuf;

use crate::input::Input;
use crate::style;

/// Reads its input as exactly one fenced block, strictly, and prints its source and content
/// (`--json`: `{"source":…,"content":…,"truncated":…}`). The content is printed verbatim: still
/// neutralised.
///
/// A malformed block prints the rule it broke and where (line, column, byte offset) and exits
/// with status 1; with `--json` that is an object on stdout too.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    fence wrap --tool bash < out.txt | fence parse\n  \
    fence parse --json block.txt | jq -r .source")]
pub(crate) struct Args {
    /// Read FILE instead of standard input (`-` is standard input).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Print `{"source":…,"content":…,"truncated":…}`, or the error as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Block<'a> {
    source: &'a str,
    content: &'a str,
    truncated: bool,
}

/// Why the input is not one block, and where it breaks the grammar.
#[derive(Serialize)]
struct Broken {
    error: &'static str,
    message: String,
    line: usize,
    column: usize,
    offset: usize,
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    Input::hint_if_terminal(args.file.as_deref(), false);
    let bytes = Input::open(args.file.as_deref())?.read_all()?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(error) => {
            let offset = error.valid_up_to();
            let (line, column) = line_column(&bytes[..offset]);
            return broken(
                args.json,
                &Broken {
                    error: "not-utf8",
                    message: "a fenced block is text, and the input is not UTF-8".into(),
                    line,
                    column,
                    offset,
                },
            );
        }
    };
    let mut out = anstream::stdout().lock();
    match parse(text) {
        Ok(block) => {
            if args.json {
                let json = Block {
                    source: block.source(),
                    content: block.content(),
                    truncated: block.is_truncated(),
                };
                serde_json::to_writer(&mut out, &json).map_err(io::Error::from)
            } else {
                let label = style::PLACE;
                let truncated = if block.is_truncated() {
                    "truncated: yes (the stream that made it was cut short)\n"
                } else {
                    ""
                };
                write!(
                    out,
                    "{label}source:{label:#} {}\n{truncated}\n{}",
                    block.source(),
                    block.content()
                )
            }
            .and_then(|()| writeln!(out))
            .map_err(|error| Failure::output(&error))?;
            Ok(Status::Clean)
        }
        Err(error) => {
            let offset = where_broken(text, error);
            let (line, column) = line_column(&text.as_bytes()[..offset]);
            broken(
                args.json,
                &Broken {
                    error: rule_name(error),
                    message: error.to_string(),
                    line,
                    column,
                    offset,
                },
            )
        }
    }
}

/// Reports a malformed block: on stdout as JSON, or on stderr. Exit status 1.
fn broken(json: bool, broken: &Broken) -> Result<Status, Failure> {
    let message = format!(
        "not a fenced block: {} (line {}, column {}, byte {})",
        broken.message, broken.line, broken.column, broken.offset
    );
    if json {
        let mut out = io::stdout().lock();
        serde_json::to_writer(&mut out, broken)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
            .map_err(|error| Failure::output(&error))?;
    }
    Err(Failure::bad_input(message))
}

/// A stable name for each rule.
fn rule_name(error: ParseError) -> &'static str {
    match error {
        ParseError::NoOpener => "no-opener",
        ParseError::SourceNotTerminated => "source-not-terminated",
        ParseError::MissingSeparatorAfterOpener => "missing-separator-after-opener",
        ParseError::NoCloser => "no-closer",
        ParseError::MissingSeparatorBeforeCloser => "missing-separator-before-closer",
        ParseError::TextAfterCloser => "text-after-closer",
        _ => "malformed-block",
    }
}

/// The opener up to its source name: `<untrusted-content source=`.
const OPENER_HEAD: usize = "<untrusted-content source=".len();

/// The byte offset where `text` breaks the rule `error` names: where the grammar wanted
/// something else. The block's own markers are found with the library's marker matcher.
fn where_broken(text: &str, error: ParseError) -> usize {
    let bytes = text.as_bytes();
    let source_end = || {
        bytes[OPENER_HEAD.min(bytes.len())..]
            .iter()
            .position(|&b| matches!(b, b'>' | b'\n' | b'\r'))
            .map_or(bytes.len(), |at| OPENER_HEAD + at)
    };
    let final_closer = || {
        live_markers(text)
            .filter(|&(at, kind)| {
                kind == MarkerKind::Closer && bytes.get(at + CLOSER.len() - 1) == Some(&b'>')
            })
            .last()
            .map(|(at, _)| at)
    };
    match error {
        ParseError::SourceNotTerminated => source_end(),
        ParseError::MissingSeparatorAfterOpener => source_end() + 1,
        ParseError::NoCloser => bytes.len(),
        ParseError::MissingSeparatorBeforeCloser => final_closer().unwrap_or(bytes.len()),
        ParseError::TextAfterCloser => final_closer().map_or(bytes.len(), |at| at + CLOSER.len()),
        _ => 0,
    }
}

/// The 1-based line and column (in characters) just after `before`.
fn line_column(before: &[u8]) -> (usize, usize) {
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let line = before.split(|&b| b == b'\n').count();
    let column = 1 + String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count();
    (line, column)
}
