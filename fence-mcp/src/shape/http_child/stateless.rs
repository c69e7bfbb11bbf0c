//! The stateless era's requests (2026-07-28) behind `--listen -- SERVER`: the requests of every
//! client share one server, and so one id space and one space of progress tokens, while each
//! client counts its ids from the start. So the proxy gives each stateless request an id of its
//! own, random (none can be guessed from another, nor named by another client), and its
//! progress token the same; and it routes back only what names an id or a token it gave.
//!
//! What it cannot read exactly as the server will, it does not send: a request with two of a
//! member it renumbers (`id`, `params`, `params._meta`, `params._meta.progressToken`), where
//! the server reads one copy and the proxy would have renumbered another, is refused. A
//! `notifications/cancelled` is passed on only for a request of its own POST: a stateless POST
//! is tied to no other, so any other request it names may be another client's (a stateless
//! client cancels by closing the request's stream, which the proxy turns into a cancellation).

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::ids;
use crate::json::{Members, elements};
use crate::said::shown;
use crate::session::error_reply;
use crate::wire::message::spliced;

/// JSON-RPC's "invalid request", for a request the proxy refuses.
const INVALID_REQUEST: i64 = -32600;

/// The largest id the proxy gives: 2⁵³ − 1, the largest integer every client and server reads
/// exactly (JavaScript reads numbers as doubles).
const MAX_ID: u64 = (1 << 53) - 1;

/// A stateless POST's body as the shared server is to see it: its requests' ids and progress
/// tokens the proxy's own, without the requests it refused and the notifications it dropped.
#[derive(Debug)]
pub(super) struct Renumbered<'a> {
    /// What goes on to the session; `None` when nothing is left.
    pub(super) body: Option<Cow<'a, [u8]>>,
    replaced: Vec<Replaced>,
    /// The proxy's errors for the requests it refused, to the clients' own ids.
    pub(super) refused: Vec<Vec<u8>>,
    /// What stderr says of what was dropped.
    pub(super) notes: Vec<String>,
}

/// What the proxy replaced in one request, as its client wrote it (exact JSON), and the id it
/// wrote in its place: for the request's id, and for its progress token when it has one.
#[derive(Debug, Clone)]
pub(super) struct Replaced {
    pub(super) new: String,
    pub(super) id: String,
    pub(super) token: Option<String>,
    /// The request is a `subscriptions/listen`, whose notifications name it by its id.
    pub(super) listens: bool,
}

/// What becomes of one message of a body.
enum Fate<'m> {
    /// Goes on with these parts of it replaced (none: as it came).
    On(Vec<(&'m RawValue, String)>),
    /// Refused: the error the client gets.
    Refused(Vec<u8>),
    /// Dropped: what stderr says.
    Dropped(String),
}

impl<'a> Renumbered<'a> {
    /// `body` with each request's id (a message with a `method` and an id the session takes)
    /// replaced by one `next` gives, and its progress token by the same; a request that spells
    /// a member it renumbers twice refused; a cancellation mapped to the id of the request of
    /// the same body it names, or dropped. A body the proxy cannot read as JSON-RPC goes on as
    /// it came, for the session to refuse.
    pub(super) fn new(body: &'a [u8], mut next: impl FnMut() -> u64) -> Renumbered<'a> {
        let mut renumbered = Renumbered {
            body: Some(Cow::Borrowed(body)),
            replaced: Vec::new(),
            refused: Vec::new(),
            notes: Vec::new(),
        };
        let Some(text) = std::str::from_utf8(body).ok() else {
            return renumbered;
        };
        let Ok(raw) = serde_json::from_str::<&RawValue>(text) else {
            return renumbered;
        };
        let batch = raw.get().starts_with('[');
        let messages = if batch {
            match elements(raw) {
                Some(messages) => messages,
                None => return renumbered,
            }
        } else {
            vec![raw]
        };
        let mut fates: Vec<Fate<'_>> = messages
            .iter()
            .map(|message| renumbered.request(message, &mut next))
            .collect();
        for (message, fate) in messages.iter().zip(&mut fates) {
            if let Some(cancellation) = renumbered.cancellation(message) {
                *fate = cancellation;
            }
        }
        if fates
            .iter()
            .all(|fate| matches!(fate, Fate::On(parts) if parts.is_empty()))
        {
            return renumbered;
        }
        let mut kept = Vec::with_capacity(messages.len());
        for (message, fate) in messages.into_iter().zip(fates) {
            match fate {
                Fate::On(parts) => kept.push(spliced(message.get(), parts)),
                Fate::Refused(error) => renumbered.refused.push(error),
                Fate::Dropped(note) => renumbered.notes.push(note),
            }
        }
        renumbered.body = match (batch, kept.len()) {
            (_, 0) => None,
            (false, _) => kept.pop().map(Cow::Owned),
            (true, _) => Some(Cow::Owned(crate::wire::batch(&kept))),
        };
        renumbered
    }

    /// What becomes of `message` if it is a request: renumbered, refused, or (anything else)
    /// left as it came.
    fn request<'m>(&mut self, message: &'m RawValue, next: &mut impl FnMut() -> u64) -> Fate<'m> {
        let as_it_came = Fate::On(Vec::new());
        // A message the proxy cannot read as an object is the session's to refuse.
        let Some(members) = Members::of(message) else {
            return as_it_came;
        };
        if !members.0.iter().any(|(key, _)| key == "method") {
            return as_it_came;
        }
        let Ok(id) = members.one("id") else {
            return refuse(None, "two `id` members");
        };
        // A notification, or an id the session refuses (no integer, say): not renumbered.
        let Some(id) = id.filter(|id| id.get() != "null" && ids::request_keys(id).is_ok()) else {
            return as_it_came;
        };
        let token = match token_of(&members) {
            Ok(token) => token,
            Err(problem) => return refuse(Some(id), problem),
        };
        let new = next().to_string();
        let mut parts = vec![(id, new.clone())];
        parts.extend(token.map(|token| (token, new.clone())));
        self.replaced.push(Replaced {
            new,
            id: id.get().to_owned(),
            token: token.map(|token| token.get().to_owned()),
            listens: members.string("method").as_deref() == Some("subscriptions/listen"),
        });
        Fate::On(parts)
    }

    /// What becomes of `message` if it is a client's `notifications/cancelled`: mapped to the
    /// proxy's id for the request of this body it names, or dropped; `None` for anything else.
    fn cancellation<'m>(&self, message: &'m RawValue) -> Option<Fate<'m>> {
        let members = Members::of(message)?;
        if members.string("method").as_deref() != Some("notifications/cancelled")
            || !members
                .one("id")
                .is_ok_and(|id| id.is_none_or(|id| id.get() == "null"))
        {
            return None;
        }
        let named = members
            .one("params")
            .ok()
            .flatten()
            .and_then(|params| Members::read(params).ok().flatten())
            .and_then(|params| params.one("requestId").ok().flatten());
        let Some(named) = named else {
            return Some(Fate::Dropped(
                "dropped a stateless client's notifications/cancelled: its `params.requestId` \
                 cannot be read as one id"
                    .to_owned(),
            ));
        };
        let keys = ids::keys(named).ok();
        let mut own = self.replaced.iter().filter(|replaced| {
            let Some(keys) = &keys else { return false };
            serde_json::from_str::<&RawValue>(&replaced.id)
                .ok()
                .and_then(|id| ids::keys(id).ok())
                .is_some_and(|theirs| ids::meet(keys, &theirs))
        });
        match (own.next(), own.next()) {
            (Some(replaced), None) => Some(Fate::On(vec![(named, replaced.new.clone())])),
            _ => Some(Fate::Dropped(format!(
                "dropped a stateless client's notifications/cancelled for the request {}: a \
                 stateless POST is tied to no other, so the proxy cannot tell whether that \
                 request is the client's own (a stateless client cancels a request by closing \
                 its stream)",
                shown(named.get())
            ))),
        }
    }

    /// What the proxy replaced in the request it gave the id `new`.
    pub(super) fn replaced(&self, new: &str) -> Option<&Replaced> {
        self.replaced.iter().find(|replaced| replaced.new == new)
    }
}

/// A request's progress token, `params._meta.progressToken` (`None` when it has none); which
/// member appears twice or cannot be read, when one does.
fn token_of<'a>(members: &Members<'a>) -> Result<Option<&'a RawValue>, &'static str> {
    let Some(params) = members.one("params").map_err(|_| "two `params` members")? else {
        return Ok(None);
    };
    let Some(params) = Members::read(params).map_err(|_| "`params` that cannot be read")? else {
        return Ok(None);
    };
    let Some(meta) = params
        .one("_meta")
        .map_err(|_| "two `params._meta` members")?
    else {
        return Ok(None);
    };
    let Some(meta) = Members::read(meta).map_err(|_| "`params._meta` that cannot be read")? else {
        return Ok(None);
    };
    let token = meta
        .one("progressToken")
        .map_err(|_| "two `params._meta.progressToken` members")?;
    Ok(token.filter(|token| token.get() != "null"))
}

/// The error for a stateless request with `problem` (`id`: its id, when it has one that can
/// be read).
fn refuse<'m>(id: Option<&RawValue>, problem: &str) -> Fate<'m> {
    let message = format!(
        "fence mcp: a stateless request with {problem}: the server reads one copy and the \
         proxy cannot tell which, so it does not send it; send each member once"
    );
    let null = RawValue::NULL;
    Fate::Refused(error_reply(id.unwrap_or(null), INVALID_REQUEST, &message))
}

/// A new id for a stateless request: random, from 1 to 2⁵³ − 1.
pub(super) fn fresh_id() -> u64 {
    let random = getrandom::u64().unwrap_or_else(|_| unrandom());
    (random & MAX_ID).max(1)
}

/// Without the system's randomness: distinct within this process, though not unguessable.
fn unrandom() -> u64 {
    /// Moved on by a large odd step for each id, so two ids of one nanosecond differ.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    // The low 64 bits of the time, mixed (SplitMix64's finaliser) with a counter.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the low bits are what vary"
    )]
    let mut mixed = (nanos as u64)
        ^ NEXT.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^ (mixed >> 31)
}

/// What a server message names that routing a stateless server's messages goes by: a progress
/// token, or a subscription.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Named {
    /// Nothing of the kind.
    Nothing,
    /// This id or token, as its exact JSON.
    This(String),
    /// The message may name one, but the proxy cannot read which: why.
    Unreadable(&'static str),
}

/// The progress token a server's `notifications/progress` names, read strictly: a
/// `params` or a token spelled twice, or that cannot be read, is [`Named::Unreadable`].
pub(super) fn progress_named(members: &Members<'_>) -> Named {
    if members.string("method").as_deref() != Some("notifications/progress") {
        return Named::Nothing;
    }
    let params = match members.one("params") {
        Ok(Some(params)) => params,
        Ok(None) => return Named::Unreadable("it has no `params`"),
        Err(_) => return Named::Unreadable("it has two `params` members"),
    };
    let Ok(Some(params)) = Members::read(params) else {
        return Named::Unreadable("its `params` cannot be read as an object");
    };
    match params.one("progressToken") {
        Ok(Some(token)) => Named::This(token.get().to_owned()),
        Ok(None) => Named::Unreadable("it has no `progressToken`"),
        Err(_) => Named::Unreadable("it has two `progressToken` members"),
    }
}

/// The subscription a server's notification names in
/// `params._meta["io.modelcontextprotocol/subscriptionId"]`, read strictly.
pub(super) fn subscription_named(members: &Members<'_>) -> Named {
    if members.0.iter().all(|(key, _)| key != "method") {
        return Named::Nothing;
    }
    let params = match members.one("params") {
        Ok(Some(params)) => params,
        Ok(None) => return Named::Nothing,
        Err(_) => return Named::Unreadable("it has two `params` members"),
    };
    let meta = match Members::read(params) {
        Ok(Some(params)) => match params.one("_meta") {
            Ok(Some(meta)) => meta,
            Ok(None) => return Named::Nothing,
            Err(_) => return Named::Unreadable("it has two `params._meta` members"),
        },
        Ok(None) => return Named::Nothing,
        Err(_) => return Named::Unreadable("its `params` cannot be read"),
    };
    match Members::read(meta) {
        Ok(Some(meta)) => match meta.one(crate::wire::message::SUBSCRIPTION_ID_KEY) {
            Ok(Some(id)) => Named::This(id.get().to_owned()),
            Ok(None) => Named::Nothing,
            Err(_) => Named::Unreadable("it names two subscriptions"),
        },
        Ok(None) => Named::Nothing,
        Err(_) => Named::Unreadable("its `params._meta` cannot be read"),
    }
}

#[cfg(test)]
mod tests;
