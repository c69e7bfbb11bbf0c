//! `fence neutralise`: the marker rewrite alone, streaming.

use std::io::{self, BufWriter, Write};

use fence_runtime::Neutraliser;

use crate::exit::{Failure, Status};
use std::path::PathBuf;

use crate::input::{CHUNK, Input, ReadFailed};

/// Rewrites every marker in its input (`<untrusted-content…` and `</untrusted-content…`, in any
/// ASCII casing) to its neutralised form, and writes the rest unchanged, as the input arrives.
/// Bytes that are not UTF-8 pass through untouched.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  fence neutralise < page.html > page.safe.html")]
pub(crate) struct Args {
    /// Read FILE instead of standard input (`-` is standard input).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Print no notes on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let mut input = Input::open(args.file.as_deref())?;
    Input::hint_if_terminal(args.file.as_deref(), args.quiet);
    stream(
        &mut input,
        BufWriter::with_capacity(CHUNK, io::stdout().lock()),
    )
}

/// Neutralises `input` into `out` chunk by chunk: a marker split across two chunks is caught,
/// and only the bytes that could still begin one are held back.
pub(crate) fn stream<W: Write>(input: &mut Input, mut out: W) -> Result<Status, Failure> {
    let mut neutraliser = Neutraliser::new();
    let mut buffer = Vec::with_capacity(CHUNK + CHUNK / 8);
    let read = input.for_each_chunk(|chunk| {
        buffer.clear();
        neutraliser.push_bytes(chunk, &mut buffer);
        out.write_all(&buffer)
            .map_err(|error| Failure::output(&error))
    });
    if let Err(ReadFailed::Each(failure)) = read {
        return Err(failure);
    }
    // Input cut short by a read error still ends with the bytes held back: nothing read is lost.
    buffer.clear();
    neutraliser.finish_bytes(&mut buffer);
    out.write_all(&buffer)
        .and_then(|()| out.flush())
        .map_err(|error| Failure::output(&error))?;
    read.map_err(ReadFailed::into_failure)?;
    Ok(Status::Clean)
}
