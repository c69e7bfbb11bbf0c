//! The few names of fence-runtime's API that are being renamed, used from here only, so that a
//! rename is one edit in this crate.

use fence_reference::BrokenRule;
use fence_runtime::{
    ModelContent, Neutraliser, ParseError, TaskOrigin, TaskProvenance, TrustClass,
};

/// Pushes a chunk of bytes through a neutraliser.
pub(crate) fn push_bytes(neutraliser: &mut Neutraliser, chunk: &[u8], out: &mut Vec<u8>) {
    neutraliser.push_bytes(chunk, out);
}

/// The crate's parse error for a rule the reference parser says was broken.
pub(crate) fn parse_error(rule: BrokenRule) -> ParseError {
    match rule {
        BrokenRule::NoOpener => ParseError::NoOpener,
        BrokenRule::SourceNotTerminated => ParseError::SourceNotTerminated,
        BrokenRule::MissingSeparatorAfterOpener => ParseError::MissingSeparatorAfterOpener,
        BrokenRule::NoCloser => ParseError::NoCloser,
        BrokenRule::TextAfterCloser => ParseError::TextAfterCloser,
        BrokenRule::MissingSeparatorBeforeCloser => ParseError::MissingSeparatorBeforeCloser,
    }
}

/// The provenance a row of the reference's derivation table describes, made through the public
/// API: a sender's trust reaches a `peer` or `completion` task only through
/// `from_authenticated_sender`; every other row is the origin's own trust (`derive`), whatever
/// the sender said.
pub(crate) fn table_provenance(origin: TaskOrigin, sender: Option<TrustClass>) -> TaskProvenance {
    match (origin, sender) {
        (TaskOrigin::Peer | TaskOrigin::Completion, Some(_)) => {
            TaskProvenance::from_authenticated_sender(origin, sender)
        }
        _ => TaskProvenance::derive(origin),
    }
}

/// A task payload's content, fenced or exempt as its provenance says.
pub(crate) fn task_content(provenance: TaskProvenance, payload: &str) -> ModelContent {
    ModelContent::task(&provenance, payload)
}

/// A task payload type's content, fenced or exempt as its provenance says.
#[cfg(feature = "std")]
pub(crate) fn payload_content<T: fence_runtime::FencedTask>(payload: &T) -> ModelContent {
    ModelContent::task_payload(payload)
}
