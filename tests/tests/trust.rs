//! Task origins and trust: the derivation table, reading headers from the wire, and the exact
//! lowercase wire spellings.

use std::str::FromStr;

use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

use TaskOrigin::{Completion, Event, Peer, Schedule, System, User};
use TrustClass::{Trusted, Untrusted};

#[test]
fn derive_table() {
    let table = fence_tests::trust::DERIVE;
    assert_eq!(table.len(), 18);
    for (origin, inherited, trust) in table {
        let provenance = TaskProvenance::derive(origin, inherited);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, trust),
            "derive({origin:?}, {inherited:?})"
        );
        assert_eq!(provenance.is_fenced(), trust == Untrusted);
    }
}

#[test]
fn from_wire_table() {
    // (origin header, trust header, origin, trust).
    let table = [
        // Only `peer` and `completion` can be claimed, with the trust the sender sent.
        (Some("peer"), Some("trusted"), Peer, Trusted),
        (Some("peer"), Some("untrusted"), Peer, Untrusted),
        (Some("completion"), Some("trusted"), Completion, Trusted),
        (Some("completion"), Some("untrusted"), Completion, Untrusted),
        // An absent trust header: untrusted.
        (Some("peer"), None, Peer, Untrusted),
        (Some("completion"), None, Completion, Untrusted),
        // An unreadable trust header: untrusted.
        (Some("peer"), Some("Trusted"), Peer, Untrusted),
        (Some("peer"), Some("TRUSTED"), Peer, Untrusted),
        (Some("peer"), Some(" trusted"), Peer, Untrusted),
        (Some("peer"), Some("trusted "), Peer, Untrusted),
        (Some("peer"), Some(""), Peer, Untrusted),
        (Some("peer"), Some("yes"), Peer, Untrusted),
        (Some("completion"), Some("operator"), Completion, Untrusted),
        (Some("completion"), Some("trusted\n"), Completion, Untrusted),
        // Any other origin, unreadable or absent: an untrusted event, whatever the trust says.
        (Some("user"), Some("trusted"), Event, Untrusted),
        (Some("user"), None, Event, Untrusted),
        (Some("system"), Some("trusted"), Event, Untrusted),
        (Some("schedule"), Some("trusted"), Event, Untrusted),
        (Some("event"), Some("trusted"), Event, Untrusted),
        (Some("Peer"), Some("trusted"), Event, Untrusted),
        (Some("PEER"), Some("trusted"), Event, Untrusted),
        (Some(" peer"), Some("trusted"), Event, Untrusted),
        (Some("peer "), Some("trusted"), Event, Untrusted),
        (Some("Completion"), Some("trusted"), Event, Untrusted),
        (Some(""), Some("trusted"), Event, Untrusted),
        (Some("operator"), Some("trusted"), Event, Untrusted),
        (None, Some("trusted"), Event, Untrusted),
        (None, None, Event, Untrusted),
    ];
    for (origin_header, trust_header, origin, trust) in table {
        let provenance = TaskProvenance::from_wire(origin_header, trust_header);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, trust),
            "from_wire({origin_header:?}, {trust_header:?})"
        );
    }
}

#[test]
fn origin_wire_spellings_round_trip() {
    let spellings = [
        (User, "user"),
        (Peer, "peer"),
        (Schedule, "schedule"),
        (Event, "event"),
        (Completion, "completion"),
        (System, "system"),
    ];
    assert_eq!(TaskOrigin::ALL, spellings.map(|(origin, _)| origin));
    for (origin, wire) in spellings {
        assert_eq!(origin.as_str(), wire);
        assert_eq!(origin.to_string(), wire);
        assert_eq!(TaskOrigin::parse(wire), Ok(origin));
        assert_eq!(TaskOrigin::from_str(wire), Ok(origin));
        assert_eq!(wire.parse::<TaskOrigin>(), Ok(origin));
    }
}

#[test]
fn trust_wire_spellings_round_trip() {
    for (trust, wire) in [(Trusted, "trusted"), (Untrusted, "untrusted")] {
        assert_eq!(trust.as_str(), wire);
        assert_eq!(trust.to_string(), wire);
        assert_eq!(TrustClass::parse(wire), Ok(trust));
        assert_eq!(TrustClass::from_str(wire), Ok(trust));
        assert_eq!(wire.parse::<TrustClass>(), Ok(trust));
    }
}

#[test]
fn other_origin_spellings_are_rejected() {
    for wire in [
        "User",
        "USER",
        "Peer",
        "pEER",
        "SCHEDULE",
        "Event",
        "COMPLETION",
        "System",
        " peer",
        "peer ",
        "peer\n",
        "",
        "task:peer",
        "operator",
        "\u{17F}ystem",
    ] {
        let err = TaskOrigin::parse(wire).unwrap_err();
        assert_eq!(err.value(), wire);
        assert_eq!(wire.parse::<TaskOrigin>().unwrap_err(), err);
    }
    assert_eq!(
        TaskOrigin::parse("Peer").unwrap_err().to_string(),
        "unknown task origin `Peer`; expected one of user, peer, schedule, event, completion, system"
    );
    assert_eq!(
        TaskOrigin::parse("peer\n").unwrap_err().to_string(),
        "unknown task origin `peer\\n`; expected one of user, peer, schedule, event, completion, system"
    );
}

#[test]
fn other_trust_spellings_are_rejected() {
    for wire in [
        "Trusted",
        "TRUSTED",
        "Untrusted",
        "UNTRUSTED",
        " trusted",
        "trusted ",
        "",
        "true",
        "yes",
    ] {
        let err = TrustClass::parse(wire).unwrap_err();
        assert_eq!(err.value(), wire);
        assert_eq!(wire.parse::<TrustClass>().unwrap_err(), err);
    }
    assert_eq!(
        TrustClass::parse("TRUSTED").unwrap_err().to_string(),
        "unknown trust class `TRUSTED`; expected trusted or untrusted"
    );
}
