//! `fence audit`: verify the surfaces an agent runtime wrote, streaming, in bounded memory.

mod discover;
mod report;
mod tally;
mod verify;

use std::path::{Path, PathBuf};

use fence_surfaces::{DEFAULT_MAX_LINE_BYTES, VerifyContext};
use serde::{Deserialize, Serialize};

use crate::exit::{Failure, Status};

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
/// tool or skill) are used to classify its record's lines.
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
    /// A JSON file declaring skills and tools: `{"skills": […], "tools": […]}`.
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

/// The declarations an audit is told about, from `--manifest`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    #[serde(default)]
    pub(crate) skills: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<Vec<String>>,
}

impl Manifest {
    /// Reads a manifest file.
    pub(crate) fn read(path: &Path) -> Result<Manifest, Failure> {
        let bytes = std::fs::read(path).map_err(|error| crate::input::cannot_read(path, &error))?;
        serde_json::from_slice(&bytes).map_err(|error| {
            Failure::trouble(format_args!(
                "{} is not a manifest: {error}; write {{\"skills\": [\"name\", …], \"tools\": [\"name\", …]}}",
                path.display()
            ))
        })
    }
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let mut manifest = match &args.manifest {
        Some(path) => Manifest::read(path)?,
        None => Manifest::default(),
    };
    manifest.skills.extend(args.skills.iter().cloned());
    if let Some(tools) = &args.tools {
        manifest
            .tools
            .get_or_insert_with(Vec::new)
            .extend(tools.iter().cloned());
    }
    let mut out = anstream::stdout().lock();
    audit(
        &args.paths,
        &context(&manifest),
        args.format,
        args.max_line_bytes,
        &mut out,
    )
}

/// The verification context a manifest declares.
pub(crate) fn context(manifest: &Manifest) -> VerifyContext {
    let context = VerifyContext::new().with_skills(manifest.skills.iter().cloned());
    match &manifest.tools {
        Some(tools) => context.with_tools(tools.iter().cloned()),
        None => context,
    }
}

/// Audits `paths` with `context`, writing the findings and the summary to `out`: what
/// `fence audit` does, and what `fence demo` does to the directory it wrote.
pub(crate) fn audit(
    paths: &[PathBuf],
    context: &VerifyContext,
    format: Format,
    max_line_bytes: usize,
    out: &mut dyn std::io::Write,
) -> Result<Status, Failure> {
    let found = discover::discover(paths);
    let mut reporter = report::Reporter::new(format, out);
    for problem in &found.problems {
        reporter.problem(problem)?;
    }
    verify::verify(&found, context, max_line_bytes, &mut reporter)?;
    reporter.summary(&found)
}
