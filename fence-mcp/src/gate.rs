//! The gate: everything the upstream sends passes here, and nowhere else, on its way to a
//! client — a stdio line, each message of a JSON body, the head of an HTTP response of any
//! status and any `Content-Type`, each event of an event stream. For each it says which of
//! three it is:
//!
//! - **a message the proxy read**: the session's [`Outcome`], the message rewritten by the
//!   fencing table (or refused, or withheld, as the session says);
//! - **bytes no client reads as a message** ([`Passage::Inert`], [`Head::Inert`]): forwarded
//!   as they came;
//! - **unreadable** ([`Head::Withheld`]): withheld, and each request waiting on it gets an
//!   error.
//!
//! "No client reads it as a message" is decided by the most lenient reader among the official
//! clients, never by what the specification says a client should do. A front or an upstream
//! may always withhold more than the gate lets through; it never lets through what the gate
//! did not pass.
//!
//! Built with `--cfg fence_gate_open`, the gate lets every byte through unread, as a proxy
//! that fenced nothing would: the suite must fail then (`scripts/gate-open.sh`), or some path
//! carries upstream bytes past it.

use crate::session::{Outcome, Session};

/// Whether the gate is open (`--cfg fence_gate_open`): a test of the tests.
const OPEN: bool = cfg!(fence_gate_open);

/// A line the upstream wrote on its stdout, or one message of a JSON body: read by the session
/// (which drops and reports what is not a JSON-RPC message).
pub(crate) fn message(session: &Session, message: &[u8]) -> Outcome {
    if OPEN {
        return Outcome::as_it_came();
    }
    session.upstream_line(message)
}

#[cfg(feature = "http")]
pub(crate) use http::{Head, Passage, event, head};

#[cfg(feature = "http")]
mod http {
    use http::{HeaderMap, StatusCode};

    use crate::session::{Outcome, Session};
    use crate::wire::sse::Event;
    use crate::wire::{BodyKind, compressed};

    /// How the body of an HTTP response from the upstream is read, from its head.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) enum Head {
        /// A JSON body: read whole, each of its messages through [`message`](super::message).
        Json,
        /// An event stream: read event by event, each through [`event`].
        Events,
        /// A body no client reads as messages (an OAuth error, a gateway's page): as it came.
        Inert,
        /// A body the proxy cannot read, why: withheld.
        Withheld(&'static str),
    }

    /// What the proxy says of a body sent compressed though it asked for none.
    pub(crate) const COMPRESSED: &str = "the upstream compressed its response though the proxy \
                                         asked for none; the proxy cannot fence what it cannot read";

    /// How the body of a response with this status and these headers is read.
    pub(crate) fn head(status: StatusCode, headers: &HeaderMap) -> Head {
        if super::OPEN {
            return Head::Inert;
        }
        let kind = BodyKind::of(headers);
        if kind != BodyKind::Other && compressed(headers) {
            return Head::Withheld(COMPRESSED);
        }
        match kind {
            BodyKind::EventStream => Head::Events,
            // A JSON body of an error status still carries JSON-RPC (an error for a request);
            // an OAuth error's is not JSON-RPC.
            BodyKind::Json
                if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN =>
            {
                Head::Json
            }
            _ => Head::Inert,
        }
    }

    /// What one event of an event stream is.
    #[derive(Debug)]
    pub(crate) enum Passage {
        /// A message, read: what the session makes of it.
        Read(Outcome),
        /// No message (a comment, a priming event, an event of another type): as it came.
        Inert,
    }

    /// One event of an upstream's event stream.
    pub(crate) fn event(session: &Session, event: &Event<'_>) -> Passage {
        if super::OPEN {
            return Passage::Inert;
        }
        match event.message() {
            Some(message) => Passage::Read(session.upstream_line(message)),
            None => Passage::Inert,
        }
    }
}
