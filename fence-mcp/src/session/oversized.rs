//! A message over the size limit, from either side: never held, only skimmed as it streamed past
//! for its ids and method, so that whoever waits on it can be told.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::asked::Pending;
use super::{
    Forward, INTERNAL_ERROR, INVALID_REQUEST, NO_ID, Outcome, Session, Side, error_reply, withheld,
};
use crate::ids::{self, IdKey};
use crate::json;
use crate::requests::Found;
use crate::said::shown;

/// What a message over the size limit was, read from it as it streamed past: the top-level
/// `id` and `method` members (all of them, as a hostile message may repeat them). Nothing else
/// is kept.
#[derive(Debug, Default)]
pub(crate) struct Skimmed {
    ids: Vec<Box<RawValue>>,
    methods: Vec<Box<RawValue>>,
}

impl<'de> Deserialize<'de> for Skimmed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SkimVisitor;
        impl<'de> Visitor<'de> for SkimVisitor {
            type Value = Skimmed;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC message")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skimmed, A::Error> {
                let mut skimmed = Skimmed::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => skimmed.ids.push(map.next_value()?),
                        "method" => skimmed.methods.push(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(skimmed)
            }
        }
        deserializer.deserialize_map(SkimVisitor)
    }
}

impl Skimmed {
    /// The message's method, when it has one it names as a string, as the proxy may repeat it.
    fn method(&self) -> Option<String> {
        self.methods
            .iter()
            .find_map(|method| json::string(method))
            .map(|method| shown(&method))
    }

    /// Its ids that can be a request's, with their keys; `null` is none.
    fn ids(&self) -> impl Iterator<Item = (&RawValue, Vec<IdKey>)> {
        self.ids
            .iter()
            .filter(|id| id.get() != NO_ID)
            .filter_map(|id| ids::keys(id).ok().map(|keys| (&**id, keys)))
    }
}

/// How a message over the size limit is described.
fn too_big(size: u64, limit: usize) -> String {
    format!("{size} bytes, over the limit of {limit} bytes (raise it with --max-message-bytes)")
}

impl Session {
    /// A message from `from` over the size limit, of `size` bytes, seen only as it streamed
    /// past (`None` when it was not a JSON object):
    ///
    /// - a request gets an error back, from the proxy;
    /// - an answer gives every waiting request of the other side that it names (however many
    ///   `id` members it repeats) an error in its place: the client's requests get the proxy's
    ///   own error, and the upstream's get one saying the client's answer was dropped;
    /// - a notification, or anything else, is reported, nothing more.
    pub(crate) fn oversized(
        &self,
        from: Side,
        skimmed: Option<&Skimmed>,
        size: u64,
        limit: usize,
    ) -> Outcome {
        let mut outcome = Outcome::new(Forward::Nothing);
        let too_big = too_big(size, limit);
        let whose = match from {
            Side::Client => "from the client",
            Side::Upstream => "from the upstream",
        };
        let Some(skimmed) = skimmed else {
            outcome.notes.push(format!(
                "dropped a line {whose} that is not JSON-RPC, of {too_big}"
            ));
            return outcome;
        };
        if let Some(method) = skimmed.method() {
            match skimmed.ids().next() {
                Some((id, _)) => {
                    let code = match from {
                        Side::Client => INVALID_REQUEST,
                        Side::Upstream => INTERNAL_ERROR,
                    };
                    let message = format!("fence mcp: the request {method} is {too_big}");
                    outcome.reply.push(error_reply(id, code, &message));
                    outcome.notes.push(format!(
                        "refused a request {method} {whose}, which is {too_big}"
                    ));
                }
                None => outcome.notes.push(format!(
                    "dropped a notification {method} {whose}, which is {too_big}"
                )),
            }
            return outcome;
        }
        let mut errors = Vec::new();
        for (id, keys) in skimmed.ids() {
            let (error, note) = match from {
                Side::Upstream => self.answer_dropped(id, &keys, &too_big),
                Side::Client => self.client_answer_dropped(id, &keys, &too_big),
            };
            errors.extend(error);
            outcome.notes.push(note);
        }
        if outcome.notes.is_empty() {
            outcome.notes.push(format!(
                "dropped a message {whose} that is neither a request, a notification nor an \
                 answer, of {too_big}"
            ));
        }
        let mut errors = errors.into_iter();
        if let Some(first) = errors.next() {
            outcome.forward = Forward::Rewritten(first);
        }
        outcome.also.extend(errors);
        outcome
    }

    /// An oversized answer from the upstream naming `id`: the client's error for the request
    /// it answers, if one waits, and the note.
    fn answer_dropped(
        &self,
        id: &RawValue,
        keys: &[IdKey],
        too_big: &str,
    ) -> (Option<Vec<u8>>, String) {
        let mut state = self.state();
        let pending: Option<Pending> = match state.client.find(keys) {
            Found::One(handle) => state.client.remove(handle),
            Found::None | Found::Several => None,
        };
        drop(state);
        match pending {
            Some(pending) => {
                let what = format!(
                    "dropped the answer to {}, which is {too_big}",
                    pending.describe()
                );
                (Some(withheld(&pending, &what)), what)
            }
            None => (
                None,
                format!(
                    "dropped an answer for id {}, which no request is waiting on, of {too_big}",
                    shown(id.get())
                ),
            ),
        }
    }

    /// An oversized answer from the client naming `id`: the error the upstream gets in its
    /// place, and the note.
    fn client_answer_dropped(
        &self,
        id: &RawValue,
        keys: &[IdKey],
        too_big: &str,
    ) -> (Option<Vec<u8>>, String) {
        let mut state = self.state();
        let method = match state.server.find(keys) {
            Found::One(handle) => state.server.remove(handle),
            Found::None | Found::Several => None,
        };
        drop(state);
        let what = method.map_or_else(
            || "an answer from the client".to_owned(),
            |method| format!("the client's answer to {}", shown(&method)),
        );
        let what = format!("dropped {what}, which is {too_big}");
        let error = error_reply(id, INTERNAL_ERROR, &format!("fence mcp: {what}"));
        (Some(error), what)
    }
}
