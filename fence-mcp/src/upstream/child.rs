//! A stdio server the proxy runs: started in a process group of its own, its pipes widened,
//! and ended by one path, whatever front it serves ([`end`]).

use std::io;
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
/// (127 for a command not found, 126 for one that may not be run, as a shell says).
pub(crate) fn cannot_start(server: &ChildServer, err: &io::Error) -> (String, u8) {
    let status = match err.kind() {
        io::ErrorKind::NotFound => 127,
        io::ErrorKind::PermissionDenied => 126,
        _ => 1,
    };
    let why = format!(
        "cannot start {:?}: {err}; check the command after `--`",
        server.command()
    );
    (why, status)
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
