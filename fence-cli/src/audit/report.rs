//! What an audit prints: each finding as it is made, then a summary; as text or as JSON lines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use fence_surfaces::{Finding, FindingKind, Surface};
use serde::Serialize;

use super::call::Call;
use super::discover::{Discovery, Kind, Problem, Target};
use super::manifest::{NAMES, Origin};
use super::tally::Tally;
use crate::exit::{Failure, Status};
use crate::style;

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// `file:line: kind: detail` lines, then a summary, for people.
    Text,
    /// One JSON object per line: `{"type":"finding",…}` (and `"input-error"`), then
    /// `{"type":"summary",…}`.
    Json,
}

/// A file read to its end.
#[derive(Serialize)]
struct FileSummary {
    file: String,
    surface: &'static str,
    /// Whether the surface labels its units; `null` for a trace, which never does.
    labelled: Option<bool>,
    #[serde(flatten)]
    units: Tally,
    /// What a unit of the surface is called.
    #[serde(skip)]
    unit: &'static str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "finding")]
struct FindingLine<'a> {
    file: String,
    line: usize,
    surface: &'static str,
    frame_id: Option<&'a str>,
    part: Option<usize>,
    /// The call the finding is about, and the tool or skill it named, when its unit says.
    call_id: Option<&'a str>,
    tool: Option<&'a str>,
    kind: &'static str,
    error: bool,
    message: String,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "manifest")]
struct ManifestLine {
    file: String,
    /// `given` (`--manifest`) or `found` (beside the surfaces).
    how: &'static str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "note")]
struct NoteLine<'a> {
    message: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "input-error")]
struct ProblemLine {
    path: String,
    message: String,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "summary")]
struct SummaryLine<'a> {
    files: &'a [FileSummary],
    files_passed_over: usize,
    units: Tally,
    findings: FindingCounts<'a>,
    input_errors: usize,
    exit_code: u8,
}

#[derive(Serialize)]
struct FindingCounts<'a> {
    total: usize,
    errors: usize,
    notes: usize,
    by_kind: &'a BTreeMap<&'static str, usize>,
}

/// Prints an audit's findings as they are made, and its summary.
pub(crate) struct Reporter<'o> {
    format: Format,
    out: &'o mut dyn Write,
    files: Vec<FileSummary>,
    by_kind: BTreeMap<&'static str, usize>,
    errors: usize,
    notes: usize,
    unreadable: usize,
    problems: usize,
    /// The workdir being verified declares nothing (no manifest, no flag).
    undeclared: bool,
    /// An unfenced tool result was found where nothing was declared.
    undeclared_unfenced: bool,
    /// The tools those results came from, when their units name them.
    undeclared_tools: BTreeSet<String>,
}

impl<'o> Reporter<'o> {
    pub(crate) fn new(format: Format, out: &'o mut dyn Write) -> Reporter<'o> {
        Reporter {
            format,
            out,
            files: Vec::new(),
            by_kind: BTreeMap::new(),
            errors: 0,
            notes: 0,
            unreadable: 0,
            problems: 0,
            undeclared: false,
            undeclared_unfenced: false,
            undeclared_tools: BTreeSet::new(),
        }
    }

    /// Prints which manifest declares the skills and tools of the surfaces that follow.
    pub(crate) fn manifest(&mut self, origin: &Origin) -> Result<(), Failure> {
        let (file, how) = match origin {
            Origin::Given(file) => (file, "given"),
            Origin::Found(file) => (file, "found"),
            Origin::None => return Ok(()),
        };
        let file = file.display().to_string();
        match self.format {
            Format::Json => self.json(&ManifestLine { file, how }),
            Format::Text => {
                let (place, dim) = (style::PLACE, style::DIM);
                let why = match origin {
                    Origin::Given(_) => "--manifest",
                    _ => "found beside the surfaces; --manifest FILE chooses another",
                };
                self.text(&format!(
                    "manifest: {place}{file}{place:#} {dim}({why}){dim:#}"
                ))
            }
        }
    }

    /// Prints a note about the audit itself.
    pub(crate) fn note(&mut self, message: &str) -> Result<(), Failure> {
        match self.format {
            Format::Json => self.json(&NoteLine { message }),
            Format::Text => {
                let note = style::NOTE;
                self.text(&format!("{note}note:{note:#} {message}"))
            }
        }
    }

    /// The findings that follow are of a workdir that declares nothing, or one that does.
    pub(crate) fn workdir(&mut self, undeclared: bool) {
        self.undeclared = undeclared;
    }

    /// Prints a path that could not be audited.
    pub(crate) fn problem(&mut self, problem: &Problem) -> Result<(), Failure> {
        self.problems += 1;
        let path = problem.path.display().to_string();
        match self.format {
            Format::Json => self.json(&ProblemLine {
                path,
                message: problem.message.clone(),
            }),
            Format::Text => {
                let (place, red) = (style::PLACE, style::ERROR);
                let line = format!(
                    "{place}{path}:{place:#} {red}error:{red:#} {}",
                    problem.message
                );
                self.text(&line)
            }
        }
    }

    /// Prints one finding.
    pub(crate) fn finding(
        &mut self,
        path: &Path,
        finding: &Finding,
        call: &Call,
    ) -> Result<(), Failure> {
        let kind = finding.kind.name();
        *self.by_kind.entry(kind).or_default() += 1;
        if finding.is_error() {
            self.errors += 1;
        } else {
            self.notes += 1;
        }
        if matches!(finding.kind, FindingKind::UnreadableUnit { .. }) {
            self.unreadable += 1;
        }
        if self.undeclared && matches!(finding.kind, FindingKind::UnfencedToolResult { .. }) {
            self.undeclared_unfenced = true;
            if let Some(tool) = &call.tool {
                self.undeclared_tools.insert(tool.clone());
            }
        }
        let location = &finding.location;
        let file = path.display().to_string();
        match self.format {
            Format::Json => self.json(&FindingLine {
                file,
                line: location.line,
                surface: surface_name(location.surface),
                frame_id: location.frame_id.as_deref(),
                part: location.part,
                call_id: call.id.as_deref(),
                tool: call.tool.as_deref(),
                kind,
                error: finding.is_error(),
                message: finding.kind.to_string(),
            }),
            Format::Text => {
                let mut detail = String::new();
                if let Some(id) = &location.frame_id {
                    let _ = write!(detail, "frame id {id}: ");
                }
                if let Some(part) = location.part {
                    let _ = write!(detail, "content[{part}]: ");
                }
                match (call.id.as_deref(), call.tool.as_deref()) {
                    (Some(id), Some(tool)) => {
                        let _ = write!(detail, "call {id} ({tool}): ");
                    }
                    (Some(id), None) => {
                        let _ = write!(detail, "call {id}: ");
                    }
                    (None, Some(tool)) => {
                        let _ = write!(detail, "{tool}: ");
                    }
                    (None, None) => {}
                }
                detail.push_str(&finding.kind.to_string());
                let label = if finding.is_error() {
                    style::ERROR
                } else {
                    detail.push_str(" (a note, not an error)");
                    style::NOTE
                };
                let place = style::PLACE;
                let line = format!(
                    "{place}{file}:{}:{place:#} {label}{kind}:{label:#} {detail}",
                    location.line
                );
                self.text(&line)
            }
        }
    }

    /// Records a file read to its end.
    pub(crate) fn file(&mut self, target: &Target, units: Tally, labelled: Option<bool>) {
        self.files.push(FileSummary {
            file: target.path.display().to_string(),
            surface: target.kind.name(),
            labelled,
            units,
            unit: target.kind.unit(),
        });
    }

    /// The exit status the audit earned: 2 when some input could not be read (a path, a
    /// file, or a unit), else 1 when a finding is an error, else 0.
    fn status(&self) -> Status {
        if self.problems > 0 || self.unreadable > 0 {
            Status::Trouble
        } else if self.errors > 0 {
            Status::Findings
        } else {
            Status::Clean
        }
    }

    /// Prints the summary, and gives the exit status.
    pub(crate) fn summary(mut self, found: &Discovery) -> Result<Status, Failure> {
        let hint = self.undeclared_unfenced.then(|| self.hint());
        if let (Some(hint), Format::Json) = (&hint, self.format) {
            self.note(hint)?;
        }
        let status = self.status();
        let mut units = Tally::default();
        for file in &self.files {
            units.add(file.units);
        }
        match self.format {
            Format::Json => {
                let line = SummaryLine {
                    files: &self.files,
                    files_passed_over: found.passed_over,
                    units,
                    findings: FindingCounts {
                        total: self.errors + self.notes,
                        errors: self.errors,
                        notes: self.notes,
                        by_kind: &self.by_kind,
                    },
                    input_errors: self.problems,
                    exit_code: match status {
                        Status::Clean => 0,
                        Status::Findings => 1,
                        Status::Trouble => 2,
                    },
                };
                write_json(self.out, &line)?;
            }
            Format::Text => self.text_summary(found, units, status, hint.as_deref())?,
        }
        Ok(status)
    }

    /// What to declare, when nothing was and a tool result is unfenced.
    fn hint(&self) -> String {
        let names: Vec<&str> = self.undeclared_tools.iter().map(String::as_str).collect();
        let skills = if names.is_empty() {
            "NAME,…".to_owned()
        } else {
            names.join(",")
        };
        let which = match names[..] {
            [] => "a call".to_owned(),
            [one] => format!("`{one}`"),
            _ => format!("one of `{}`", names.join("`, `")),
        };
        format!(
            "nothing was declared for the surfaces with an unfenced tool result: no --manifest, \
             no {} or {} beside them, no --skills or --tools, so every successful call's result \
             must be fenced. If {which} is a skill, its doc is exempt once declared: pass \
             --skills {skills}, or put a {} beside the surfaces; a failed call to a tool that does \
             not exist is a dispatch failure once --tools lists the tools that do",
            NAMES[0], NAMES[1], NAMES[0]
        )
    }

    fn text_summary(
        &mut self,
        found: &Discovery,
        units: Tally,
        status: Status,
        hint: Option<&str>,
    ) -> Result<(), Failure> {
        let (heading, dim) = (style::HEADING, style::DIM);
        let mut text = format!(
            "\n{heading}summary{heading:#}\n{} read: {} units, {} skipped, {} failed to parse\n",
            plural(self.files.len(), "file"),
            units.read,
            units.skipped,
            units.failed
        );
        let width = self.files.iter().map(|f| f.file.len()).max().unwrap_or(0);
        for file in &self.files {
            let labelled = match file.labelled {
                Some(true) => ", labelled",
                Some(false) => ", unlabelled (read from its markers)",
                None => "",
            };
            let _ = writeln!(
                text,
                "  {:width$}  {dim}{}{labelled}: {} {} read, {} skipped, {} failed{dim:#}",
                file.file,
                file.surface,
                file.units.read,
                file.unit,
                file.units.skipped,
                file.units.failed,
            );
        }
        if found.passed_over > 0 {
            let _ = writeln!(
                text,
                "  {dim}{} in the directories walked passed over: no surface{dim:#}",
                plural(found.passed_over, "other file")
            );
        }
        if self.by_kind.is_empty() {
            text.push_str("findings: none\n");
        } else {
            let _ = writeln!(
                text,
                "findings: {} ({}, {})",
                self.errors + self.notes,
                plural(self.errors, "error"),
                plural(self.notes, "note")
            );
            let width = self
                .by_kind
                .keys()
                .map(|kind| kind.len())
                .max()
                .unwrap_or(0);
            for (kind, count) in &self.by_kind {
                let _ = writeln!(text, "  {kind:width$}  {count}");
            }
        }
        if let Some(hint) = hint {
            let note = style::NOTE;
            let _ = writeln!(text, "{note}note:{note:#} {hint}");
        }
        let (good, bad) = (style::GOOD, style::ERROR);
        let verdict = match status {
            Status::Clean => format!("{good}clean{good:#}: every unit verified"),
            Status::Findings => format!("{bad}findings{bad:#}: exit status 1"),
            Status::Trouble => {
                let mut what = Vec::new();
                if self.problems > 0 {
                    what.push(plural(self.problems, "path"));
                }
                if self.unreadable > 0 {
                    what.push(plural(self.unreadable, "unreadable unit"));
                }
                format!(
                    "{bad}input that could not be read{bad:#}: {}; exit status 2",
                    what.join(" and ")
                )
            }
        };
        text.push_str(&verdict);
        self.text(&text)
    }

    fn text(&mut self, line: &str) -> Result<(), Failure> {
        writeln!(self.out, "{line}").map_err(|error| Failure::output(&error))
    }

    fn json<T: Serialize>(&mut self, value: &T) -> Result<(), Failure> {
        write_json(self.out, value)
    }
}

/// Writes `value` as one line of JSON.
fn write_json<T: Serialize>(out: &mut dyn Write, value: &T) -> Result<(), Failure> {
    serde_json::to_writer(&mut *out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .map_err(|error| Failure::output(&error))
}

fn surface_name(surface: Surface) -> &'static str {
    match surface {
        Surface::ArtifactStream => Kind::Stream.name(),
        Surface::Record => Kind::Record.name(),
        _ => Kind::Trace.name(),
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
