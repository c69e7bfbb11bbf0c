//! Requests waiting for their answer, and requests answered lately, found by id as the clients
//! find them ([`crate::ids`]).

use std::collections::{HashMap, VecDeque};

use crate::ids::{IdKey, meet};

/// What a lookup by id found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    None,
    One(u64),
    /// The id reads as the ids of several waiting requests: no client could tell which it
    /// answers.
    Several,
}

/// Requests waiting for an answer, each with the keys its id reads as.
#[derive(Debug)]
pub(crate) struct Requests<T> {
    waiting: HashMap<u64, (Vec<IdKey>, T)>,
    by_key: HashMap<IdKey, u64>,
    next: u64,
}

impl<T> Default for Requests<T> {
    fn default() -> Self {
        Requests {
            waiting: HashMap::new(),
            by_key: HashMap::new(),
            next: 0,
        }
    }
}

impl<T> Requests<T> {
    /// Remembers a request; refused (and `request` handed back) when its id reads as one a
    /// waiting request has.
    pub(crate) fn insert(&mut self, keys: Vec<IdKey>, request: T) -> Result<(), T> {
        if keys.iter().any(|key| self.by_key.contains_key(key)) {
            return Err(request);
        }
        let handle = self.next;
        self.next += 1;
        for key in &keys {
            self.by_key.insert(key.clone(), handle);
        }
        self.waiting.insert(handle, (keys, request));
        Ok(())
    }

    /// The waiting request an answer with an id of these keys answers.
    pub(crate) fn find(&self, keys: &[IdKey]) -> Found {
        let mut found = None;
        for key in keys {
            if let Some(&handle) = self.by_key.get(key) {
                match found {
                    Some(other) if other != handle => return Found::Several,
                    _ => found = Some(handle),
                }
            }
        }
        found.map_or(Found::None, Found::One)
    }

    /// The request found, answered: no longer waiting.
    pub(crate) fn remove(&mut self, handle: u64) -> Option<T> {
        let (keys, request) = self.waiting.remove(&handle)?;
        for key in &keys {
            self.by_key.remove(key);
        }
        debug_assert!(!self.by_key.values().any(|&other| other == handle));
        debug_assert!(self.waiting.values().all(|(other, _)| !meet(other, &keys)));
        Some(request)
    }

    pub(crate) fn get(&self, handle: u64) -> Option<&T> {
        self.waiting.get(&handle).map(|(_, request)| request)
    }

    pub(crate) fn get_mut(&mut self, handle: u64) -> Option<&mut T> {
        self.waiting.get_mut(&handle).map(|(_, request)| request)
    }

    /// Every request still waiting, in no order; none is left waiting.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.by_key.clear();
        self.waiting.drain().map(|(_, (_, request))| request)
    }
}

/// The requests answered last, at most a fixed number, each with the keys its id reads as: what
/// an answer sent again answers (a server resending the answers of a stream a client resumed,
/// which the proxy read when it first came).
#[derive(Debug)]
pub(crate) struct Answered<T> {
    /// Oldest first.
    recent: VecDeque<(Vec<IdKey>, T)>,
    capacity: usize,
}

impl<T> Answered<T> {
    /// None yet; at most `capacity` remembered.
    pub(crate) fn new(capacity: usize) -> Answered<T> {
        Answered {
            recent: VecDeque::new(),
            capacity,
        }
    }

    /// Remembers a request, answered. One remembered before whose id reads as its is forgotten
    /// (an answer naming that id now answers this one, as a client reads it), and so is the
    /// oldest when as many as are kept are remembered.
    pub(crate) fn insert(&mut self, keys: Vec<IdKey>, request: T) {
        if self.capacity == 0 {
            return;
        }
        self.forget(&keys);
        if self.recent.len() >= self.capacity {
            self.recent.pop_front();
        }
        self.recent.push_back((keys, request));
    }

    /// Forgets every remembered request whose id reads as an id of these keys.
    pub(crate) fn forget(&mut self, keys: &[IdKey]) {
        self.recent.retain(|(other, _)| !meet(other, keys));
    }

    /// The answered request an answer with an id of these keys answers (its handle is good
    /// until the next [`insert`](Self::insert)).
    pub(crate) fn find(&self, keys: &[IdKey]) -> Found {
        let mut found = None;
        for (at, (each, _)) in self.recent.iter().enumerate() {
            if meet(each, keys) {
                if found.is_some() {
                    return Found::Several;
                }
                found = Some(at as u64);
            }
        }
        found.map_or(Found::None, Found::One)
    }

    pub(crate) fn get(&self, handle: u64) -> Option<&T> {
        let at = usize::try_from(handle).ok()?;
        self.recent.get(at).map(|(_, request)| request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: &str) -> Vec<IdKey> {
        vec![IdKey::Text(id.into())]
    }

    fn number(n: &str) -> Vec<IdKey> {
        vec![IdKey::Number(n.into())]
    }

    #[test]
    fn an_id_that_reads_as_a_waiting_ones_is_refused_until_it_is_answered() {
        let mut requests = Requests::default();
        requests.insert(number("1"), "a").unwrap();
        let both = vec![IdKey::Text("1".into()), IdKey::Number("1".into())];
        assert_eq!(requests.insert(both.clone(), "b"), Err("b"));
        let Found::One(handle) = requests.find(&both) else {
            panic!("found")
        };
        assert_eq!(requests.remove(handle), Some("a"));
        assert_eq!(requests.find(&both), Found::None);
        requests.insert(both, "b").unwrap();
    }

    #[test]
    fn an_answer_that_reads_as_two_requests_finds_several() {
        let mut requests = Requests::default();
        requests.insert(text("x"), 1).unwrap();
        requests.insert(number("2"), 2).unwrap();
        assert_eq!(requests.find(&text("y")), Found::None);
        let two = vec![IdKey::Text("x".into()), IdKey::Number("2".into())];
        assert_eq!(requests.find(&two), Found::Several);
        let Found::One(handle) = requests.find(&text("x")) else {
            panic!("found")
        };
        *requests.get_mut(handle).unwrap() = 3;
        let mut left: Vec<_> = requests.drain().collect();
        left.sort_unstable();
        assert_eq!(left, [2, 3]);
        assert_eq!(requests.find(&number("2")), Found::None);
    }

    #[test]
    fn the_last_answered_are_found_and_an_id_used_again_names_the_latest() {
        let mut answered = Answered::new(2);
        answered.insert(number("1"), "a");
        answered.insert(text("x"), "b");
        let found = |answered: &Answered<&'static str>, keys: &[IdKey]| match answered.find(keys) {
            Found::One(handle) => answered.get(handle).copied(),
            Found::None => None,
            Found::Several => Some("several"),
        };
        let both = vec![IdKey::Text("1".into()), IdKey::Number("1".into())];
        assert_eq!(found(&answered, &both), Some("a"));
        assert_eq!(found(&answered, &text("x")), Some("b"));
        let two = vec![IdKey::Text("x".into()), IdKey::Number("1".into())];
        assert_eq!(found(&answered, &two), Some("several"));
        // 1 again: the first is forgotten for it, not for its age.
        answered.insert(both.clone(), "c");
        assert_eq!(found(&answered, &number("1")), Some("c"));
        assert_eq!(found(&answered, &text("x")), Some("b"));
        // A third: the oldest goes.
        answered.insert(text("y"), "d");
        assert_eq!(found(&answered, &text("x")), None);
        assert_eq!(found(&answered, &both), Some("c"));
        answered.forget(&number("1"));
        assert_eq!(found(&answered, &both), None);
        assert_eq!(found(&answered, &text("y")), Some("d"));
        let mut none = Answered::new(0);
        none.insert(text("x"), "e");
        assert_eq!(found(&none, &text("x")), None);
    }
}
