//! Processes that name the URL they listen at, killed when dropped.

use super::{BufRead, BufReader, Child, Command, PATIENCE, Stdio, mpsc};

pub(crate) struct KillOnDrop(Child);

impl KillOnDrop {
    pub(crate) fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where the URL is named: a first stdout line `listening URL` (the test server), or a
/// stderr line ending `: listening on URL` (the proxy, the relays).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum On {
    Stdout,
    Stderr,
}

/// Starts `command`, its stdin kept open (the test server ends with it), and waits for its
/// URL; what it writes after is read and dropped, so it never blocks on a full pipe.
pub(crate) fn spawn(mut command: Command, on: On) -> (KillOnDrop, String) {
    let (stdout, stderr) = match on {
        On::Stdout => (Stdio::piped(), Stdio::inherit()),
        On::Stderr => (Stdio::null(), Stdio::piped()),
    };
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|err| panic!("{program} starts: {err}"));
    let read: Box<dyn std::io::Read + Send> = match on {
        On::Stdout => Box::new(child.stdout.take().expect("piped")),
        On::Stderr => Box::new(child.stderr.take().expect("piped")),
    };
    let (send, named) = mpsc::channel();
    std::thread::spawn(move || {
        let mut send = Some(send);
        for line in BufReader::new(read).lines() {
            let Ok(line) = line else { break };
            let url = match on {
                On::Stdout => line.strip_prefix("listening "),
                On::Stderr => line.split_once(": listening on ").map(|(_, url)| url),
            };
            if let Some(url) = url
                && let Some(send) = send.take()
            {
                let _ = send.send(url.to_owned());
            }
        }
    });
    let child = KillOnDrop(child);
    match named.recv_timeout(PATIENCE) {
        Ok(url) => (child, url),
        Err(err) => panic!("{program} names no URL within {PATIENCE:?}: {err}"),
    }
}
