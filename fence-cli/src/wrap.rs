//! `fence wrap`: fence stdin or a file under a source, streaming.

use std::io::{self, BufWriter, Write};

use clap::builder::PossibleValuesParser;
use fence_runtime::{FenceWriter, Source, TaskOrigin, TaskProvenance, sanitise_source_name};

use crate::exit::{self, Failure, Status};
use std::path::PathBuf;

use crate::input::{CHUNK, Input, ReadFailed};

/// Fences its input under `tool:NAME` or `task:ORIGIN` and writes the block to stdout, as the
/// input arrives, in constant memory whatever its size.
///
/// A task whose origin is trusted (`user`, `schedule`, `system`) is the operator instructing
/// their own agent, which is never fenced: its text is written unfenced, every marker in it
/// neutralised, exactly as the library's `ModelContent::task` writes it, with a note on stderr.
/// `peer` and `completion` are untrusted here: `fence` cannot see a channel that authenticated
/// their sender.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["tool", "task"])))]
#[command(after_help = "Examples:\n  \
    curl -s https://example.com | fence wrap --tool web-fetch\n  \
    fence wrap --task event webhook.json > for-the-model.txt")]
pub(crate) struct Args {
    /// The tool whose result this is: fenced under `tool:NAME`.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The origin of the task this payload is: fenced under `task:ORIGIN` when untrusted.
    #[arg(long, value_name = "ORIGIN", value_parser = origins())]
    task: Option<String>,
    /// Read FILE instead of standard input (`-` is standard input).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Print no notes on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// The six origins, from the library's own list.
fn origins() -> PossibleValuesParser {
    PossibleValuesParser::new(TaskOrigin::ALL.iter().map(|origin| origin.as_str()))
}

/// What the input is fenced under, if anything.
enum Fencing {
    /// A block under this source.
    Block(Source),
    /// A trusted task: unfenced, markers neutralised.
    Trusted,
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let fencing = fencing(args)?;
    let mut input = Input::open(args.file.as_deref())?;
    Input::hint_if_terminal(args.file.as_deref(), args.quiet);
    let stdout = io::stdout().lock();
    let out = BufWriter::with_capacity(CHUNK, stdout);
    match fencing {
        Fencing::Block(source) => fence(&mut input, out, &source),
        Fencing::Trusted => crate::neutralise::stream(&mut input, out),
    }
}

fn fencing(args: &Args) -> Result<Fencing, Failure> {
    if let Some(name) = &args.tool {
        if name.is_empty() {
            return Err(Failure::trouble(
                "the tool name is empty; name the tool whose output this is",
            ));
        }
        let sanitised = sanitise_source_name(name);
        if sanitised != name.as_str() && !args.quiet {
            exit::note(&format!(
                "the tool name holds characters a source cannot: fenced under `tool:{sanitised}`"
            ));
        }
        return Ok(Fencing::Block(Source::tool(name)));
    }
    let origin: TaskOrigin = args
        .task
        .as_deref()
        .expect("clap requires --tool or --task")
        .parse()
        .expect("clap accepts only the origins' own spellings");
    // The operator's own claim about the task's origin, as `derive` takes it in code: no
    // channel authenticated a sender, so `peer` and `completion` are untrusted.
    let provenance = TaskProvenance::derive(origin);
    if provenance.is_fenced() {
        Ok(Fencing::Block(Source::task(origin)))
    } else {
        if !args.quiet {
            exit::note(&format!(
                "a `{}` task is trusted: the operator's own instruction is never fenced, so it \
                 is written unfenced with its markers neutralised (--quiet hides this note)",
                origin.as_str()
            ));
        }
        Ok(Fencing::Trusted)
    }
}

/// Fences `input` into `out` as it arrives. Input cut short by a read error still closes its
/// block, as truncated, so nothing after it looks fenced.
fn fence<W: Write>(input: &mut Input, out: W, source: &Source) -> Result<Status, Failure> {
    let mut writer = FenceWriter::new(out, source).map_err(|error| Failure::output(&error))?;
    let copied = input.for_each_chunk(|chunk| {
        writer
            .write_all(chunk)
            .map_err(|error| Failure::output(&error))
    });
    match copied {
        Ok(()) => {
            let mut out = writer
                .finish()
                .map_err(|failed| Failure::output(failed.error()))?;
            out.flush().map_err(|error| Failure::output(&error))?;
            Ok(Status::Clean)
        }
        Err(ReadFailed::Read(failure)) => {
            // The block is closed as truncated whatever happens; an error here adds nothing to
            // the read error already being reported.
            let _ = writer.finish_truncated().map(|mut out| out.flush());
            Err(failure)
        }
        Err(ReadFailed::Each(failure)) => Err(failure),
    }
}
