//! Exit statuses, and the one error type a subcommand fails with.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::style;

/// How a run ended: the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// 0: the job is done and the input is sound.
    Clean,
    /// 1: the input is at fault: a malformed block, findings.
    Findings,
    /// 2: the job could not be done: input that cannot be read, output that cannot be written.
    Trouble,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(match status {
            Status::Clean => 0,
            Status::Findings => 1,
            Status::Trouble => 2,
        })
    }
}

/// Why a subcommand could not do its job: a message for stderr, and the status to exit with.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    status: Status,
}

impl Failure {
    /// The job could not be done (exit status 2).
    pub(crate) fn trouble(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            status: Status::Trouble,
        }
    }

    /// The input is at fault (exit status 1).
    pub(crate) fn bad_input(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            status: Status::Findings,
        }
    }

    /// A failed write to standard output. A reader that went away (`fence wrap | head`) is
    /// said plainly rather than as an OS error.
    pub(crate) fn output(error: &io::Error) -> Failure {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Failure::trouble("the output was closed before everything was written")
        } else {
            Failure::trouble(format_args!("cannot write the output: {error}"))
        }
    }

    /// Prints the message on stderr and gives the status to exit with.
    pub(crate) fn report(self) -> Status {
        error(&self.message);
        self.status
    }
}

/// Prints `fence: error: MESSAGE` on stderr.
pub(crate) fn error(message: &str) {
    let mut err = anstream::stderr().lock();
    let red = style::ERROR;
    // Nothing is left to tell if stderr itself cannot be written.
    let _ = writeln!(err, "fence: {red}error:{red:#} {message}");
}

/// Prints `fence: note: MESSAGE` on stderr.
pub(crate) fn note(message: &str) {
    let mut err = anstream::stderr().lock();
    let note = style::NOTE;
    let _ = writeln!(err, "fence: {note}note:{note:#} {message}");
}
