//! The trust rules, in wire words: a task's trust is derived from its origin, never declared,
//! and nothing read from a header is trusted.
//!
//! ```
//! use fence_reference::trust;
//!
//! assert_eq!(trust::derive("peer", Some("trusted")), Some("trusted"));
//! assert_eq!(trust::from_wire(Some("user")), ("event", "untrusted"));
//! ```

/// Every origin, in the order the reference lists them.
///
/// ```
/// assert_eq!(fence_reference::trust::ORIGINS.len(), 6);
/// ```
pub const ORIGINS: [&str; 6] = ["user", "peer", "schedule", "event", "completion", "system"];

/// Both trust classes.
///
/// ```
/// assert_eq!(fence_reference::trust::CLASSES, ["trusted", "untrusted"]);
/// ```
pub const CLASSES: [&str; 2] = ["trusted", "untrusted"];

/// The derivation table, row by row: (origin, the trust the sender sent, the derived trust).
/// `user`, `schedule` and `system` are trusted and `event` untrusted whatever the sender says;
/// `peer` and `completion` carry the sender's trust, or are untrusted when it sent none.
///
/// ```
/// use fence_reference::trust::DERIVE;
///
/// assert!(DERIVE.contains(&("event", Some("trusted"), "untrusted")));
/// ```
pub const DERIVE: [(&str, Option<&str>, &str); 18] = [
    ("user", None, "trusted"),
    ("user", Some("trusted"), "trusted"),
    ("user", Some("untrusted"), "trusted"),
    ("peer", None, "untrusted"),
    ("peer", Some("trusted"), "trusted"),
    ("peer", Some("untrusted"), "untrusted"),
    ("schedule", None, "trusted"),
    ("schedule", Some("trusted"), "trusted"),
    ("schedule", Some("untrusted"), "trusted"),
    ("event", None, "untrusted"),
    ("event", Some("trusted"), "untrusted"),
    ("event", Some("untrusted"), "untrusted"),
    ("completion", None, "untrusted"),
    ("completion", Some("trusted"), "trusted"),
    ("completion", Some("untrusted"), "untrusted"),
    ("system", None, "trusted"),
    ("system", Some("trusted"), "trusted"),
    ("system", Some("untrusted"), "trusted"),
];

/// The trust a task of `origin` derives when its sender sent `inherited`: a row of [`DERIVE`],
/// or `None` for words that are not an origin and a trust class.
///
/// ```
/// use fence_reference::trust::derive;
///
/// assert_eq!(derive("completion", None), Some("untrusted"));
/// assert_eq!(derive("Peer", None), None);
/// ```
pub fn derive(origin: &str, inherited: Option<&str>) -> Option<&'static str> {
    DERIVE
        .iter()
        .find(|(o, i, _)| *o == origin && *i == inherited)
        .map(|&(_, _, trust)| trust)
}

/// The (origin, trust) of a task read from an inbound origin header: only exactly `peer` and
/// `completion` are taken at their word, and both untrusted; anything else, or no header, is an
/// untrusted `event`. A header never makes a task trusted.
///
/// ```
/// use fence_reference::trust::from_wire;
///
/// assert_eq!(from_wire(Some("completion")), ("completion", "untrusted"));
/// assert_eq!(from_wire(Some("system")), ("event", "untrusted"));
/// assert_eq!(from_wire(None), ("event", "untrusted"));
/// ```
pub fn from_wire(origin_header: Option<&str>) -> (&'static str, &'static str) {
    match origin_header {
        Some("peer") => ("peer", "untrusted"),
        Some("completion") => ("completion", "untrusted"),
        _ => ("event", "untrusted"),
    }
}

/// The (origin, trust) of a task whose channel authenticated its sender: a `peer` or
/// `completion` task carries the trust the sender sent (untrusted when none); any other origin
/// is an untrusted `event`, so not even an authenticated sender can claim the operator's
/// origins.
///
/// ```
/// use fence_reference::trust::from_authenticated_sender;
///
/// assert_eq!(from_authenticated_sender("peer", Some("trusted")), ("peer", "trusted"));
/// assert_eq!(from_authenticated_sender("user", Some("trusted")), ("event", "untrusted"));
/// ```
pub fn from_authenticated_sender(
    origin: &str,
    sender_trust: Option<&str>,
) -> (&'static str, &'static str) {
    match (origin, sender_trust) {
        ("peer", Some("trusted")) => ("peer", "trusted"),
        ("peer", _) => ("peer", "untrusted"),
        ("completion", Some("trusted")) => ("completion", "trusted"),
        ("completion", _) => ("completion", "untrusted"),
        _ => ("event", "untrusted"),
    }
}
