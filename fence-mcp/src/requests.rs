//! Requests waiting for their answer, found by id as the clients find them ([`crate::ids`]).

use std::collections::HashMap;

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
}
