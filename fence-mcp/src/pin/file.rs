//! The pin file: what was pinned, as JSON a person reviews in a pull request, read at start
//! and written atomically under a lock.
//!
//! ```json
//! {
//!   "fence-mcp-pin": 1,
//!   "server": { "name": "filesystem", "version": "1.2.0" },
//!   "pinned": "2026-12-02T01:30:00Z",
//!   "instructions": "Use the tools to read files.",
//!   "tools": [
//!     { "name": "read_file", "description": "Reads a file.", "inputSchema": { … } }
//!   ],
//!   "prompts": []
//! }
//! ```
//!
//! Items are sorted by name, the members of each in the order of [`Kind::fields`], nested
//! objects by key. `instructions` is `null` when the server gave none; `tools` or `prompts` is
//! absent until a list of that kind has been seen once.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::Kind;
use super::canon::{Canon, push_string};

/// The format's version, the value of the file's `fence-mcp-pin` member.
const VERSION: u64 = 1;
const VERSION_KEY: &str = "fence-mcp-pin";

/// What a pin file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pinned {
    pub(crate) server_name: Option<String>,
    pub(crate) server_version: Option<String>,
    /// When the file was last written (RFC 3339, UTC).
    pub(crate) at: Option<String>,
    /// `None` until an `initialize` answer was seen; `Some(None)` when it had no instructions.
    #[expect(
        clippy::option_option,
        reason = "not seen, seen without instructions, seen with: the file says which"
    )]
    pub(crate) instructions: Option<Option<String>>,
    /// Per kind, `None` until a list of it was seen: the definitions by name.
    pub(crate) tools: Option<BTreeMap<String, Canon>>,
    pub(crate) prompts: Option<BTreeMap<String, Canon>>,
}

impl Pinned {
    pub(crate) fn items(&self, kind: Kind) -> Option<&BTreeMap<String, Canon>> {
        match kind {
            Kind::Tool => self.tools.as_ref(),
            Kind::Prompt => self.prompts.as_ref(),
        }
    }

    pub(crate) fn items_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, Canon> {
        match kind {
            Kind::Tool => self.tools.get_or_insert_default(),
            Kind::Prompt => self.prompts.get_or_insert_default(),
        }
    }

    /// Reads a pin file's text, or says what is wrong with it.
    pub(crate) fn parse(text: &str) -> Result<Pinned, String> {
        let value = match Canon::parse(text) {
            None => {
                let err = serde_json::from_str::<serde::de::IgnoredAny>(text)
                    .err()
                    .map_or_else(String::new, |err| format!(": {err}"));
                return Err(format!("it is not JSON{err}"));
            }
            Some(Err(why)) => return Err(format!("it {}", why.problem())),
            Some(Ok(value)) => value,
        };
        let Some(members) = value.as_object() else {
            return Err("it is not a JSON object".into());
        };
        match members.get(VERSION_KEY) {
            Some(Canon::Number(number)) if number.value == format!("{VERSION}e0") => {}
            Some(other) => {
                return Err(format!(
                    "its `{VERSION_KEY}` is {}, and this proxy reads version {VERSION}",
                    other.compact()
                ));
            }
            None => return Err(format!("it has no `{VERSION_KEY}` member: not a pin file")),
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match members.get(key) {
                None | Some(Canon::Null) => Ok(None),
                Some(Canon::String(text)) => Ok(Some(text.clone())),
                Some(_) => Err(format!("its `{key}` is not a string")),
            }
        };
        let server = members.get("server").and_then(Canon::as_object);
        let server_text = |key: &str| server.and_then(|server| server.get(key)?.as_str());
        let mut pinned = Pinned {
            server_name: server_text("name").map(str::to_owned),
            server_version: server_text("version").map(str::to_owned),
            at: text("pinned")?,
            instructions: members
                .contains_key("instructions")
                .then(|| text("instructions"))
                .transpose()?,
            tools: None,
            prompts: None,
        };
        for kind in [Kind::Tool, Kind::Prompt] {
            let Some(list) = members.get(kind.list_key()) else {
                continue;
            };
            let Canon::Array(items) = list else {
                return Err(format!("its `{}` is not an array", kind.list_key()));
            };
            let by_name = pinned.items_mut(kind);
            for (index, item) in items.iter().enumerate() {
                let name = item
                    .as_object()
                    .and_then(|item| item.get("name")?.as_str())
                    .ok_or_else(|| {
                        format!(
                            "`{}[{index}]` is not an object with a `name`",
                            kind.list_key()
                        )
                    })?;
                if by_name.insert(name.to_owned(), item.clone()).is_some() {
                    return Err(format!("it pins the {} `{name}` twice", kind.noun()));
                }
            }
        }
        Ok(pinned)
    }

    /// The file's text: pretty-printed, items sorted by name, a newline at the end.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from("{\n");
        let _ = write!(out, "  \"{VERSION_KEY}\": {VERSION},\n  \"server\": {{");
        let mut first = true;
        for (key, value) in [
            ("name", &self.server_name),
            ("version", &self.server_version),
        ] {
            if let Some(value) = value {
                out.push_str(if first { " " } else { ", " });
                first = false;
                push_string(&mut out, key);
                out.push_str(": ");
                push_string(&mut out, value);
            }
        }
        out.push_str(if first { "},\n" } else { " },\n" });
        out.push_str("  \"pinned\": ");
        match &self.at {
            Some(pinned) => push_string(&mut out, pinned),
            None => out.push_str("null"),
        }
        if let Some(instructions) = &self.instructions {
            out.push_str(",\n  \"instructions\": ");
            match instructions {
                Some(text) => push_string(&mut out, text),
                None => out.push_str("null"),
            }
        }
        for kind in [Kind::Tool, Kind::Prompt] {
            let Some(items) = self.items(kind) else {
                continue;
            };
            out.push_str(",\n  ");
            push_string(&mut out, kind.list_key());
            out.push_str(": [");
            for (index, item) in items.values().enumerate() {
                out.push_str(if index == 0 { "\n    " } else { ",\n    " });
                write_item(item, kind, &mut out);
            }
            out.push_str(if items.is_empty() { "]" } else { "\n  ]" });
        }
        out.push_str("\n}\n");
        out
    }
}

/// One item, its members in the order of [`Kind::fields`], at the indentation of a list's item.
fn write_item(item: &Canon, kind: Kind, out: &mut String) {
    let Some(members) = item.as_object() else {
        item.write(out, Some(2), 2);
        return;
    };
    out.push('{');
    let mut first = true;
    for field in kind.fields() {
        if let Some(value) = members.get(*field) {
            out.push_str(if first { "\n      " } else { ",\n      " });
            first = false;
            push_string(out, field);
            out.push_str(": ");
            value.write(out, Some(2), 3);
        }
    }
    out.push_str(if first { "}" } else { "\n    }" });
}

/// Reads the pin file at `path`: `Ok(None)` when there is none.
pub(crate) fn load(path: &Path) -> Result<Option<Pinned>, String> {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())?;
            Pinned::parse(&text).map(Some)
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("it cannot be read: {err}")),
    }
}

/// Makes the folder a pin file at `path` goes in, when it is missing: `Ok(None)` when it is
/// there; `Ok(Some(folder))` once made (mode 0700: pins are the user's own), which it is only
/// under the user's home folder (`$HOME`, an absolute path; `path` taken from the working
/// folder, with no `..` in it), since a folder made elsewhere is more likely a mistyped path
/// than a wish; else what to do, for the error to say.
pub(crate) fn make_folder(path: &Path) -> Result<Option<PathBuf>, String> {
    let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    else {
        return Ok(None);
    };
    if folder.is_dir() {
        return Ok(None);
    }
    let create = format!("create it (`mkdir -p {}`)", quoted(folder));
    if path.components().next() == Some(std::path::Component::Normal("~".as_ref())) {
        return Err(format!(
            "the path starts with `~`, which only a shell makes your home folder; give the \
             whole path ({})",
            std::env::var("HOME").map_or_else(|_| "/home/…".to_owned(), |home| home + "/…")
        ));
    }
    let whole = std::env::current_dir().map_or_else(|_| folder.to_owned(), |at| at.join(folder));
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute() && home.parent().is_some());
    let under_home = home.is_some_and(|home| {
        whole.starts_with(&home)
            && !whole
                .components()
                .any(|part| part == std::path::Component::ParentDir)
    });
    if !under_home {
        return Err(format!(
            "its folder does not exist, and the proxy makes one only under your home folder: \
             {create}"
        ));
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(folder) {
        Ok(()) => Ok(Some(folder.to_owned())),
        Err(err) => Err(format!(
            "its folder does not exist and cannot be made ({err}): {create}"
        )),
    }
}

/// `path` as a shell reads it back: as it is when it holds only characters no shell treats
/// apart, else in single quotes.
fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The lock file beside `path`, held while the pin file is read, changed and written, so two
/// proxies pinning into one file take turns and neither loses the other's change.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

/// Holds the lock of a pin file until dropped.
#[derive(Debug)]
pub(crate) struct Locked {
    #[cfg(unix)]
    _lock: nix::fcntl::Flock<File>,
    #[cfg(not(unix))]
    _lock: File,
}

/// Takes the lock of the pin file at `path`, waiting for another proxy to release it.
pub(crate) fn lock(path: &Path) -> io::Result<Locked> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(path))?;
    #[cfg(unix)]
    {
        let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, errno)| io::Error::from(errno))?;
        Ok(Locked { _lock: lock })
    }
    #[cfg(not(unix))]
    Ok(Locked { _lock: file })
}

/// Writes `text` to `path` atomically: into a temporary file beside it, flushed to disk, then
/// renamed over it, so a reader (or a crash) sees the old file or the new one, never half.
pub(crate) fn write_atomically(path: &Path, text: &str) -> io::Result<()> {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let written = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written?;
    // The rename itself is durable once the directory is.
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        if let Ok(directory) = File::open(parent) {
            let _ = directory.sync_all();
        }
    }
    Ok(())
}

/// Now, in RFC 3339 and UTC, to the second: `2026-12-02T01:30:00Z`.
pub(crate) fn now() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    timestamp(seconds)
}

/// Seconds since the Unix epoch as RFC 3339 in UTC (Howard Hinnant's `civil_from_days`).
pub(crate) fn timestamp(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let second_of_day = seconds % 86_400;
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339_in_utc() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(timestamp(1_798_248_313), "2026-12-26T01:25:13Z");
        assert_eq!(timestamp(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    fn sample() -> Pinned {
        let tool = |json: &str| Canon::parse(json).unwrap().unwrap();
        Pinned {
            server_name: Some("srv".into()),
            server_version: Some("1.0".into()),
            at: Some("2026-12-02T01:30:00Z".into()),
            instructions: Some(Some("Use \"me\".".into())),
            tools: Some(BTreeMap::from([
                (
                    "b".to_owned(),
                    tool(
                        r#"{"name":"b","inputSchema":{"type":"object","properties":{}},"description":"B."}"#,
                    ),
                ),
                (
                    "a".to_owned(),
                    tool(r#"{"name":"a","annotations":{"readOnlyHint":true}}"#),
                ),
            ])),
            prompts: Some(BTreeMap::new()),
        }
    }

    #[test]
    fn a_pin_file_is_pretty_sorted_and_reads_back() {
        let text = sample().render();
        assert_eq!(
            text,
            r#"{
  "fence-mcp-pin": 1,
  "server": { "name": "srv", "version": "1.0" },
  "pinned": "2026-12-02T01:30:00Z",
  "instructions": "Use \"me\".",
  "tools": [
    {
      "name": "a",
      "annotations": {
        "readOnlyHint": true
      }
    },
    {
      "name": "b",
      "description": "B.",
      "inputSchema": {
        "properties": {},
        "type": "object"
      }
    }
  ],
  "prompts": []
}
"#
        );
        assert_eq!(Pinned::parse(&text).unwrap(), sample());
        let bare = Pinned::default();
        assert_eq!(Pinned::parse(&bare.render()).unwrap(), bare);
    }

    #[test]
    fn a_corrupt_file_says_what_is_wrong() {
        for (text, problem) in [
            ("", "it is not JSON"),
            ("{\"fence-mcp-pin\": 1, \"tools\": [", "it is not JSON"),
            ("[]", "it is not a JSON object"),
            ("{}", "it has no `fence-mcp-pin` member"),
            (r#"{"fence-mcp-pin": 2}"#, "its `fence-mcp-pin` is 2"),
            (
                r#"{"fence-mcp-pin": 1, "tools": {}}"#,
                "its `tools` is not an array",
            ),
            (
                r#"{"fence-mcp-pin": 1, "prompts": [{}]}"#,
                "`prompts[0]` is not an object",
            ),
            (
                r#"{"fence-mcp-pin": 1, "tools": [{"name":"a"},{"name":"a"}]}"#,
                "it pins the tool `a` twice",
            ),
            (
                r#"{"fence-mcp-pin": 1, "instructions": 3}"#,
                "its `instructions` is not a string",
            ),
        ] {
            let err = Pinned::parse(text).unwrap_err();
            assert!(err.starts_with(problem), "{text}: {err}");
        }
        assert!(Pinned::parse(r#"{"fence-mcp-pin": 1.0}"#).is_ok());
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_nothing_beside_it() {
        let dir = std::env::temp_dir().join(format!("fence-pin-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pin.json");
        let _lock = lock(&path).unwrap();
        write_atomically(&path, "one").unwrap();
        write_atomically(&path, &sample().render()).unwrap();
        assert_eq!(load(&path).unwrap(), Some(sample()));
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["pin.json", "pin.json.lock"]);
        assert_eq!(load(&dir.join("absent.json")).unwrap(), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
