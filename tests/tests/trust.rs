//! Task origins and trust: the derivation table, reading headers from the wire, and the exact
//! lowercase wire spellings.

use std::str::FromStr;

use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

use TaskOrigin::{Completion, Event, Peer, Schedule, System, User};
use TrustClass::{Trusted, Untrusted};

#[test]
fn derive_table() {
    let table = *fence_tests::trust::DERIVE;
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
fn from_wire_never_yields_a_trusted_task() {
    // (origin header, origin): only `peer` and `completion` can be claimed, and both are
    // untrusted; anything else is an untrusted event.
    let table = [
        (Some("peer"), Peer),
        (Some("completion"), Completion),
        (Some("user"), Event),
        (Some("system"), Event),
        (Some("schedule"), Event),
        (Some("event"), Event),
        (Some("Peer"), Event),
        (Some("PEER"), Event),
        (Some(" peer"), Event),
        (Some("peer "), Event),
        (Some("Completion"), Event),
        (Some(""), Event),
        (Some("operator"), Event),
        (None, Event),
    ];
    for (origin_header, origin) in table {
        let provenance = TaskProvenance::from_wire(origin_header);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, Untrusted),
            "from_wire({origin_header:?})"
        );
        assert!(provenance.is_fenced());
    }
}

#[test]
fn only_an_authenticated_peer_or_completion_inherits_its_senders_trust() {
    for &origin in TaskOrigin::ALL {
        for sender in [None, Some(Trusted), Some(Untrusted)] {
            let provenance = TaskProvenance::from_authenticated_sender(origin, sender);
            let expected = match origin {
                Peer | Completion => (origin, sender.unwrap_or(Untrusted)),
                // Even an authenticated sender cannot claim to be the operator.
                User | Schedule | System | Event => (Event, Untrusted),
                _ => panic!("an origin this test does not know: {origin:?}"),
            };
            assert_eq!(
                (provenance.origin(), provenance.trust()),
                expected,
                "from_authenticated_sender({origin:?}, {sender:?})"
            );
        }
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
    assert_eq!(
        TaskOrigin::ALL,
        spellings.map(|(origin, _)| origin).as_slice()
    );
    for (origin, wire) in spellings {
        assert_eq!(origin.as_str(), wire);
        assert_eq!(origin.to_string(), wire);
        assert_eq!(wire.parse::<TaskOrigin>(), Ok(origin));
        assert_eq!(TaskOrigin::from_str(wire), Ok(origin));
    }
}

#[test]
fn trust_wire_spellings_round_trip() {
    for (trust, wire) in [(Trusted, "trusted"), (Untrusted, "untrusted")] {
        assert_eq!(trust.as_str(), wire);
        assert_eq!(trust.to_string(), wire);
        assert_eq!(wire.parse::<TrustClass>(), Ok(trust));
        assert_eq!(TrustClass::from_str(wire), Ok(trust));
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
        let err = wire.parse::<TaskOrigin>().unwrap_err();
        assert_eq!(err.value(), wire);
    }
    assert_eq!(
        "Peer".parse::<TaskOrigin>().unwrap_err().to_string(),
        "unknown task origin `Peer`; expected one of user, peer, schedule, event, completion, system"
    );
    assert_eq!(
        "peer\n".parse::<TaskOrigin>().unwrap_err().to_string(),
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
        let err = wire.parse::<TrustClass>().unwrap_err();
        assert_eq!(err.value(), wire);
    }
    assert_eq!(
        "TRUSTED".parse::<TrustClass>().unwrap_err().to_string(),
        "unknown trust class `TRUSTED`; expected trusted or untrusted"
    );
}
