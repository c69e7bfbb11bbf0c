//! What the markers of a piece of content say, read with the fence's own marker matcher.

use fence_runtime::{ParseError, ParsedBlock, live_markers, parse};

/// What the markers of a piece of content say, read with the same marker matcher the fence
/// uses.
///
/// ```
/// use fence_surfaces::{read_markers, Markers};
///
/// assert!(matches!(read_markers("Fetched it."), Markers::Plain));
/// let Markers::Block(block) = read_markers("<untrusted-content source=tool:t>\nx\n</untrusted-content>") else { panic!() };
/// assert_eq!(block.source(), "tool:t");
/// assert!(matches!(read_markers("see </untrusted-content>"), Markers::Malformed(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Markers<'a> {
    /// No live marker anywhere: unfenced text.
    Plain,
    /// Exactly one valid fenced block.
    Block(ParsedBlock<'a>),
    /// Live markers, but not a valid block; the error says which rule of the grammar failed.
    Malformed(ParseError),
}

impl<'a> Markers<'a> {
    /// The block's source, when the content is a valid block.
    ///
    /// ```
    /// use fence_surfaces::read_markers;
    ///
    /// assert_eq!(read_markers("<untrusted-content source=task:peer>\nx\n</untrusted-content>").source(), Some("task:peer"));
    /// assert_eq!(read_markers("x").source(), None);
    /// ```
    #[must_use]
    pub fn source(&self) -> Option<&'a str> {
        match self {
            Markers::Block(block) => Some(block.source()),
            Markers::Plain | Markers::Malformed(_) => None,
        }
    }

    /// Why the content is not a valid block; `None` when it is one.
    pub(crate) fn error(&self) -> Option<ParseError> {
        match self {
            Markers::Block(_) => None,
            Markers::Plain => Some(ParseError::NoOpener),
            Markers::Malformed(error) => Some(*error),
        }
    }
}

/// Reads the markers of `text`: a valid block, plain text with no live marker, or something in
/// between.
///
/// This is how an unlabelled surface — a frame from a runtime that predates `fence_source`, a
/// record written before `fence`, a trace event — is read.
///
/// ```
/// use fence_surfaces::{read_markers, Markers};
/// use fence_runtime::ParseError;
///
/// assert_eq!(
///     read_markers("<untrusted-content source=tool:t>\nx</untrusted-content>"),
///     Markers::Malformed(ParseError::MissingSeparatorBeforeCloser),
/// );
/// ```
#[must_use]
pub fn read_markers(text: &str) -> Markers<'_> {
    match parse(text) {
        Ok(block) => Markers::Block(block),
        Err(error) if live_markers(text).next().is_some() => Markers::Malformed(error),
        Err(_) => Markers::Plain,
    }
}
