//! The binaries, and a client that speaks JSON-RPC lines to a process by hand.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The `fence` binary and the test server, built by cargo with the options and the profile
/// `cargo test --workspace --all-features` builds them with, in one build, so under that
/// command both are found up to date (see [`PROFILE`]).
pub(crate) struct Binaries {
    pub(crate) fence: PathBuf,
    pub(crate) server: PathBuf,
    /// The `agent_turn` example (it needs the `rmcp` feature, which the build turns on).
    pub(crate) agent_turn: PathBuf,
}

/// The profile `cargo test` builds with: `test`, or `release` under `--release`. Under `dev`,
/// cargo would build every build script and proc-macro again, and every crate that uses one
/// (about a minute on two cores); the workspace's `[profile.test]` says why `test` is enough.
const PROFILE: &str = if cfg!(debug_assertions) {
    "test"
} else {
    "release"
};

pub(crate) fn binaries() -> &'static Binaries {
    static BINARIES: OnceLock<Binaries> = OnceLock::new();
    BINARIES.get_or_init(|| {
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let messages = escargot::CargoBuild::new()
            .manifest_path(manifest)
            .arg("--workspace")
            .all_features()
            .bin("fence")
            .bin("mcp_test_server")
            .example("agent_turn")
            .arg("--profile")
            .arg(PROFILE)
            .exec()
            .expect("cargo builds the binaries");
        let (mut fence, mut server, mut agent_turn) = (None, None, None);
        for message in messages {
            let message = message.expect("cargo reports the build");
            if let Ok(escargot::format::Message::CompilerArtifact(artifact)) = message.decode() {
                let path = artifact.executable.map(std::borrow::Cow::into_owned);
                match artifact.target.name.as_ref() {
                    "fence" => fence = path.or(fence),
                    "mcp_test_server" => server = path.or(server),
                    "agent_turn" => agent_turn = path.or(agent_turn),
                    _ => {}
                }
            }
        }
        Binaries {
            fence: fence.expect("cargo built the fence binary"),
            server: server.expect("cargo built the test server"),
            agent_turn: agent_turn.expect("cargo built the agent_turn example"),
        }
    })
}

/// `fence mcp ARGS -- <the test server>`.
pub(crate) fn proxy_command(args: &[&str]) -> Command {
    let binaries = binaries();
    let mut command = Command::new(&binaries.fence);
    command
        .arg("mcp")
        .args(args)
        .arg("--")
        .arg(&binaries.server);
    command
}

/// How long a test waits for any one thing before it fails.
/// Starts `command` with its stdin and stdout piped to the test and its stderr the test's
/// own, killed when the child is dropped.
pub(crate) fn spawn_piped(command: &mut tokio::process::Command) -> tokio::process::Child {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the process starts")
}

pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// A process spoken to line by line: what it writes on stdout arrives as lines, its stderr is
/// collected.
pub(crate) struct Lines {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Vec<u8>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Lines {
    pub(crate) fn spawn(mut command: Command) -> Lines {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the process starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (send, stdout_lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if send.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let collected = stderr.clone();
        thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(read @ 1..) = std::io::Read::read(&mut pipe, &mut buffer) {
                collected.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        let stdin = child.stdin.take();
        Lines {
            child,
            stdin,
            stdout: stdout_lines,
            stderr,
        }
    }

    /// `fence mcp ARGS -- <the test server>`, initialized.
    pub(crate) fn proxy(args: &[&str]) -> Lines {
        let mut lines = Lines::spawn(proxy_command(args));
        lines.initialize();
        lines
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// Sends a request for a tool.
    pub(crate) fn call(&mut self, id: u64, tool: &str, arguments: &Value) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": arguments },
        }));
    }

    /// The next line, or `None` when stdout has ended.
    pub(crate) fn next_line(&self) -> Option<Vec<u8>> {
        match self.stdout.recv_timeout(PATIENCE) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no line within {PATIENCE:?}; stderr: {}", self.stderr())
            }
        }
    }

    /// The next message, which must be JSON.
    pub(crate) fn next(&self) -> Value {
        let line = self
            .next_line()
            .unwrap_or_else(|| panic!("stdout ended; stderr: {}", self.stderr()));
        serde_json::from_slice(&line)
            .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&line)))
    }

    /// The answer to request `id`, skipping notifications and other answers.
    pub(crate) fn answer(&self, id: u64) -> Value {
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// The text of the one text block of a tool's result, parsed as a fenced block: its source
    /// and content.
    pub(crate) fn tool_text(&self, id: u64) -> (String, String) {
        let answer = self.answer(id);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a text block: {answer}"));
        let block = fence_runtime::parse(text).unwrap_or_else(|err| panic!("{err}: {text}"));
        (block.source().to_owned(), block.content().to_owned())
    }

    fn initialize(&mut self) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "fence-mcp-tests", "version": "1" },
            },
        }));
        let answer = self.answer(0);
        assert!(answer.get("result").is_some(), "{answer}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// Closes the process's stdin.
    pub(crate) fn close(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit.
    pub(crate) fn wait(&mut self, patience: Duration) -> ExitStatus {
        let deadline = Instant::now() + patience;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after {patience:?}; stderr: {}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything written on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Waits until stderr holds `text`.
    pub(crate) fn stderr_until(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let stderr = self.stderr();
            if stderr.contains(text) {
                return stderr;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never said {text:?}: {stderr}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a process with this id is running. A zombie is not: it has exited, and only waits
/// for a parent (here, whatever adopts orphans) to reap it.
#[cfg(target_os = "linux")]
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    state != Some('Z')
}

/// Waits up to `patience` for process `pid` to be gone.
#[cfg(target_os = "linux")]
pub(crate) fn gone_within(pid: u32, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    while alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
    true
}

/// The processes whose parent is `pid` (zombies aside).
#[cfg(target_os = "linux")]
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(each) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{each}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() != Some(&"Z") && fields.get(1) == Some(&pid.to_string().as_str()) {
            found.push(each);
        }
    }
    found
}
