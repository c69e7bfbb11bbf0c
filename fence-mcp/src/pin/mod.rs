//! Tool-definition pinning: what a server says about itself (its tools, its prompts, its
//! instructions, in answer to `initialize` or `server/discover`), recorded in a file the first
//! time it is seen, and compared by meaning with every list page and every such answer after
//! that.
//!
//! - **Enforce** (the default): an item that is new, or whose definition changed, is left out
//!   of the list the client receives, and a call to it is refused by the proxy; changed
//!   instructions are withheld.
//! - **Report**: everything is forwarded; drift is reported.
//! - **Update**: everything is forwarded, and what the server lists now is recorded.
//!
//! A kind of item (tools, prompts, the instructions) the file holds nothing of yet is recorded
//! the first time it is seen (trust on first use), for the whole session that first saw it:
//! one [`PinFile`] is shared by every session of a proxy (behind an HTTP front, one per
//! client), and each session has a [`Pinning`] of its own, which decides once, when it first
//! sees a kind, whether it records that kind or is held to the file. So a later session of the
//! run that first wrote the file is held to it, as a later run would be.

mod canon;
mod drift;
mod file;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub(crate) use canon::Canon;
pub(crate) use drift::definition;
use drift::{Drift, changes, diff_of_texts, field_names};
use file::Pinned;

use crate::json::Unreadable;
use crate::options::PinMode;
use crate::said::shown;

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

/// What every session of a proxy shares of the pin: the file as last read or written, and the
/// changes not written yet.
#[derive(Debug)]
struct State {
    pinned: Pinned,
    changes: Vec<Change>,
}

/// The pin file of one proxy, shared by its sessions.
#[derive(Debug)]
pub(crate) struct PinFile {
    path: PathBuf,
    /// The path as the proxy says it.
    file: String,
    mode: PinMode,
    /// `--pin-update`: every session records what its server says.
    update: bool,
    state: Mutex<State>,
}

/// What one session has decided and seen of the pin.
#[derive(Debug, Default)]
struct Seen {
    /// Per kind (tools, prompts), and for the instructions, once decided: recorded rather than
    /// compared, because of `--pin-update` or because the file held nothing of it when the
    /// session first saw it.
    records: [Option<bool>; 2],
    records_instructions: Option<bool>,
    /// Items left out of this session's lists because they drifted, with what to say when they
    /// are called.
    withheld: HashMap<(Kind, String), String>,
    /// The names listed since the first page of a list (one with no cursor), per kind.
    listing: [Option<BTreeSet<String>>; 2],
    /// What the client is to be told of what was withheld since [`Pinning::take_withheld`]
    /// was last called: each in the words of a refused call's error.
    told: Vec<String>,
}

/// The pin of one session: its own server's lists, held to (or recorded into) the shared file.
#[derive(Debug)]
pub(crate) struct Pinning {
    pin: Arc<PinFile>,
    /// Whether what it decides holds for the whole session; else each list, and each
    /// `initialize`, decides anew (the stateless server, a session of every client's).
    sticky: bool,
    seen: Mutex<Seen>,
}

impl PinFile {
    /// Reads the pin file at `path`, or says what is wrong with it; with what to report at
    /// start.
    pub(crate) fn open(
        path: &Path,
        mode: PinMode,
        update: bool,
    ) -> Result<(PinFile, Option<String>), String> {
        let file = shown(&path.display().to_string());
        let loaded = file::load(path).map_err(|problem| {
            format!(
                "cannot use the pin file {file}: {problem}. Fix it, or move it away to pin the \
                 server anew (and review what it lists)"
            )
        })?;
        let found = loaded.is_some();
        let created = if found {
            None
        } else {
            file::make_folder(path).map_err(|problem| {
                format!("cannot use the pin file {file}: there is no such file, and {problem}")
            })?
        };
        let pinned = loaded.unwrap_or_default();
        let note = if !found {
            let created = created.map_or_else(String::new, |folder| {
                let folder = shown(&folder.display().to_string());
                format!(" (made its folder {folder}, mode 0700)")
            });
            Some(format!(
                "pin {file}: no such file{created}; pinning what the server says about itself into \
                 it (trust on first use: review the file)"
            ))
        } else if update {
            Some(format!(
                "pin {file}: --pin-update: recording what the server lists now"
            ))
        } else {
            None
        };
        let pin = PinFile {
            path: path.to_owned(),
            file,
            mode: if update { PinMode::Report } else { mode },
            update,
            state: Mutex::new(State {
                pinned,
                changes: Vec::new(),
            }),
        };
        Ok((pin, note))
    }

    /// The pin of a new session, whose decisions hold for the whole session.
    pub(crate) fn session(self: &Arc<PinFile>) -> Pinning {
        Pinning {
            pin: self.clone(),
            sticky: true,
            seen: Mutex::default(),
        }
    }

    /// The pin of a session many clients share (the stateless server's): each list and each
    /// `initialize` decides anew whether it records or is held to the file.
    #[cfg(any(feature = "http", test))]
    pub(crate) fn shared_session(self: &Arc<PinFile>) -> Pinning {
        Pinning {
            sticky: false,
            ..self.session()
        }
    }

    /// What the sessions share; a panic elsewhere leaves it consistent.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Pinning {
    /// Reads the pin file at `path` for one session alone (as a stdio proxy has); with what to
    /// report at start.
    #[cfg(test)]
    pub(crate) fn open(
        path: &Path,
        mode: PinMode,
        update: bool,
    ) -> Result<(Pinning, Option<String>), String> {
        let (pin, note) = PinFile::open(path, mode, update)?;
        Ok((Arc::new(pin).session(), note))
    }

    /// What the sessions share, locked after [`Pinning::seen`] when both are.
    fn state(&self) -> MutexGuard<'_, State> {
        self.pin.state()
    }

    /// What this session decided and saw.
    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a drift is withheld (rather than only reported).
    fn enforces(&self) -> bool {
        self.pin.mode == PinMode::Enforce
    }

    /// Whether the session records `kind` (rather than compare it with the file), as decided
    /// or, undecided, as it would decide now; `decide` fixes an undecided answer (for a
    /// sticky session).
    fn records(&self, seen: &mut Seen, state: &State, kind: Kind, decide: bool) -> bool {
        if let Some(records) = seen.records[kind.index()] {
            return records;
        }
        let now = self.pin.update || state.pinned.items(kind).is_none();
        if decide {
            seen.records[kind.index()] = Some(now);
        }
        now
    }

    /// Whether the session records a page of `kind` (the `first` of its list, or the `last`),
    /// deciding it if undecided; a session that is not sticky decides each list anew.
    fn records_page(
        &self,
        seen: &mut Seen,
        state: &State,
        kind: Kind,
        (first, last): (bool, bool),
    ) -> bool {
        if first && !self.sticky {
            seen.records[kind.index()] = None;
        }
        let records = self.records(seen, state, kind, true);
        if last && !self.sticky {
            seen.records[kind.index()] = None;
        }
        records
    }

    /// Whether a call to the item `name` goes on; else the error the client gets.
    pub(crate) fn may_call(&self, kind: Kind, name: &str) -> Result<(), String> {
        if !self.enforces() {
            return Ok(());
        }
        let mut seen = self.seen();
        let state = self.state();
        if self.records(&mut seen, &state, kind, false) {
            return Ok(());
        }
        let why = match seen.withheld.get(&(kind, name.to_owned())) {
            Some(why) => why.clone(),
            None if state
                .pinned
                .items(kind)
                .is_some_and(|items| items.contains_key(name)) =>
            {
                return Ok(());
            }
            None => format!("it is not in {}", self.pin.file),
        };
        Err(withheld_words(kind, name, &why))
    }

    /// What was withheld since the last call, each said as a refused call's error says it, for
    /// the client (which stderr does not reach).
    pub(crate) fn take_withheld(&self) -> Vec<String> {
        std::mem::take(&mut self.seen().told)
    }

    /// An `initialize` (or `server/discover`) answer's server name and version, and its
    /// instructions (`None` when it has none): whether to withhold the instructions, and what
    /// to report.
    pub(crate) fn initialize(
        &self,
        server: (Option<String>, Option<String>),
        instructions: Option<String>,
    ) -> (bool, Vec<String>) {
        let mut notes = Vec::new();
        let mut seen = self.seen();
        let mut state = self.state();
        let records_instructions = match seen.records_instructions {
            Some(records) if self.sticky => records,
            _ => self.pin.update || state.pinned.instructions.is_none(),
        };
        seen.records_instructions = Some(records_instructions);
        drop(seen);
        let (name, version) = server;
        let pinned_server = (
            state.pinned.server_name.clone(),
            state.pinned.server_version.clone(),
        );
        if pinned_server != (name.clone(), version.clone()) {
            if pinned_server != (None, None) {
                notes.push(format!(
                    "pin {}: the server says it is {} {}; {} pins {} {}",
                    self.pin.file,
                    shown(name.as_deref().unwrap_or("(no name)")),
                    shown(version.as_deref().unwrap_or("(no version)")),
                    self.pin.file,
                    shown(pinned_server.0.as_deref().unwrap_or("(no name)")),
                    shown(pinned_server.1.as_deref().unwrap_or("(no version)")),
                ));
            }
            if records_instructions || pinned_server == (None, None) {
                state.changes.push(Change::Server(name, version));
            }
        }
        let pinned = state.pinned.instructions.clone();
        let mut withhold = false;
        let mut told = None;
        if records_instructions {
            if pinned.as_ref() != Some(&instructions) {
                if let Some(before) = &pinned {
                    notes.push(format!(
                        "pin {}: recorded the changed instructions: {}",
                        self.pin.file,
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
            told = withhold.then(|| {
                format!(
                    "the server's instructions are withheld by the pin {}: {what}; to approve \
                     them, run the proxy once with --pin-update",
                    self.pin.file
                )
            });
            let done = if withhold {
                "; withheld from the client (approve them with --pin-update)"
            } else {
                ""
            };
            notes.push(format!("pin {}: {what}: {diff}{done}", self.pin.file));
        }
        drop(state);
        if let Some(told) = told {
            self.seen().told.push(told);
        }
        notes.extend(self.pin.write());
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
        let mut seen = self.seen();
        let mut state = self.state();
        let records = self.records_page(&mut seen, &state, kind, (first, last));
        if first {
            seen.listing[kind.index()] = Some(BTreeSet::new());
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
            if let Some(listing) = &mut seen.listing[kind.index()] {
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
                seen.withheld.remove(&key);
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
                                self.pin.file,
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
                        self.pin.file,
                        why.problem()
                    )),
                }
                keep.push(true);
                continue;
            }
            let (kept, note) = self.judge(&mut seen, key, &drift);
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
                self.pin.file,
                kind.noun(),
                if count == 1 { "" } else { "s" }
            ));
        }
        if last {
            listed_whole(
                &self.pin.file,
                records,
                &mut seen,
                &mut state,
                kind,
                &mut notes,
            );
        }
        drop(state);
        drop(seen);
        notes.extend(self.pin.write());
        (keep, notes)
    }

    /// An item that drifted from its pin, when not recording: whether it goes on, and what to
    /// report. Withheld items are remembered, to refuse calls to them.
    fn judge(&self, seen: &mut Seen, key: (Kind, String), drift: &Drift) -> (bool, String) {
        let kind = key.0;
        let noun = kind.noun();
        let shown_name = shown(&key.1);
        let (what, why) = match &drift {
            Drift::New => (
                format!("the {noun} `{shown_name}` is new"),
                format!("it is new since {} was pinned", self.pin.file),
            ),
            Drift::Changed(fields) => (
                format!(
                    "the {noun} `{shown_name}` changed since it was pinned: {}",
                    fields.join("; ")
                ),
                format!(
                    "its {} changed since it was pinned in {}",
                    field_names(fields),
                    self.pin.file
                ),
            ),
            Drift::Unreadable(why) => (
                format!("the {noun} `{shown_name}`'s definition {}", why.problem()),
                format!("its definition {}", why.problem()),
            ),
        };
        if self.enforces() {
            seen.told.push(withheld_words(kind, &key.1, &why));
            seen.withheld.insert(key, why);
            let asked = match kind {
                Kind::Tool => "a call to it",
                Kind::Prompt => "a request for it",
            };
            (
                false,
                format!(
                    "pin {}: {what}; withheld from the list, and {asked} is refused (approve it \
                     with --pin-update)",
                    self.pin.file
                ),
            )
        } else {
            (true, format!("pin {}: {what}", self.pin.file))
        }
    }
}

/// What the client is told of the item `name` of `kind`, withheld because of `why`: the error
/// of a call to it, and the warning a client that enabled logging receives.
fn withheld_words(kind: Kind, name: &str, why: &str) -> String {
    format!(
        "the {} `{}` is withheld by the pin: {why}; to approve it, run the proxy once with \
         --pin-update",
        kind.noun(),
        shown(name)
    )
}

impl PinFile {
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

/// A list of `kind` was seen whole by a session (`seen`; `records`: whether it records the
/// kind): every pinned item it lacks is reported (and removed from the file when recording),
/// and no longer withheld in that session.
fn listed_whole(
    file: &str,
    records: bool,
    seen: &mut Seen,
    state: &mut State,
    kind: Kind,
    notes: &mut Vec<String>,
) {
    if let Some(listed) = seen.listing[kind.index()].take() {
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
                "pin {file}: the server no longer lists the pinned {} `{}`{done}",
                kind.noun(),
                shown(&name)
            ));
        }
        seen.withheld
            .retain(|(of, name), _| *of != kind || listed.contains(name));
    }
}

#[cfg(test)]
mod tests;
