//! `fence demo`: one scripted agent turn, with no network and no model, that shows the whole
//! toolkit at work — the macros at each boundary, the streaming fence on a real subprocess, the
//! exemptions, the three surfaces written with the toolkit's own writers, and the verifier
//! reading them back with `fence audit`'s own code.

mod show;
mod tools;
mod turn;

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::audit::{self, Format, Manifest};
use crate::exit::{Failure, Status};
use crate::style;

/// Runs a scripted agent turn — an untrusted ticket and a trusted request, a skill, a web page
/// full of forged markers, a real subprocess, a tool that fails, a refusal, a dispatch failure
/// and a hook — writes `conversation.jsonl`, `trace.jsonl` and `artifacts.sse` into DIR, prints
/// what the model read with the fences and the neutralised markers highlighted, and audits DIR.
///
/// Running it again rewrites the same files; DIR must hold nothing else.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  cargo run --release -p fence-cli -- demo")]
pub(crate) struct Args {
    /// The directory to write the surfaces into (created if missing).
    #[arg(value_name = "DIR", default_value = "fence-demo")]
    dir: PathBuf,
}

/// The files the demo writes: the only ones it lets a DIR it reuses hold.
const RECORD: &str = "conversation.jsonl";
const TRACE: &str = "trace.jsonl";
const STREAM: &str = "artifacts.sse";
const MANIFEST: &str = "manifest.json";
const OWN_FILES: [&str; 4] = [RECORD, TRACE, STREAM, MANIFEST];

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let dir = &args.dir;
    prepare(dir)?;
    let steps = turn::run(dir);
    let manifest = Manifest {
        skills: vec!["triage".into()],
        tools: Some(
            ["web-fetch", "sh", "read-file", "write-file"]
                .map(String::from)
                .to_vec(),
        ),
    };
    write(dir, RECORD, |out| turn::write_record(&steps, out))?;
    write(dir, TRACE, |out| turn::write_trace(&steps, out))?;
    write(dir, STREAM, |out| turn::write_stream(&steps, out))?;
    write(dir, MANIFEST, |out| {
        serde_json::to_writer_pretty(&mut *out, &manifest)?;
        writeln!(out)
    })?;

    let mut out = anstream::stdout().lock();
    let shown = show::turn(&steps, &mut out).and_then(|()| {
        let heading = style::HEADING;
        writeln!(
            out,
            "\n{heading}the surfaces{heading:#}\nwritten with the toolkit's writers: {}, {}, {} (and {}, the tools and skills it declares, which the audit finds beside them)\n\n{heading}fence audit {}{heading:#}",
            dir.join(RECORD).display(),
            dir.join(TRACE).display(),
            dir.join(STREAM).display(),
            dir.join(MANIFEST).display(),
            dir.display(),
        )
    });
    shown.map_err(|error| Failure::output(&error))?;
    let status = audit::audit(
        std::slice::from_ref(dir),
        &audit::Declarations::Found {
            flags: Manifest::default(),
        },
        Format::Text,
        fence_surfaces::DEFAULT_MAX_LINE_BYTES,
        &mut out,
    )?;
    let dim = style::DIM;
    writeln!(out, "\n{dim}{SUMMARY_WORDS}{dim:#}").map_err(|error| Failure::output(&error))?;
    Ok(status)
}

/// The audit summary's words, said under it: a first reader of the demo meets them there.
const SUMMARY_WORDS: &str = "the summary's words: a unit is what a surface is read in, an event \
    of artifacts.sse or a line of the .jsonl files; a skipped unit is of a kind that carries no \
    model content (the record's header, the trace's session and turn events), read only for a \
    live marker, which would be a finding; a file passed over is one in the folder that is no \
    surface (here manifest.json, read as the declarations). More in docs/cli.md, `fence audit`.";

/// Creates DIR, or checks that an existing one holds only what an earlier run wrote, so that
/// running twice is safe and the audit reads only the demo's own files.
fn prepare(dir: &Path) -> Result<(), Failure> {
    let cannot = |error: io::Error| {
        Failure::trouble(format_args!(
            "cannot use {} for the demo: {error}",
            dir.display()
        ))
    };
    match fs::read_dir(dir) {
        Ok(entries) => {
            let mut foreign = Vec::new();
            for entry in entries {
                let name = entry.map_err(cannot)?.file_name();
                // A file written whole or not at all, by a run that was stopped half way.
                let partial = |own: &str| name == *format!(".{own}.partial").as_str();
                if !OWN_FILES.iter().any(|own| name == *own || partial(own)) {
                    foreign.push(name.to_string_lossy().into_owned());
                }
            }
            if !foreign.is_empty() {
                foreign.sort();
                return Err(Failure::trouble(format_args!(
                    "{} holds files the demo did not write ({}); name a new or empty directory: fence demo DIR",
                    dir.display(),
                    foreign.join(", ")
                )));
            }
            Ok(())
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(cannot)
        }
        Err(error) => Err(cannot(error)),
    }
}

/// Writes DIR/NAME whole or not at all: into a temporary file, renamed over the old one.
fn write(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), Failure> {
    let path = dir.join(name);
    let partial = dir.join(format!(".{name}.partial"));
    let written = File::create(&partial).and_then(|file| {
        let mut out = BufWriter::new(file);
        fill(&mut out)?;
        out.into_inner()?.sync_all()
    });
    written
        .and_then(|()| fs::rename(&partial, &path))
        .map_err(|error| {
            let _ = fs::remove_file(&partial);
            Failure::trouble(format_args!("cannot write {}: {error}", path.display()))
        })
}
