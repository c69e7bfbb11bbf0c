//! Processes that listen on HTTP, for the tests of both test binaries (`proxy`, `sdk`), which
//! include this file with `#[path]`: a child killed when dropped, and one started and waited on
//! until it names its URL (a server on stdout, `fence mcp --listen` on stderr).

use std::io::{BufRead, BufReader};
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// A child process killed (and reaped) when dropped. Derefs to the [`Child`].
pub(crate) struct KillOnDrop(pub(crate) Child);

impl Deref for KillOnDrop {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a process started by [`spawn_announcing`] names the URL it listens at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Announced {
    /// Its first stdout line is `listening URL` (the test server, `http_server.py`); its
    /// stderr is inherited.
    Stdout,
    /// A stderr line ends `: listening on URL` (`fence mcp (NAME): listening on URL`, the
    /// proxy with `--listen`); its stdout is inherited, and every stderr line is passed on to
    /// the test's stderr (captured with the test's output).
    Stderr,
    /// As [`Stderr`](Announced::Stderr), but its stderr lines are read and dropped: for the
    /// many proxies of one run, whose notes on a hostile server's messages would fill the
    /// test's output.
    #[allow(dead_code, reason = "the SDK tests' use, not tests/proxy's")]
    StderrDropped,
}

/// Starts `command` with stdin piped and waits, up to `patience`, for it to name the URL it
/// listens at where `on` says: the process, and the URL. The stream it names the URL on is read
/// on to its end, so the process never blocks on a full pipe; its stdin stays open in the
/// [`Child`] (the test servers exit when it ends).
pub(crate) fn spawn_announcing(
    mut command: Command,
    on: Announced,
    patience: Duration,
) -> (KillOnDrop, String) {
    let (stdout, stderr) = match on {
        Announced::Stdout => (Stdio::piped(), Stdio::inherit()),
        Announced::Stderr | Announced::StderrDropped => (Stdio::inherit(), Stdio::piped()),
    };
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = KillOnDrop(
        command
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|err| panic!("{program} starts: {err}")),
    );
    let (send, announced) = mpsc::channel::<Result<String, String>>();
    match on {
        Announced::Stdout => {
            let stdout = child.stdout.take().expect("stdout is piped");
            thread::spawn(move || {
                let mut lines = BufReader::new(stdout).lines();
                let _ = send.send(match lines.next() {
                    Some(Ok(line)) => line
                        .strip_prefix("listening ")
                        .map(str::to_owned)
                        .ok_or_else(|| format!("not a `listening URL` line: {line:?}")),
                    other => Err(format!("no `listening URL` line: {other:?}")),
                });
                for _ in lines {}
            });
        }
        Announced::Stderr | Announced::StderrDropped => {
            let stderr = child.stderr.take().expect("stderr is piped");
            thread::spawn(move || {
                let mut send = Some(send);
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if on == Announced::Stderr {
                        eprintln!("{line}");
                    }
                    if let Some((_, url)) = line.split_once(": listening on ") {
                        if let Some(send) = send.take() {
                            let _ = send.send(Ok(url.to_owned()));
                        }
                    }
                }
                if let Some(send) = send {
                    let _ = send.send(Err("stderr ended with no `: listening on URL`".into()));
                }
            });
        }
    }
    match announced.recv_timeout(patience) {
        Ok(Ok(url)) => (child, url),
        Ok(Err(why)) => panic!("{program}: {why}"),
        Err(err) => panic!("{program}: no URL on {on:?} within {patience:?}: {err}"),
    }
}
