//! How a listed item differs from its pin: its pinned members read by meaning, each changed
//! member with a short diff of it, and the server's words as the proxy may repeat them.

use std::collections::BTreeMap;

use super::Kind;
use super::canon::{Canon, short_diff};
use crate::json::Unreadable;
use crate::said::shown_upto;

/// How a listed item differs from its pin.
#[derive(Debug)]
pub(super) enum Drift {
    New,
    /// Each changed member, with a short diff: "description: …".
    Changed(Vec<String>),
    Unreadable(Unreadable),
}

/// The pinned members of a listed item (`null` ones as absent), by meaning.
pub(crate) fn definition(
    kind: Kind,
    members: &crate::json::Members<'_>,
) -> Result<Canon, Unreadable> {
    let mut pinned = BTreeMap::new();
    for field in kind.fields() {
        // Of two members of one name, the last counts, as clients read it.
        let Some((_, value)) = members.0.iter().rev().find(|(key, _)| key == field) else {
            continue;
        };
        match Canon::read(value)? {
            Canon::Null => {}
            value => {
                pinned.insert((*field).to_owned(), value);
            }
        }
    }
    Ok(Canon::Object(pinned))
}

/// Each pinned member that differs between `pinned` and `now`, with a short diff.
pub(crate) fn changes(kind: Kind, pinned: &Canon, now: &Canon) -> Vec<String> {
    let empty = BTreeMap::new();
    let pinned = pinned.as_object().unwrap_or(&empty);
    let now = now.as_object().unwrap_or(&empty);
    let mut changed = Vec::new();
    for field in kind.fields() {
        let (before, after) = (pinned.get(*field), now.get(*field));
        if before == after {
            continue;
        }
        let diff = match (before, after) {
            (None, Some(after)) => format!("added {}", shown_value(after)),
            (Some(before), None) => format!("removed {}", shown_value(before)),
            (Some(Canon::String(before)), Some(Canon::String(after))) => {
                quoted(&short_diff(before, after))
            }
            (Some(before), Some(after)) => {
                shown_upto(&short_diff(&before.compact(), &after.compact()), 400)
            }
            (None, None) => unreachable!("equal"),
        };
        changed.push(format!("{field}: {diff}"));
    }
    changed
}

/// The names of the changed members, from [`changes`]' entries: "description and inputSchema".
pub(super) fn field_names(changes: &[String]) -> String {
    let names: Vec<&str> = changes
        .iter()
        .map(|change| change.split(':').next().unwrap_or_default())
        .collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A pinned value as the proxy may repeat it.
fn shown_value(value: &Canon) -> String {
    match value {
        Canon::String(text) => quoted(text),
        other => shown_upto(&other.compact(), 200),
    }
}

/// The server's `text`, as the proxy may repeat it, in quotes.
fn quoted(text: &str) -> String {
    format!("\"{}\"", shown_upto(text, 300))
}

/// A short diff of two texts (an absent one as empty), quoted.
pub(super) fn diff_of_texts(before: Option<&str>, after: Option<&str>) -> String {
    quoted(&short_diff(
        before.unwrap_or_default(),
        after.unwrap_or_default(),
    ))
}
