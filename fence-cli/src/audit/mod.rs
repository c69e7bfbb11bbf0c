//! `fence audit`: verify the surfaces an agent runtime wrote, streaming, in bounded memory.

mod call;
mod discover;
mod manifest;
mod report;
mod tally;
mod verify;

use std::path::PathBuf;

use fence_surfaces::DEFAULT_MAX_LINE_BYTES;

use crate::exit::{Failure, Status};

pub(crate) use self::manifest::{Declarations, Manifest, Origin};
pub(crate) use self::report::Format;

/// Reads `conversation.jsonl`, `trace.jsonl` and SSE captures (`*.sse`, or any file whose first
/// line says what it is), walking directories, and runs the verifiers over each, a unit at a
/// time: a file of any size is read in memory bounded by its longest line, and by
/// `--max-line-bytes`.
///
/// Findings print as `file:line: kind: detail`, then a summary. Exit status: 2 when some input
/// could not be read — a path that is missing or unreadable, a file that is no surface, a FIFO,
/// socket or device (never opened), a directory with none, a surface file with no unit to
/// verify, or a unit (line, SSE event) that is not readable, which is also a finding at its
/// line; otherwise 1 when there is a finding that is an error; otherwise 0
/// (findings that are not errors, such as an unknown source kind, are reported and do not fail
/// the audit).
///
/// Files in one directory are one runtime's workdir: calls named by its SSE frames (call id to
/// tool or skill), and the calls its frames and traces say reached a tool, are used to classify
/// its record's lines.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    fence audit ./workdir\n  \
    fence audit --skills triage --tools bash,web-fetch runs/*/conversation.jsonl\n  \
    fence audit --manifest fence.json --format json ./workdir | jq 'select(.type == \"finding\")'")]
pub(crate) struct Args {
    /// Files or directories to audit; directories are walked.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Declared skills (comma-separated): their `skill.md` results are never fenced.
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    skills: Vec<String>,
    /// Declared tools (comma-separated): a failed call to a name that is neither a declared tool
    /// nor a skill never reached a tool (a dispatch failure, never fenced).
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    tools: Option<Vec<String>>,
    /// A JSON file declaring skills and tools: `{"skills": […], "tools": […]}`. Without it, each
    /// workdir's `fence.json` (or `manifest.json`) is used, the nearest up to the PATH given.
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// `text` for people, `json` for machines: one object per finding, then a summary object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The longest line (for an SSE capture, the most data of one event) read, in bytes: a
    /// longer one is counted as it goes past, never held, and reported as unreadable at its
    /// line. It bounds the audit's memory.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let flags = Manifest {
        skills: args.skills.clone(),
        tools: args.tools.clone(),
    };
    let declarations = match &args.manifest {
        Some(path) => Declarations::Given {
            path: path.clone(),
            manifest: Manifest::read(path)?,
            flags,
        },
        None => Declarations::Found { flags },
    };
    let mut out = anstream::stdout().lock();
    audit(
        &args.paths,
        &declarations,
        args.format,
        args.max_line_bytes,
        &mut out,
    )
}

/// Audits `paths` with what `declarations` declare, writing the findings and the summary to `out`: what
/// `fence audit` does, and what `fence demo` does to the directory it wrote.
pub(crate) fn audit(
    paths: &[PathBuf],
    declarations: &Declarations,
    format: Format,
    max_line_bytes: usize,
    out: &mut dyn std::io::Write,
) -> Result<Status, Failure> {
    let mut found = discover::discover(paths);
    let roots: Vec<PathBuf> = paths.iter().filter(|path| path.is_dir()).cloned().collect();
    let mut notes = Vec::new();
    let declared: Vec<_> = found
        .groups
        .iter()
        .map(|(dir, _)| declarations.of(dir, &roots, &mut found.problems, &mut notes))
        .collect();
    let mut reporter = report::Reporter::new(format, out);
    let mut shown = Vec::new();
    for origin in declared.iter().map(|declared| &declared.origin) {
        if *origin != Origin::None && !shown.contains(&origin) {
            reporter.manifest(origin)?;
            shown.push(origin);
        }
    }
    for note in &notes {
        reporter.note(note)?;
    }
    for problem in &found.problems {
        reporter.problem(problem)?;
    }
    verify::verify(&found, &declared, max_line_bytes, &mut reporter)?;
    reporter.summary(&found)
}
