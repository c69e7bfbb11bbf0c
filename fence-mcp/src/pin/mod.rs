//! Tool-definition pinning: what a server says about itself (its tools, its prompts, its
//! `initialize` instructions), recorded in a file the first time it is seen, and compared by
//! meaning with every list page and `initialize` answer after that.
//!
//! - **Enforce** (the default): an item that is new, or whose definition changed, is left out
//!   of the list the client receives, and a call to it is refused by the proxy; changed
//!   instructions are withheld.
//! - **Report**: everything is forwarded; drift is reported.
//! - **Update**: everything is forwarded, and what the server lists now is recorded.
//!
//! A kind of item (tools, prompts, the instructions) the file holds nothing of yet is recorded
//! the first time it is seen (trust on first use), for the whole session.

mod canon;
mod file;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) use canon::Canon;
use canon::short_diff;
use file::Pinned;

use crate::json::Unreadable;
use crate::options::PinMode;
use crate::said::{shown, shown_upto};

/// A kind of item a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    /// The members of an item that are pinned, in the order the pin file writes them.
    pub(crate) fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            Kind::Prompt => &["name", "title", "description", "arguments"],
        }
    }

    /// The member of a list result (and of the pin file) holding the items.
    pub(crate) fn list_key(self) -> &'static str {
        match self {
            Kind::Tool => "tools",
            Kind::Prompt => "prompts",
        }
    }

    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Tool => 0,
            Kind::Prompt => 1,
        }
    }
}

/// A change to make to the pin file, applied to the file as it is on disk when written, so
/// that two proxies writing one file keep each other's changes.
#[derive(Debug)]
enum Change {
    Item(Kind, String, Canon),
    Removed(Kind, String),
    /// A list of this kind was seen (maybe empty): the file pins it from now on.
    Listed(Kind),
    Instructions(Option<String>),
    Server(Option<String>, Option<String>),
}

/// What a listed item is, as the pin reads it.
#[derive(Debug)]
pub(crate) enum Listed {
    /// An item with a name, and its pinned members read by meaning (or why they cannot be).
    Item(String, Result<Canon, Unreadable>),
    /// Not an object with a string `name`: not the pin's to judge, kept as it came.
    Nameless,
}

#[derive(Debug)]
struct State {
    pinned: Pinned,
    /// Items left out of lists because they drifted, with what to say when they are called.
    withheld: HashMap<(Kind, String), String>,
    /// The names listed since the first page of a list (one with no cursor), per kind.
    listing: [Option<BTreeSet<String>>; 2],
    changes: Vec<Change>,
}

/// The pin of one proxied connection.
#[derive(Debug)]
pub(crate) struct Pinning {
    path: PathBuf,
    /// The path as the proxy says it.
    file: String,
    mode: PinMode,
    /// Per kind (tools, prompts), and for the instructions: recorded rather than compared,
    /// because of `--pin-update` or because the file holds nothing of it yet.
    records: [bool; 2],
    records_instructions: bool,
    state: Mutex<State>,
}

impl Pinning {
    /// Reads the pin file at `path`, or says what is wrong with it; with what to report at
    /// start.
    pub(crate) fn open(
        path: &Path,
        mode: PinMode,
        update: bool,
    ) -> Result<(Pinning, Option<String>), String> {
        let file = shown(&path.display().to_string());
        let loaded = file::load(path).map_err(|problem| {
            format!(
                "cannot use the pin file {file}: {problem}. Fix it, or move it away to pin the \
                 server anew (and review what it lists)"
            )
        })?;
        let found = loaded.is_some();
        let folder = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty());
        if !found && folder.is_some_and(|folder| !folder.is_dir()) {
            return Err(format!(
                "cannot use the pin file {file}: there is no such file, and no folder to write \
                 it in"
            ));
        }
        let pinned = loaded.unwrap_or_default();
        let records = [
            update || pinned.tools.is_none(),
            update || pinned.prompts.is_none(),
        ];
        let records_instructions = update || pinned.instructions.is_none();
        let note = if !found {
            Some(format!(
                "pin {file}: no such file; pinning what the server says about itself into it \
                 (trust on first use: review the file)"
            ))
        } else if update {
            Some(format!(
                "pin {file}: --pin-update: recording what the server lists now"
            ))
        } else {
            None
        };
        let pinning = Pinning {
            path: path.to_owned(),
            file,
            mode: if update { PinMode::Report } else { mode },
            records,
            records_instructions,
            state: Mutex::new(State {
                pinned,
                withheld: HashMap::new(),
                listing: [None, None],
                changes: Vec::new(),
            }),
        };
        Ok((pinning, note))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn enforces(&self) -> bool {
        self.mode == PinMode::Enforce
    }

    /// Whether a call to the item `name` goes on; else the error the client gets.
    pub(crate) fn may_call(&self, kind: Kind, name: &str) -> Result<(), String> {
        if !self.enforces() || self.records[kind.index()] {
            return Ok(());
        }
        let state = self.state();
        let why = match state.withheld.get(&(kind, name.to_owned())) {
            Some(why) => why.clone(),
            None if state
                .pinned
                .items(kind)
                .is_some_and(|items| items.contains_key(name)) =>
            {
                return Ok(());
            }
            None => format!("it is not in {}", self.file),
        };
        Err(format!(
            "the {} `{}` is withheld by the pin: {why}; to approve it, run the proxy once with \
             --pin-update",
            kind.noun(),
            shown(name)
        ))
    }

    /// An `initialize` answer's server name and version, and its instructions (`None` when
    /// it has none): whether to withhold the instructions, and what to report.
    pub(crate) fn initialize(
        &self,
        server: (Option<String>, Option<String>),
        instructions: Option<String>,
    ) -> (bool, Vec<String>) {
        let mut notes = Vec::new();
        let mut state = self.state();
        let (name, version) = server;
        let pinned_server = (
            state.pinned.server_name.clone(),
            state.pinned.server_version.clone(),
        );
        if pinned_server != (name.clone(), version.clone()) {
            if pinned_server != (None, None) {
                notes.push(format!(
                    "pin {}: the server says it is {} {}; {} pins {} {}",
                    self.file,
                    shown(name.as_deref().unwrap_or("(no name)")),
                    shown(version.as_deref().unwrap_or("(no version)")),
                    self.file,
                    shown(pinned_server.0.as_deref().unwrap_or("(no name)")),
                    shown(pinned_server.1.as_deref().unwrap_or("(no version)")),
                ));
            }
            if self.records_instructions || pinned_server == (None, None) {
                state.changes.push(Change::Server(name, version));
            }
        }
        let pinned = state.pinned.instructions.clone();
        let mut withhold = false;
        if self.records_instructions {
            if pinned.as_ref() != Some(&instructions) {
                if let Some(before) = &pinned {
                    notes.push(format!(
                        "pin {}: recorded the changed instructions: {}",
                        self.file,
                        diff_of_texts(before.as_deref(), instructions.as_deref())
                    ));
                }
                state.pinned.instructions = Some(instructions.clone());
                state.changes.push(Change::Instructions(instructions));
            }
        } else if let Some(before) = pinned.filter(|before| *before != instructions) {
            let what = match (&before, &instructions) {
                (_, None) => "the server no longer gives the instructions it pins",
                (None, Some(_)) => "the server gives instructions, and the file pins none",
                (Some(_), Some(_)) => "the instructions changed since they were pinned",
            };
            let diff = diff_of_texts(before.as_deref(), instructions.as_deref());
            withhold = self.enforces() && instructions.is_some();
            let done = if withhold {
                "; withheld from the client (approve them with --pin-update)"
            } else {
                ""
            };
            notes.push(format!("pin {}: {what}: {diff}{done}", self.file));
        }
        drop(state);
        notes.extend(self.write());
        (withhold, notes)
    }

    /// One page of a list of `kind`: the first (its request had no cursor) and the last (it
    /// has no `nextCursor`), or neither. Says which items go on, and what to report.
    pub(crate) fn page(
        &self,
        kind: Kind,
        first: bool,
        last: bool,
        items: &[Listed],
    ) -> (Vec<bool>, Vec<String>) {
        let mut notes = Vec::new();
        let mut state = self.state();
        let records = self.records[kind.index()];
        if first {
            state.listing[kind.index()] = Some(BTreeSet::new());
        }
        if records && state.pinned.items(kind).is_none() {
            state.pinned.items_mut(kind);
            state.changes.push(Change::Listed(kind));
        }
        let mut recorded = Vec::new();
        let mut keep = Vec::with_capacity(items.len());
        for item in items {
            let Listed::Item(name, definition) = item else {
                keep.push(true);
                continue;
            };
            if let Some(listing) = &mut state.listing[kind.index()] {
                listing.insert(name.clone());
            }
            let key = (kind, name.clone());
            let pinned = state.pinned.items(kind).and_then(|items| items.get(name));
            let drift = match (definition, pinned) {
                (Ok(now), Some(pinned)) if now == pinned => None,
                (Ok(now), Some(pinned)) => Some(Drift::Changed(changes(kind, pinned, now))),
                (Ok(_), None) => Some(Drift::New),
                (Err(why), _) => Some(Drift::Unreadable(*why)),
            };
            let Some(drift) = drift else {
                state.withheld.remove(&key);
                keep.push(true);
                continue;
            };
            let shown_name = shown(name);
            let noun = kind.noun();
            if records {
                match (definition, drift) {
                    (Ok(now), drift) => {
                        if let Drift::Changed(fields) = &drift {
                            notes.push(format!(
                                "pin {}: recorded the changed {noun} `{shown_name}`: {}",
                                self.file,
                                fields.join("; ")
                            ));
                        } else {
                            recorded.push(shown_name);
                        }
                        state
                            .pinned
                            .items_mut(kind)
                            .insert(name.clone(), now.clone());
                        state
                            .changes
                            .push(Change::Item(kind, name.clone(), now.clone()));
                    }
                    (Err(why), _) => notes.push(format!(
                        "pin {}: cannot record the {noun} `{shown_name}`: its definition {}",
                        self.file,
                        why.problem()
                    )),
                }
                keep.push(true);
                continue;
            }
            let (kept, note) = self.judge(&mut state, key, &drift);
            keep.push(kept);
            notes.push(note);
        }
        if !recorded.is_empty() {
            let count = recorded.len();
            let names = recorded
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ");
            notes.push(format!(
                "pin {}: recorded {count} {}{}: {names}",
                self.file,
                kind.noun(),
                if count == 1 { "" } else { "s" }
            ));
        }
        if last {
            self.listed_whole(&mut state, kind, &mut notes);
        }
        drop(state);
        notes.extend(self.write());
        (keep, notes)
    }

    /// An item that drifted from its pin, when not recording: whether it goes on, and what to
    /// report. Withheld items are remembered, to refuse calls to them.
    fn judge(&self, state: &mut State, key: (Kind, String), drift: &Drift) -> (bool, String) {
        let kind = key.0;
        let noun = kind.noun();
        let shown_name = shown(&key.1);
        let (what, why) = match &drift {
            Drift::New => (
                format!("the {noun} `{shown_name}` is new"),
                format!("it is new since {} was pinned", self.file),
            ),
            Drift::Changed(fields) => (
                format!(
                    "the {noun} `{shown_name}` changed since it was pinned: {}",
                    fields.join("; ")
                ),
                format!(
                    "its {} changed since it was pinned in {}",
                    field_names(fields),
                    self.file
                ),
            ),
            Drift::Unreadable(why) => (
                format!("the {noun} `{shown_name}`'s definition {}", why.problem()),
                format!("its definition {}", why.problem()),
            ),
        };
        if self.enforces() {
            state.withheld.insert(key, why);
            let asked = match kind {
                Kind::Tool => "a call to it",
                Kind::Prompt => "a request for it",
            };
            (
                false,
                format!(
                    "pin {}: {what}; withheld from the list, and {asked} is refused (approve it \
                     with --pin-update)",
                    self.file
                ),
            )
        } else {
            (true, format!("pin {}: {what}", self.file))
        }
    }

    /// A list of `kind` was seen whole: every pinned item it lacks is reported (and removed
    /// from the file when recording), and no longer withheld.
    fn listed_whole(&self, state: &mut State, kind: Kind, notes: &mut Vec<String>) {
        let records = self.records[kind.index()];
        if let Some(listed) = state.listing[kind.index()].take() {
            let gone: Vec<String> = state
                .pinned
                .items(kind)
                .map(|items| {
                    items
                        .keys()
                        .filter(|name| !listed.contains(*name))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for name in gone {
                let done = if records {
                    state.pinned.items_mut(kind).remove(&name);
                    state.changes.push(Change::Removed(kind, name.clone()));
                    "; removed it from the file"
                } else {
                    ""
                };
                notes.push(format!(
                    "pin {}: the server no longer lists the pinned {} `{}`{done}",
                    self.file,
                    kind.noun(),
                    shown(&name)
                ));
            }
            state
                .withheld
                .retain(|(of, name), _| *of != kind || listed.contains(name));
        }
    }

    /// Writes the changes made since the last write, if any, into the file as it is now on
    /// disk, under its lock; what went wrong, if anything.
    fn write(&self) -> Option<String> {
        let mut state = self.state();
        if state.changes.is_empty() {
            return None;
        }
        let changes = std::mem::take(&mut state.changes);
        let failed = |problem: String| {
            Some(format!(
                "pin {}: cannot write the file ({problem}); it is left as it was",
                self.file
            ))
        };
        let _lock = match file::lock(&self.path) {
            Ok(lock) => lock,
            Err(err) => return failed(format!("its lock file: {err}")),
        };
        let mut pinned = match file::load(&self.path) {
            Ok(pinned) => pinned.unwrap_or_default(),
            Err(problem) => return failed(problem),
        };
        for change in changes {
            match change {
                Change::Item(kind, name, definition) => {
                    pinned.items_mut(kind).insert(name, definition);
                }
                Change::Removed(kind, name) => {
                    pinned.items_mut(kind).remove(&name);
                }
                Change::Listed(kind) => {
                    pinned.items_mut(kind);
                }
                Change::Instructions(instructions) => pinned.instructions = Some(instructions),
                Change::Server(name, version) => {
                    pinned.server_name = name;
                    pinned.server_version = version;
                }
            }
        }
        pinned.at = Some(file::now());
        if let Err(err) = file::write_atomically(&self.path, &pinned.render()) {
            return failed(err.to_string());
        }
        state.pinned = pinned;
        None
    }
}

/// How a listed item differs from its pin.
#[derive(Debug)]
enum Drift {
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
fn field_names(changes: &[String]) -> String {
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

fn diff_of_texts(before: Option<&str>, after: Option<&str>) -> String {
    quoted(&short_diff(
        before.unwrap_or_default(),
        after.unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests;
