//! An error the upstream sent with `"id": null` in its HTTP response to requests: a Streamable
//! HTTP server's answer to a POST it refused before reading the message in it ("Invalid or
//! missing session ID", "Unsupported protocol version …"), usually with a 400 or a 404. The
//! response answers its POST, so the error is the answer of that POST's requests: each one
//! still waiting gets it, under its own id, every string in it neutralised. Over stdio no
//! message is tied to a request but by its id, so there such an error answers nothing, and is
//! dropped.

use serde_json::value::RawValue;

use super::{Forward, NO_ID, Outcome, Session};
use crate::ids;
use crate::json::{self, Members};
use crate::requests::Found;
use crate::said::excerpt;

impl Session {
    /// The upstream's message `message`, one of the messages of its HTTP response to a POST
    /// that carried the requests `requests` (their ids as sent): when it is an error whose id
    /// is `null`, an answer for each of those requests still waiting (a cancelled one is
    /// answered by nothing, as by [`abandon`](Session::abandon)), each the upstream's error
    /// object (its `code`, an integer, and its `message`, a string, and anything else it holds)
    /// with every string and key in it neutralised, under the request's own id. With `shown`
    /// (the message is part of an error status's body, which clients show and do not read as
    /// messages), such an error no request waits on goes on too, as it came but neutralised.
    /// `None` for any other message, or when nothing of it goes on: the message is then read
    /// as any other.
    pub(crate) fn unnamed_error(
        &self,
        message: &[u8],
        requests: &[Box<RawValue>],
        shown: bool,
    ) -> Option<Outcome> {
        let text = std::str::from_utf8(message).ok()?;
        let members = serde_json::from_str::<Members<'_>>(text).ok()?;
        let one = |key: &str| members.one(key).ok();
        if one("id")?.map(RawValue::get) != Some(NO_ID)
            || one("method")?.is_some()
            || one("result")?.is_some()
        {
            return None;
        }
        let error = one("error")??;
        let fields = Members::of(error)?;
        let code = fields.one("code").ok()??;
        if code.get().parse::<i64>().is_err() || fields.string("message").is_none() {
            return None;
        }
        let mut neutralised = Vec::with_capacity(error.get().len());
        json::neutralise_into(error, &mut neutralised).ok()?;
        let mut answers = Vec::new();
        let mut answered = Vec::new();
        for id in requests {
            let Some(pending) = self.take_exactly(id) else {
                continue;
            };
            if pending.cancelled {
                continue;
            }
            let mut answer = Vec::with_capacity(neutralised.len() + 48);
            answer.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            answer.extend_from_slice(pending.id.get().as_bytes());
            answer.extend_from_slice(br#","error":"#);
            answer.extend_from_slice(&neutralised);
            answer.push(b'}');
            answers.push(answer);
            answered.push(pending.describe());
        }
        let mut answers = answers.into_iter();
        let mut outcome = match answers.next() {
            Some(first) => Outcome::new(Forward::Rewritten(first)),
            None if shown => {
                let mut out = Vec::with_capacity(message.len());
                members
                    .write_each(&mut out, |name, value, out| {
                        if name == "error" {
                            out.extend_from_slice(&neutralised);
                            Ok::<_, json::Unreadable>(true)
                        } else {
                            json::neutralise_into(value, out)
                        }
                    })
                    .ok()?;
                return Some(Outcome::new(Forward::Rewritten(out)));
            }
            None => return None,
        };
        outcome.also.extend(answers);
        outcome.notes.push(format!(
            "passed the upstream's error with no id, {}, on to {}: the request its HTTP \
             response answered",
            excerpt(error.get().as_bytes()),
            answered.join(", ")
        ));
        Some(outcome)
    }

    /// The waiting request with exactly the id `id`, no longer waiting; `None` when none is.
    pub(super) fn take_exactly(&self, id: &RawValue) -> Option<super::Pending> {
        let keys = ids::keys(id).ok()?;
        let mut state = self.state();
        let Found::One(handle) = state.client.find(&keys) else {
            return None;
        };
        if state.client.get_mut(handle)?.id.get() != id.get() {
            return None;
        }
        state.client.remove(handle)
    }
}
