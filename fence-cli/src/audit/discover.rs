//! Which files an audit reads: the paths given, directories walked, each file recognised as a
//! surface by its name or, failing that, by its first line.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// The surface a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An A2A SSE capture of `artifact` frames.
    Stream,
    /// A `conversation.jsonl`.
    Record,
    /// A `trace.jsonl`.
    Trace,
}

impl Kind {
    /// The name in `--format json`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Stream => "artifact-stream",
            Kind::Record => "conversation-record",
            Kind::Trace => "trace",
        }
    }

    /// What one unit of the surface is called.
    pub(crate) fn unit(self) -> &'static str {
        match self {
            Kind::Stream => "events",
            Kind::Record | Kind::Trace => "lines",
        }
    }
}

/// A file to audit.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
    pub(crate) size: u64,
}

/// A path that could not be audited, and why.
#[derive(Clone, Debug)]
pub(crate) struct Problem {
    pub(crate) path: PathBuf,
    pub(crate) message: String,
}

/// What an audit found to read.
#[derive(Debug, Default)]
pub(crate) struct Discovery {
    /// The files to audit, grouped by the directory that holds them (one runtime's workdir), in
    /// the order they were found.
    pub(crate) groups: Vec<(PathBuf, Vec<Target>)>,
    /// Files met in a directory walk that are no surface, passed over.
    pub(crate) passed_over: usize,
    /// Paths that could not be read or recognised.
    pub(crate) problems: Vec<Problem>,
}

impl Discovery {
    fn add(&mut self, target: Target) {
        let dir = target
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if self
            .groups
            .iter()
            .any(|(_, targets)| targets.iter().any(|t| t.path == target.path))
        {
            return;
        }
        match self.groups.iter_mut().find(|(group, _)| *group == dir) {
            Some((_, targets)) => targets.push(target),
            None => self.groups.push((dir, vec![target])),
        }
    }

    fn problem(&mut self, path: &Path, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_path_buf(),
            message: message.into(),
        });
    }

    /// Every file to audit.
    pub(crate) fn targets(&self) -> impl Iterator<Item = &Target> {
        self.groups.iter().flat_map(|(_, targets)| targets)
    }
}

/// Finds the surfaces under `paths`.
pub(crate) fn discover(paths: &[PathBuf]) -> Discovery {
    let mut found = Discovery::default();
    for path in paths {
        match std::fs::metadata(path) {
            Err(error) => found.problem(path, cannot(&error)),
            Ok(meta) if meta.is_dir() => walk(path, &mut found),
            // A FIFO, a socket or a device is never opened: reading one could block, or never
            // end.
            Ok(meta) if !meta.is_file() => found.problem(path, not_regular(meta.file_type())),
            Ok(meta) => match recognise(path) {
                Ok(Some(kind)) => found.add(Target {
                    path: path.clone(),
                    kind,
                    size: meta.len(),
                }),
                Ok(None) => found.problem(
                    path,
                    "cannot tell which surface this is: name it conversation.jsonl, \
                     trace.jsonl or *.sse, or start it with a record line, a trace event or an \
                     SSE field",
                ),
                Err(error) => found.problem(path, cannot(&error)),
            },
        }
    }
    found
}

fn walk(dir: &Path, found: &mut Discovery) {
    let before = found.targets().count();
    // Links are followed, as `ls -L` and `grep -r` users expect of a workdir; a loop is an error.
    for entry in WalkDir::new(dir).follow_links(true).sort_by_file_name() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                let path = error.path().unwrap_or(dir).to_path_buf();
                let message = error.io_error().map_or_else(|| error.to_string(), cannot);
                found.problem(&path, message);
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_dir() {
            continue;
        }
        if !entry.file_type().is_file() {
            found.problem(path, not_regular(entry.file_type()));
            continue;
        }
        match recognise(path) {
            Ok(Some(kind)) => found.add(Target {
                path: path.to_path_buf(),
                kind,
                size: entry.metadata().map_or(0, |meta| meta.len()),
            }),
            Ok(None) => found.passed_over += 1,
            Err(error) => found.problem(path, cannot(&error)),
        }
    }
    if found.targets().count() == before {
        found.problem(
            dir,
            "holds no conversation.jsonl, trace.jsonl or SSE capture; check the path",
        );
    }
}

fn cannot(error: &io::Error) -> String {
    format!("cannot read: {error}")
}

/// Why a file that is not a regular file is not audited.
pub(crate) fn not_regular(kind: std::fs::FileType) -> String {
    let what = file_kind(kind);
    format!(
        "is {what}, not a regular file: not opened, as reading it could block or never end; save the surface to a file first"
    )
}

#[cfg(unix)]
fn file_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn file_kind(_: std::fs::FileType) -> &'static str {
    "not a file"
}

/// Opens a file found to be a regular file, for reading, without blocking if it has been
/// swapped since for a FIFO (on unix, `O_NONBLOCK`); refuses it unless it still is one.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        Ok(file)
    } else {
        Err(io::Error::other(not_regular(kind)))
    }
}

/// How much of a file is read to recognise it by its content.
const SNIFF: usize = 64 * 1024;

/// The surface `path` holds: by its name, else by its first line that is not blank.
fn recognise(path: &Path) -> io::Result<Option<Kind>> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if name == "conversation.jsonl" {
        return Ok(Some(Kind::Record));
    }
    if name == "trace.jsonl" {
        return Ok(Some(Kind::Trace));
    }
    if path.extension().is_some_and(|ext| ext == "sse") {
        return Ok(Some(Kind::Stream));
    }
    let mut head = Vec::with_capacity(SNIFF);
    open_regular(path)?
        .take(SNIFF as u64)
        .read_to_end(&mut head)?;
    Ok(sniff(&head))
}

/// The surface a file whose first bytes are `head` holds, judged by its first line that is not
/// blank: an SSE field or comment; a JSON object with a string `event_type` (a trace event), or
/// a string `role`, a `message` with a string `role` (a wrapped transcript line), a
/// `murmur.record` header or a top-level Responses item the record reader reads (a call, or
/// one that carries a tool's output) (a record line).
pub(crate) fn sniff(head: &[u8]) -> Option<Kind> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = &head[start..];
    let line = rest
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map_or(rest, |end| &rest[..end]);
    if [&b"event:"[..], b"data:", b"id:", b"retry:", b":"]
        .iter()
        .any(|field| line.starts_with(field))
    {
        return Some(Kind::Stream);
    }
    if !line.starts_with(b"{") {
        return None;
    }
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(value) => {
            let text = |key: &str| value.get(key).and_then(serde_json::Value::as_str);
            if text("event_type").is_some() {
                Some(Kind::Trace)
            } else if text("role").is_some()
                || value
                    .get("message")
                    .and_then(|message| message.get("role"))
                    .is_some_and(serde_json::Value::is_string)
                || matches!(
                    text("type"),
                    Some(
                        "murmur.record"
                            | "function_call"
                            | "function_call_output"
                            | "custom_tool_call"
                            | "custom_tool_call_output"
                            | "local_shell_call_output"
                            | "computer_call_output"
                            | "mcp_call"
                    )
                )
            {
                Some(Kind::Record)
            } else {
                None
            }
        }
        // A first line longer than what was read: its first key tells, as every runtime
        // writes `event_type`, `role` or the header's `type` first.
        Err(_) if line.len() == rest.len() && head.len() >= SNIFF => first_key(line),
        Err(_) => None,
    }
}

fn first_key(line: &[u8]) -> Option<Kind> {
    let inner = line[1..].trim_ascii_start();
    if inner.starts_with(b"\"event_type\"") {
        Some(Kind::Trace)
    } else if inner.starts_with(b"\"role\"") || inner.starts_with(b"\"type\":\"murmur.record\"") {
        Some(Kind::Record)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, SNIFF, sniff};

    #[test]
    fn a_file_is_recognised_by_its_first_line_that_is_not_blank() {
        assert_eq!(sniff(b"\n:heartbeat\n\n"), Some(Kind::Stream));
        assert_eq!(sniff(b"event: artifact\ndata: {}\n"), Some(Kind::Stream));
        assert_eq!(
            sniff(b"\xEF\xBB\xBF{\"type\":\"murmur.record\"}\n"),
            Some(Kind::Record)
        );
        assert_eq!(
            sniff(b"  {\"id\":1,\"role\":\"user\"}\r\n"),
            Some(Kind::Record)
        );
        assert_eq!(sniff(b"{\"event_type\":\"turn_end\"}"), Some(Kind::Trace));
        assert_eq!(
            sniff(b"{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"x\"}\n"),
            Some(Kind::Record)
        );
        assert_eq!(
            sniff(b"{\"parentUuid\":null,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"),
            Some(Kind::Record)
        );
        assert_eq!(sniff(b"{\"type\":\"user\",\"message\":\"hi\"}\n"), None);
        assert_eq!(sniff(b"{\"role\":1}\n"), None);
        assert_eq!(sniff(b"{\"skills\":[]}\n"), None);
        assert_eq!(sniff(b"# notes\n"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn a_first_line_longer_than_what_is_read_is_known_by_its_first_key() {
        let mut long = b"{\"role\":\"tool\",\"content\":\"".to_vec();
        long.resize(SNIFF, b'x');
        assert_eq!(sniff(&long), Some(Kind::Record));
        let mut long = b"{ \"event_type\":\"tool_call\",\"output\":\"".to_vec();
        long.resize(SNIFF, b'x');
        assert_eq!(sniff(&long), Some(Kind::Trace));
        // A short file cut short is not one.
        assert_eq!(sniff(b"{\"role\":\"tool\",\"content\":\"xx"), None);
    }
}
