//! Tasks and trust: origin and trust headers read from the wire, the derivation table, the
//! one path by which an authenticated sender's trust is inherited, and the content a task's
//! payload becomes, against the reference's trust rules.
//!
//! Input layout: `selector origin-header 0xFF trust-header 0xFF payload`, each part read as
//! text (invalid UTF-8 replaced). Bit 0 of the selector reads the origin header as absent; bits
//! 1 to 3 pick a typed origin, bits 4 and 5 a sender's trust (none, the trust header as
//! parsed, trusted, untrusted).
//!
//! Invariants:
//! - `TaskOrigin` and `TrustClass` parse exactly their lowercase wire spellings (any other
//!   text, casing or whitespace is an error that holds the text and says what was expected),
//!   and print them back;
//! - `TaskProvenance::from_wire` follows the reference: only exactly `peer` and `completion`
//!   are taken at their word, anything else is an `event`, and the task is never trusted,
//!   whatever the headers claim;
//! - `derive` gives each origin its own trust (the reference table's row for a sender that sent
//!   nothing), so never a trusted `peer` or `completion`; `from_authenticated_sender` follows
//!   the reference's rules; and the two together give every row of the table;
//! - a task's payload is fenced under `task:<origin>` exactly when its trust is untrusted
//!   (the reference block), and otherwise is the payload neutralised, as the trusted-task
//!   exemption: so a payload read with `from_wire` is always fenced.

use fence_reference::{self as reference, trust};
use fence_runtime::{Exemption, Source, TaskOrigin, TaskProvenance, TrustClass};

use crate::api::{table_provenance, task_content};
use crate::input::text_parts;

/// Checks every invariant on `data`; panics on the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// // A peer that claims, on the wire, to carry trust.
/// fence_checks::trust::check(b"\x00peer\xfftrusted\xffWire the money.");
/// ```
pub fn check(data: &[u8]) {
    let selector = data.first().copied().unwrap_or(0);
    let parts = text_parts(data.get(1..).unwrap_or_default(), 3);
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    let (origin_header, trust_header, payload) = (part(0), part(1), part(2));

    let origin = parses_exactly(origin_header);
    let sent_trust = trust_class(trust_header);
    for header in [origin_header, trust_header, payload] {
        parses_exactly(header);
        trust_class(header);
    }

    // From the wire: never trusted, whatever either header says.
    let header = (selector & 1 == 0).then_some(origin_header);
    let wire = TaskProvenance::from_wire(header);
    assert_eq!(
        (wire.origin().as_str(), wire.trust().as_str()),
        trust::from_wire(header),
        "from_wire({header:?})"
    );
    assert!(wire.is_fenced(), "from_wire({header:?}) is trusted");
    content(wire, payload);

    // Typed: the derivation table and the authenticated path, for the origin the header names
    // (when it names one) and one the selector picks.
    let picked = TaskOrigin::ALL[usize::from(selector >> 1 & 7) % TaskOrigin::ALL.len()];
    let sender = match selector >> 4 & 3 {
        0 => None,
        1 => sent_trust,
        2 => Some(TrustClass::Trusted),
        _ => Some(TrustClass::Untrusted),
    };
    for origin in origin.into_iter().chain([picked]) {
        let name = origin.as_str();
        let said = sender.map(TrustClass::as_str);
        let derived = TaskProvenance::derive(origin);
        assert_eq!(derived.origin(), origin);
        assert_eq!(
            Some(derived.trust().as_str()),
            trust::derive(name, None),
            "derive({name})"
        );
        assert_eq!(
            derived.is_fenced(),
            derived.trust() == TrustClass::Untrusted
        );
        assert!(
            !(matches!(origin, TaskOrigin::Peer | TaskOrigin::Completion)
                && derived.trust() == TrustClass::Trusted),
            "derive({name}) trusts a sender no channel authenticated"
        );
        content(derived, payload);

        let row = table_provenance(origin, sender);
        assert_eq!(
            (row.origin(), Some(row.trust().as_str())),
            (origin, trust::derive(name, said)),
            "the table's row for {name} with {said:?}"
        );
        content(row, payload);

        let authenticated = TaskProvenance::from_authenticated_sender(origin, sender);
        assert_eq!(
            (
                authenticated.origin().as_str(),
                authenticated.trust().as_str()
            ),
            trust::from_authenticated_sender(name, said),
            "from_authenticated_sender({name}, {said:?})"
        );
        content(authenticated, payload);
        assert_eq!(Source::task(origin).as_str(), format!("task:{name}"));
    }
}

/// Parses `wire` as an origin: exactly the reference's spellings parse, and print back.
fn parses_exactly(wire: &str) -> Option<TaskOrigin> {
    let parsed = wire.parse::<TaskOrigin>();
    assert_eq!(
        parsed.is_ok(),
        trust::ORIGINS.contains(&wire),
        "{wire:?} as an origin"
    );
    match parsed {
        Ok(origin) => {
            assert_eq!(origin.as_str(), wire);
            assert_eq!(origin.to_string(), wire);
            Some(origin)
        }
        Err(err) => {
            assert_eq!(err.value(), wire);
            let message = err.to_string();
            assert!(
                message.starts_with("unknown task origin `")
                    && message.contains(&wire.escape_debug().to_string())
                    && message.ends_with(
                        "expected one of user, peer, schedule, event, completion, system"
                    ),
                "{message:?}"
            );
            None
        }
    }
}

/// Parses `wire` as a trust class: exactly the reference's spellings parse, and print back.
fn trust_class(wire: &str) -> Option<TrustClass> {
    let parsed = wire.parse::<TrustClass>();
    assert_eq!(
        parsed.is_ok(),
        trust::CLASSES.contains(&wire),
        "{wire:?} as a trust class"
    );
    match parsed {
        Ok(class) => {
            assert_eq!((class.as_str(), class.to_string().as_str()), (wire, wire));
            Some(class)
        }
        Err(err) => {
            assert_eq!(err.value(), wire);
            let message = err.to_string();
            assert!(
                message.starts_with("unknown trust class `")
                    && message.ends_with("expected trusted or untrusted"),
                "{message:?}"
            );
            None
        }
    }
}

/// The content a payload of this provenance becomes: the reference block under
/// `task:<origin>` when untrusted, the payload neutralised as a trusted task otherwise.
fn content(provenance: TaskProvenance, payload: &str) {
    let content = task_content(provenance, payload);
    let source = format!("task:{}", provenance.origin());
    if provenance.trust() == TrustClass::Untrusted {
        assert_eq!(
            content.as_str(),
            reference::block_text(&source, payload.as_bytes()),
            "an untrusted task's content"
        );
        assert_eq!(content.fence_source(), Some(source.as_str()));
        assert_eq!(content.exemption(), None);
    } else {
        assert_eq!(content.as_str(), reference::neutralise_str(payload));
        assert_eq!(content.fence_source(), None);
        assert_eq!(content.exemption(), Some(Exemption::TrustedTask));
    }
}
