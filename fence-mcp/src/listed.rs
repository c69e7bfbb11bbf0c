//! What a server says about itself: its lists of tools and prompts, its instructions (in
//! answer to `initialize` or `server/discover`), a prompt's description. Not fenced (the model must read them as the
//! server's guidance), but their markers neutralised, and held to the pin when there is one.
//! A message with nothing to neutralise and nothing withheld is forwarded as it came.

use serde_json::value::RawValue;

use crate::fencing::{Fencing, Malformed, Written};
use crate::json::{self, Members, elements, keep, neutralise_into};
use crate::pin::{self, Kind, Listed, Pinning};

/// The members of an item whose markers are neutralised: the words the model reads.
const WORDS: [&str; 2] = ["title", "description"];

/// A `tools/list` or `prompts/list` page, answering a request with a cursor or not (`first`):
/// the items the pin withholds left out, every title and description neutralised (a tool's
/// `annotations.title` and a prompt argument's too), and each tool's `outputSchema` removed
/// when `structuredContent` is. Everything else, `nextCursor` included, kept as it came.
pub(crate) fn list_page(
    raw: &RawValue,
    kind: Kind,
    first: bool,
    pin: Option<&Pinning>,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    let Some(members) = Members::of(raw) else {
        return Ok(keep(raw, out));
    };
    let key = kind.list_key();
    let items = members
        .one(key)
        .map_err(|_| Malformed(format!("the result has two `{key}` members")))?
        .and_then(elements);
    let keep_items = match (pin, &items) {
        (Some(pin), Some(items)) => {
            let last = members
                .one("nextCursor")
                .ok()
                .flatten()
                .is_none_or(|cursor| cursor.get() == "null");
            let listed: Vec<Listed> = items
                .iter()
                .map(|item| {
                    let Some(item) = Members::of(item) else {
                        return Listed::Nameless;
                    };
                    match item.string("name") {
                        Some(name) => Listed::Item(name.into_owned(), pin::definition(kind, &item)),
                        None => Listed::Nameless,
                    }
                })
                .collect();
            let (keep_items, notes) = pin.page(kind, first, last, &listed);
            fencing.notes.extend(notes);
            keep_items
        }
        (_, Some(items)) => vec![true; items.len()],
        (_, None) => Vec::new(),
    };
    let remove_output_schema = kind == Kind::Tool && fencing.remove_structured;
    members.write_each(out, |name, value, out| {
        let (true, Some(items)) = (name == key, &items) else {
            return Ok(keep(value, out));
        };
        let mut changed = false;
        let mut written = 0;
        out.push(b'[');
        for (index, (item, kept)) in items.iter().zip(&keep_items).enumerate() {
            if !kept {
                changed = true;
                continue;
            }
            if written > 0 {
                out.push(b',');
            }
            written += 1;
            let path = format!("{key}[{index}]");
            changed |= item_words(item, kind, remove_output_schema, &path, out)?;
        }
        out.push(b']');
        Ok(changed)
    })
}

/// One listed item with its words neutralised (see [`list_page`]).
fn item_words(
    raw: &RawValue,
    kind: Kind,
    remove_output_schema: bool,
    path: &str,
    out: &mut Vec<u8>,
) -> Written {
    let Some(members) = Members::of(raw) else {
        return Ok(keep(raw, out));
    };
    let mut changed = false;
    let members = if remove_output_schema {
        let kept: Vec<_> = members
            .0
            .iter()
            .filter(|(key, _)| key != "outputSchema")
            .cloned()
            .collect();
        changed = kept.len() != members.0.len();
        Members(kept)
    } else {
        members
    };
    changed |= members.write_each(out, |key, value, out| match (kind, key) {
        (_, "title" | "description") => words(value, &format!("{path}.{key}"), out),
        (Kind::Tool, "annotations") => {
            let path = format!("{path}.annotations");
            let Some(annotations) = Members::of(value) else {
                return Ok(keep(value, out));
            };
            annotations.write_each(out, |key, value, out| match key {
                "title" => words(value, &format!("{path}.title"), out),
                _ => Ok(keep(value, out)),
            })
        }
        (Kind::Prompt, "arguments") => {
            let Some(arguments) = elements(value) else {
                return Ok(keep(value, out));
            };
            json::write_elements(out, &arguments, |index, argument, out| {
                let path = format!("{path}.arguments[{index}]");
                let Some(argument) = Members::of(argument) else {
                    return Ok(keep(argument, out));
                };
                argument.write_each(out, |key, value, out| {
                    if WORDS.contains(&key) {
                        words(value, &format!("{path}.{key}"), out)
                    } else {
                        Ok(keep(value, out))
                    }
                })
            })
        }
        _ => Ok(keep(value, out)),
    })?;
    Ok(changed)
}

/// The server's words at `path`, every marker in them neutralised.
fn words(value: &RawValue, path: &str, out: &mut Vec<u8>) -> Written {
    neutralise_into(value, out).map_err(|why| Malformed::at(path, &why.problem()))
}

/// A result in which the server introduces itself: `initialize`'s, or the 2026-07-28
/// protocol's `server/discover`'s. Both carry the server's `instructions` (guidance a client
/// may hand its model) and say who the server is, each in its own place; both are treated
/// alike, so a server cannot pass unneutralised or unpinned instructions through the one the
/// proxy would otherwise not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Introduction {
    /// `initialize`: who the server is in `serverInfo`.
    Initialize,
    /// `server/discover`: who the server is in `_meta["io.modelcontextprotocol/serverInfo"]`.
    Discover,
}

/// The key of `server/discover`'s `_meta` member that says who the server is.
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

impl Introduction {
    /// The object of `result` (an introduction of this kind) that says who the server is
    /// (`name`, `version`), when there is one.
    pub(crate) fn server_info<'a>(self, result: &Members<'a>) -> Option<Members<'a>> {
        let one = |members: &Members<'a>, key: &str| members.one(key).ok().flatten();
        let info = match self {
            Introduction::Initialize => one(result, "serverInfo")?,
            Introduction::Discover => one(&Members::of(one(result, "_meta")?)?, SERVER_INFO_META)?,
        };
        Members::of(info)
    }
}

/// An introduction's result (`initialize`'s or `server/discover`'s): its `instructions`
/// neutralised, or left out when the pin withholds them.
pub(crate) fn introduction(
    raw: &RawValue,
    kind: Introduction,
    pin: Option<&Pinning>,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    let Some(members) = Members::of(raw) else {
        return Ok(keep(raw, out));
    };
    let instructions = members
        .one("instructions")
        .map_err(|_| Malformed("the result has two `instructions` members".into()))?;
    let withhold = match pin {
        Some(pin) => {
            let info = kind.server_info(&members);
            let info = |key: &str| {
                info.as_ref()
                    .and_then(|info| info.string(key))
                    .map(std::borrow::Cow::into_owned)
            };
            let text = instructions
                .filter(|text| text.get() != "null")
                .map(|text| {
                    json::string(text)
                        .map_or_else(|| text.get().to_owned(), std::borrow::Cow::into_owned)
                });
            let (withhold, notes) = pin.initialize((info("name"), info("version")), text);
            fencing.notes.extend(notes);
            withhold
        }
        None => false,
    };
    let members = if withhold {
        Members(
            members
                .0
                .into_iter()
                .filter(|(key, _)| key != "instructions")
                .collect(),
        )
    } else {
        members
    };
    let changed = members.write_each(out, |key, value, out| match key {
        "instructions" => words(value, "instructions", out),
        _ => Ok(keep(value, out)),
    })?;
    Ok(changed || withhold)
}

/// A `prompts/get` result: its `description` neutralised; the messages are the prompt itself,
/// the server's own words to the model, kept as they came.
pub(crate) fn prompt(raw: &RawValue, out: &mut Vec<u8>) -> Written {
    let Some(members) = Members::of(raw) else {
        return Ok(keep(raw, out));
    };
    members.write_each(out, |key, value, out| match key {
        "description" => words(value, "description", out),
        _ => Ok(keep(value, out)),
    })
}
