//! A stdio server the proxy runs: started in a process group of its own, its pipes widened,
//! and ended by one path, whatever front it serves ([`end`]).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::reaper::Reaper;
use crate::options::ChildServer;

/// A server the proxy started, and its pipes.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) input: ChildStdin,
    pub(crate) output: ChildStdout,
}

/// Starts the server: its stdin and stdout piped to the proxy (each pipe widened), its stderr
/// the proxy's own, and on Unix in a process group of its own, so ending the group ends
/// whatever it started and left in it (what left the group is the [`Reaper`]'s).
pub(crate) fn start(server: &ChildServer, reaper: &Reaper) -> io::Result<Started> {
    let mut command = Command::new(server.command());
    command
        .args(server.args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = reaper.spawn(&mut command)?;
    let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the server's pipes were not made"));
    };
    widen_pipe(&input);
    widen_pipe(&output);
    Ok(Started {
        child,
        input,
        output,
    })
}

/// What stderr says when a server cannot be started, and the exit status that goes with it
/// (127 for a command not found, 126 for one that may not be run, as a shell says): the
/// command, the system's error, and what to check, which where the command was looked for
/// ([`resolve`]) tells: a command that is nowhere, or a file that is there but cannot run.
pub(crate) fn cannot_start(server: &ChildServer, err: &io::Error) -> (String, u8) {
    /// The error `execve` gives a file that is no program and names no interpreter.
    const ENOEXEC: i32 = 8;
    let status = match err.kind() {
        io::ErrorKind::NotFound => 127,
        io::ErrorKind::PermissionDenied => 126,
        _ if err.raw_os_error() == Some(ENOEXEC) => 126,
        _ => 1,
    };
    let command = server.command();
    let why = match (err.kind(), resolve(command)) {
        (io::ErrorKind::NotFound, Ok(path)) => format!(
            "cannot start the server {command:?}: {err}; {} is there, so what it needs to run \
             is not: a script's interpreter (its `#!` line), or a program's loader",
            path.display()
        ),
        (_, Err(unrunnable)) => {
            format!(
                "cannot start the server {command:?}: {err}; {}",
                unrunnable.advice()
            )
        }
        (_, Ok(_)) => format!("cannot start the server {command:?}: {err}"),
    };
    (why, status)
}

/// Whether the server's command can be started, as far as the proxy can tell without starting
/// it: it is found (on `PATH`, as [`resolve`] looks), it is a file, and this user may execute
/// it; else what stderr says. What cannot be told before it runs: that a script's interpreter
/// (its `#!` line) is there, that a program is for this machine and finds its libraries, and
/// that the server then starts (an `npx` of a package that does not exist starts `npx`).
#[cfg(feature = "http")]
pub(crate) fn check(server: &ChildServer) -> Result<(), String> {
    let command = server.command();
    match resolve(command) {
        Ok(_) => Ok(()),
        Err(unrunnable) => Err(format!(
            "cannot start the server {command:?}: {}; {}",
            unrunnable.error(),
            unrunnable.advice()
        )),
    }
}

/// Why a command cannot be run, found before running it, with the system's error that said so.
#[derive(Debug)]
// Only `check`, behind an HTTP front, says the error: a stdio server's own is said instead.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Unrunnable {
    /// A command naming a folder (`./server`, `/usr/bin/node`) names no file.
    Missing(PathBuf, io::Error),
    /// No folder of `PATH` holds a file of the command's name.
    NotOnPath(io::Error),
    /// The command names a folder, not a file.
    Folder(PathBuf),
    /// This user may not execute the file.
    NotExecutable(PathBuf, io::Error),
}

impl Unrunnable {
    /// The system's error, as running the command would give it.
    #[cfg(feature = "http")]
    fn error(&self) -> String {
        match self {
            Unrunnable::Missing(_, err)
            | Unrunnable::NotOnPath(err)
            | Unrunnable::NotExecutable(_, err) => err.to_string(),
            Unrunnable::Folder(_) => "a folder cannot be run".to_owned(),
        }
    }

    /// What is wrong, and what to do.
    fn advice(&self) -> String {
        match self {
            Unrunnable::Missing(path, _) => {
                format!("{} does not exist; check the path", path.display())
            }
            Unrunnable::NotOnPath(_) => "no folder of PATH holds it; check its spelling and \
                 that it is installed, or give its full path (an MCP client may start the proxy \
                 with another PATH than your shell's)"
                .to_owned(),
            Unrunnable::Folder(path) => format!("{} is a folder, not a program", path.display()),
            Unrunnable::NotExecutable(path, _) => format!(
                "{} is not executable; make it so (`chmod +x {}`), or run it through its \
                 interpreter",
                path.display(),
                path.display()
            ),
        }
    }
}

/// The file the command runs, looked for as `execvp` does: the command itself when it names a
/// folder (it holds a `/`), else the first file of its name that this user may execute in a
/// folder of `PATH` (an empty entry is the working directory; with no `PATH`, `/bin:/usr/bin`).
/// Elsewhere than Unix, the command itself, unchecked.
pub(crate) fn resolve(command: &OsStr) -> Result<PathBuf, Unrunnable> {
    let path = Path::new(command);
    if !cfg!(unix) {
        return Ok(path.to_owned());
    }
    if command.as_encoded_bytes().contains(&b'/') {
        return runnable(path).map(|()| path.to_owned());
    }
    let folders = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    let mut refused = None;
    let mut missing = None;
    for folder in std::env::split_paths(&folders) {
        let candidate = if folder.as_os_str().is_empty() {
            Path::new(".").join(command)
        } else {
            folder.join(command)
        };
        match runnable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(Unrunnable::Missing(_, err)) => missing = Some(err),
            // `execvp` goes on looking, and gives this error if nothing else is found.
            Err(other) => {
                refused.get_or_insert(other);
            }
        }
    }
    Err(refused.unwrap_or_else(|| {
        let err = missing.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound));
        Unrunnable::NotOnPath(err)
    }))
}

/// Whether `path` is a file (after symbolic links) that this user may execute.
fn runnable(path: &Path) -> Result<(), Unrunnable> {
    match std::fs::metadata(path) {
        Err(err) => Err(Unrunnable::Missing(path.to_owned(), err)),
        Ok(found) if found.is_dir() => Err(Unrunnable::Folder(path.to_owned())),
        Ok(_) => match executable(path) {
            Ok(()) => Ok(()),
            Err(err) => Err(Unrunnable::NotExecutable(path.to_owned(), err)),
        },
    }
}

/// Whether this user may execute the file at `path` (`access(X_OK)`).
#[cfg(unix)]
fn executable(path: &Path) -> io::Result<()> {
    nix::unistd::access(path, nix::unistd::AccessFlags::X_OK).map_err(io::Error::from)
}

#[cfg(not(unix))]
fn executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Gives a pipe a 1 MiB buffer (Linux's limit for an unprivileged process), so a large
/// message crosses it in a few hand-offs between processes rather than hundreds of 64 KiB
/// ones. Anything that is not a pipe, or a system that refuses, keeps what it has.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn widen_pipe(pipe: &impl std::os::fd::AsFd) {
    let _ = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn widen_pipe<T>(_pipe: &T) {}

/// Where ending a server starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Its input is closed: it has a grace period to exit of its own accord.
    Wait,
    /// SIGTERM to its process group, and another grace period.
    Terminate,
    /// SIGKILL to its process group.
    Kill,
}

/// Ends a server whose input the caller has closed, from `stage` on: at each stage it has
/// `grace` to exit, then the next begins (SIGTERM to its process group, then SIGKILL). `wait`
/// is called while it runs, with how long to wait at most (10 ms or less), and may end the
/// wait early: `true` skips to the next stage (a signal to the proxy). `say` gets what stderr
/// should say. Once the server has exited, whatever it left in its process group is killed
/// too; its status, or `None` when it could not be reaped or would not die.
pub(crate) fn end(
    child: &mut Child,
    grace: Duration,
    mut stage: Stage,
    mut wait: impl FnMut(Duration) -> bool,
    mut say: impl FnMut(&str),
) -> Option<ExitStatus> {
    loop {
        match stage {
            Stage::Wait => {}
            Stage::Terminate => terminate(child),
            Stage::Kill => kill(child),
        }
        let deadline = Instant::now() + grace;
        let timed_out = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    kill(child);
                    return Some(status);
                }
                Ok(None) => {}
                Err(_) => return None,
            }
            let now = Instant::now();
            if now >= deadline {
                break true;
            }
            let poll = deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(10));
            if wait(poll) {
                break false;
            }
        };
        let waited = grace.as_millis();
        stage = match stage {
            Stage::Wait => {
                if timed_out {
                    say(&format!(
                        "the upstream did not exit within {waited} ms of its input closing; \
                         sending it SIGTERM"
                    ));
                }
                Stage::Terminate
            }
            Stage::Terminate => {
                if timed_out {
                    say(&format!(
                        "the upstream did not exit within {waited} ms of SIGTERM; killing it"
                    ));
                }
                Stage::Kill
            }
            Stage::Kill => {
                say("the upstream did not exit even when killed; leaving it");
                return None;
            }
        };
    }
}

/// SIGTERM to the server's process group (elsewhere, the process is killed).
fn terminate(child: &mut Child) {
    #[cfg(unix)]
    signal_group(child, nix::sys::signal::Signal::SIGTERM);
    #[cfg(not(unix))]
    let _ = child.kill();
}

/// SIGKILL to the server's process group (elsewhere, the process is killed).
fn kill(child: &mut Child) {
    #[cfg(unix)]
    signal_group(child, nix::sys::signal::Signal::SIGKILL);
    #[cfg(not(unix))]
    let _ = child.kill();
}

#[cfg(unix)]
fn signal_group(child: &Child, signal: nix::sys::signal::Signal) {
    // The group was made with the child's pid as its id. It lives while any member does, so
    // its id is not reused before then; ESRCH just means it is already empty.
    if let Ok(group) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), signal);
    }
}

/// The exit status a server's ended with, as a shell reports it: 128 + the signal that ended
/// it, else its code.
pub(crate) fn status_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}
