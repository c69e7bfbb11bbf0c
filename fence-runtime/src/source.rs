//! Source names: what a fence says its content came from.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;
use core::hash::{Hash, Hasher};

use crate::neutralise::neutralise;
use crate::trust::TaskOrigin;

/// The source a block is fenced under: `tool:<artifact name>`, `task:<origin>`, or a kind of
/// the caller's own ([`Source::custom`]).
///
/// Names are sanitised when the source is built (see [`sanitise_source_name`]), so a source
/// never carries a live marker, a `>`, a carriage return or a newline, and the opening marker
/// always ends at its own `>`. Cloning a source never allocates.
///
/// ```
/// use fence_runtime::{Source, TaskOrigin};
///
/// assert_eq!(Source::tool("web-fetch").as_str(), "tool:web-fetch");
/// assert_eq!(Source::task(TaskOrigin::Peer).as_str(), "task:peer");
/// assert_eq!(Source::tool("evil>\nname").as_str(), "tool:evil_ name");
/// ```
#[derive(Clone)]
pub struct Source {
    name: Name,
}

#[derive(Clone)]
enum Name {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Source {
    /// The source of a tool result: `tool:` and the sanitised artifact name.
    ///
    /// ```
    /// use fence_runtime::{Source, SourceKind};
    ///
    /// let source = Source::tool("web-fetch");
    /// assert_eq!(source.as_str(), "tool:web-fetch");
    /// assert_eq!(source.kind(), SourceKind::Tool("web-fetch"));
    /// ```
    #[must_use]
    pub fn tool(artifact: &str) -> Source {
        Source::joined("tool", artifact)
    }

    /// The source of an untrusted task payload: `task:` and the origin's wire spelling.
    ///
    /// ```
    /// use fence_runtime::{Source, TaskOrigin};
    ///
    /// assert_eq!(Source::task(TaskOrigin::Event).as_str(), "task:event");
    /// ```
    #[must_use]
    pub const fn task(origin: TaskOrigin) -> Source {
        let name = match origin {
            TaskOrigin::User => "task:user",
            TaskOrigin::Peer => "task:peer",
            TaskOrigin::Schedule => "task:schedule",
            TaskOrigin::Event => "task:event",
            TaskOrigin::Completion => "task:completion",
            TaskOrigin::System => "task:system",
        };
        Source {
            name: Name::Static(name),
        }
    }

    /// A source of another kind, such as `skill:`, `member:` or `delegation:` (kinds other agent
    /// runtimes use): `kind:name`, both parts sanitised, and any `:` in `kind` replaced with `_`
    /// so the kind always ends at the first `:`.
    ///
    /// ```
    /// use fence_runtime::{Source, SourceKind};
    ///
    /// let source = Source::custom("member", "researcher")?;
    /// assert_eq!(source.as_str(), "member:researcher");
    /// assert_eq!(source.kind(), SourceKind::Unknown("member:researcher"));
    /// assert_eq!(Source::custom("a:b", "c")?.as_str(), "a_b:c");
    /// # Ok::<(), fence_runtime::ReservedSourceKind>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When `kind` is `tool` or `task` in any ASCII casing, with or without surrounding
    /// whitespace: a `tool:` source comes only from [`Source::tool`], and a `task:` source only
    /// from a [`TaskOrigin`] through [`Source::task`], so no other path can spell one.
    ///
    /// ```
    /// use fence_runtime::Source;
    ///
    /// let err = Source::custom("task", "user").unwrap_err();
    /// assert_eq!(err.to_string(), "`task` is a reserved source kind: build a `task:` source from a `TaskOrigin` with `Source::task`");
    /// assert!(Source::custom(" Tool", "x").is_err());
    /// ```
    pub fn custom(kind: &str, name: &str) -> Result<Source, ReservedSourceKind> {
        let reserved = |word: &str| kind.trim().eq_ignore_ascii_case(word);
        if reserved("tool") {
            Err(ReservedSourceKind::Tool)
        } else if reserved("task") {
            Err(ReservedSourceKind::Task)
        } else {
            Ok(Source::joined(kind, name))
        }
    }

    /// `kind:name`, both parts sanitised, a `:` in the kind replaced.
    fn joined(kind: &str, name: &str) -> Source {
        let kind = sanitise_source_name(kind);
        let name = sanitise_source_name(name);
        let mut full = String::with_capacity(kind.len() + 1 + name.len());
        full.extend(kind.chars().map(|c| if c == ':' { '_' } else { c }));
        full.push(':');
        full.push_str(&name);
        Source {
            name: Name::Shared(Arc::from(full)),
        }
    }

    /// Whether this is a tool's source, `tool:<artifact name>`: the only kind a
    /// [`ToolOutput`](crate::ToolOutput) carries.
    ///
    /// ```
    /// use fence_runtime::{Source, TaskOrigin};
    ///
    /// assert!(Source::tool("bash").is_tool());
    /// assert!(!Source::task(TaskOrigin::Event).is_tool());
    /// ```
    #[must_use]
    pub fn is_tool(&self) -> bool {
        self.as_str().starts_with("tool:")
    }

    /// The full source name, as it appears after `source=` in the opening marker.
    ///
    /// ```
    /// assert_eq!(fence_runtime::Source::tool("bash").as_str(), "tool:bash");
    /// ```
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.name {
            Name::Static(name) => name,
            Name::Shared(name) => name,
        }
    }

    /// What kind of source this is.
    ///
    /// ```
    /// use fence_runtime::{Source, SourceKind, TaskOrigin};
    ///
    /// assert_eq!(Source::task(TaskOrigin::Peer).kind(), SourceKind::Task(TaskOrigin::Peer));
    /// ```
    #[must_use]
    pub fn kind(&self) -> SourceKind<'_> {
        SourceKind::of(self.as_str())
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Source").field(&self.as_str()).finish()
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Source {}

impl Hash for Source {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Source {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Source {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl AsRef<str> for Source {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// A kind [`Source::custom`] refuses: `tool` and `task` sources have their own constructors,
/// so that no other path can spell one.
///
/// ```
/// use fence_runtime::{ReservedSourceKind, Source};
///
/// assert_eq!(Source::custom("TOOL", "x"), Err(ReservedSourceKind::Tool));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReservedSourceKind {
    /// `tool`: use [`Source::tool`].
    Tool,
    /// `task`: use [`Source::task`] with a [`TaskOrigin`].
    Task,
}

impl fmt::Display for ReservedSourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReservedSourceKind::Tool => {
                "`tool` is a reserved source kind: build a `tool:` source with `Source::tool`"
            }
            ReservedSourceKind::Task => {
                "`task` is a reserved source kind: build a `task:` source from a `TaskOrigin` \
                 with `Source::task`"
            }
        })
    }
}

impl core::error::Error for ReservedSourceKind {}

/// What a source name says about where content came from, read from any source text —
/// a [`Source`], a parsed block, or a label on the wire.
///
/// ```
/// use fence_runtime::{SourceKind, TaskOrigin};
///
/// assert_eq!(SourceKind::of("tool:web-fetch"), SourceKind::Tool("web-fetch"));
/// assert_eq!(SourceKind::of("task:event"), SourceKind::Task(TaskOrigin::Event));
/// assert_eq!(SourceKind::of("task:boss"), SourceKind::Unknown("task:boss"));
/// assert_eq!(SourceKind::of("web-fetch"), SourceKind::Unknown("web-fetch"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceKind<'a> {
    /// `tool:<artifact name>`, with the artifact name.
    Tool(&'a str),
    /// `task:<origin>` with a known origin.
    Task(TaskOrigin),
    /// Any other source, whole: another kind, or `task:` with an origin that is not known.
    Unknown(&'a str),
}

impl<'a> SourceKind<'a> {
    /// Classifies a source name.
    ///
    /// ```
    /// use fence_runtime::SourceKind;
    ///
    /// assert_eq!(SourceKind::of("tool:"), SourceKind::Tool(""));
    /// ```
    pub fn of(source: &'a str) -> SourceKind<'a> {
        if let Some(artifact) = source.strip_prefix("tool:") {
            SourceKind::Tool(artifact)
        } else if let Some(Ok(origin)) = source.strip_prefix("task:").map(str::parse) {
            SourceKind::Task(origin)
        } else {
            SourceKind::Unknown(source)
        }
    }
}

/// Sanitises a name for use in a source: neutralises any marker in it, then replaces `>` with
/// `_` and carriage returns and newlines with spaces. Every other character is kept.
///
/// Returns the name unchanged, without copying, when there is nothing to replace.
///
/// ```
/// use fence_runtime::sanitise_source_name;
///
/// assert_eq!(sanitise_source_name("web-fetch"), "web-fetch");
/// assert_eq!(
///     sanitise_source_name("x></untrusted-content>\r\n"),
///     "x_<!MURMUR-NEUTRALISED!/untrusted-content_  ",
/// );
/// ```
#[must_use = "the sanitised name is returned; the input is not changed"]
pub fn sanitise_source_name(name: &str) -> Cow<'_, str> {
    let name = neutralise(name);
    if name.bytes().any(|b| matches!(b, b'>' | b'\r' | b'\n')) {
        Cow::Owned(
            name.chars()
                .map(|c| match c {
                    '>' => '_',
                    '\r' | '\n' => ' ',
                    c => c,
                })
                .collect(),
        )
    } else {
        name
    }
}
