//! Where a subcommand's input comes from: a file, or standard input, read a chunk at a time.

use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::Path;

use crate::exit::{self, Failure};

/// How much is read at a time: large enough that a pipe's throughput is not spent in system
/// calls, small enough to stay in the cache.
pub(crate) const CHUNK: usize = 64 * 1024;

/// An input: a file, or standard input.
pub(crate) struct Input {
    reader: Box<dyn Read>,
    name: String,
}

impl Input {
    /// Opens `path`, or standard input when there is none or it is `-`.
    pub(crate) fn open(path: Option<&Path>) -> Result<Input, Failure> {
        match path {
            Some(path) if path != Path::new("-") => {
                let file = File::open(path).map_err(|error| cannot_read(path, &error))?;
                Ok(Input {
                    reader: Box::new(file),
                    name: path.display().to_string(),
                })
            }
            _ => Ok(Input {
                reader: Box::new(io::stdin().lock()),
                name: "standard input".into(),
            }),
        }
    }

    /// Says on stderr where input is awaited, when it is a terminal: someone who typed
    /// `fence wrap --tool x` and nothing else is otherwise left facing a silent prompt.
    pub(crate) fn hint_if_terminal(path: Option<&Path>, quiet: bool) {
        let from_stdin = path.is_none_or(|path| path == Path::new("-"));
        if from_stdin && !quiet && io::stdin().is_terminal() {
            exit::note("reading standard input from the terminal; end it with Ctrl-D");
        }
    }

    /// Calls `each` with every chunk of the input, in order, until the end or an error.
    pub(crate) fn for_each_chunk(
        &mut self,
        mut each: impl FnMut(&[u8]) -> Result<(), Failure>,
    ) -> Result<(), ReadFailed> {
        let mut buffer = vec![0; CHUNK];
        loop {
            match self.reader.read(&mut buffer) {
                Ok(0) => return Ok(()),
                Ok(read) => each(&buffer[..read]).map_err(ReadFailed::Each)?,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    return Err(ReadFailed::Read(Failure::trouble(format_args!(
                        "cannot read {}: {error}",
                        self.name
                    ))));
                }
            }
        }
    }

    /// The whole input.
    pub(crate) fn read_all(mut self) -> Result<Vec<u8>, Failure> {
        let mut bytes = Vec::new();
        self.reader.read_to_end(&mut bytes).map_err(|error| {
            Failure::trouble(format_args!("cannot read {}: {error}", self.name))
        })?;
        Ok(bytes)
    }
}

/// Why reading an input chunk by chunk stopped early.
pub(crate) enum ReadFailed {
    /// The input could not be read.
    Read(Failure),
    /// What was done with a chunk failed.
    Each(Failure),
}

impl ReadFailed {
    pub(crate) fn into_failure(self) -> Failure {
        match self {
            ReadFailed::Read(failure) | ReadFailed::Each(failure) => failure,
        }
    }
}

/// The failure to open or read `path`.
pub(crate) fn cannot_read(path: &Path, error: &io::Error) -> Failure {
    let hint = match error.kind() {
        io::ErrorKind::NotFound => "; check the path",
        io::ErrorKind::PermissionDenied => "; check its permissions",
        _ => "",
    };
    Failure::trouble(format_args!(
        "cannot read {}: {error}{hint}",
        path.display()
    ))
}
