//! The queue of one response: what a session's server sent (a message for a JSON body, an
//! event for a stream) waiting for the client of one POST's answer, or of the session's GET
//! stream, to read it. It is bounded in bytes, not in
//! messages, so a stream its client does not read holds at most [`STREAM_BYTES`] (or one
//! larger message) whatever the server sends; past that, the thread reading the server's
//! output waits, and so does the server, as a stdio server waits for a stdio client that does
//! not read.
//!
//! The thread reading the server sends (and may block, for as long as it is told: a server
//! many clients share waits for no one of them for long); the response's body receives (and
//! awaits). Either end may go: a closed response gives each message sent to it back to its
//! sender, which routes it elsewhere or drops it; the last sender gone ends the body.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::Notify;

/// How many bytes of messages may wait on one stream for its client to read them; a message
/// larger than this waits alone.
pub(crate) const STREAM_BYTES: usize = 1 << 20;

/// What a waiting message counts for besides its bytes (its allocation, its place in the
/// queue), so that a stream of tiny messages is bounded too: at most 4,096 wait at once.
pub(super) const MESSAGE_COST: usize = STREAM_BYTES / 4096;

/// What a waiting item counts for against [`STREAM_BYTES`]: its bytes and [`MESSAGE_COST`].
pub(super) fn cost(item: &Bytes) -> usize {
    item.len() + MESSAGE_COST
}

/// What waits on one queue, and who is still at either end.
#[derive(Debug, Default)]
struct State {
    messages: VecDeque<Bytes>,
    /// What the waiting messages count for.
    bytes: usize,
    senders: usize,
    /// The receiver is gone, or the queue was closed: nothing more is taken.
    closed: bool,
}

/// One queue, shared by its ends.
#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when room is made, or the queue closes: for blocked senders.
    room: Condvar,
    /// Signalled when a message arrives, or the last sender goes: for the receiver.
    ready: Notify,
}

impl Shared {
    /// The queue's state; a panic elsewhere leaves it consistent.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending end, kept by the routes: cloned for each request of one response.
#[derive(Debug)]
pub(super) struct Sender(Arc<Shared>);

/// The receiving end, read by one response's body.
#[derive(Debug)]
pub(super) struct Receiver(Arc<Shared>);

/// A new, empty queue.
pub(super) fn queue() -> (Sender, Receiver) {
    let shared = Arc::new(Shared::default());
    shared.state().senders = 1;
    (Sender(shared.clone()), Receiver(shared))
}

/// Why an item was not queued: it is given back, to be routed elsewhere or dropped.
#[derive(Debug)]
pub(super) enum Unsent {
    /// The response is gone, or the queue was closed.
    Closed(Bytes),
    /// The queue stayed full for the patience the sender gave: it is closed now.
    Stalled(Bytes),
}

impl Sender {
    /// Queues `item`, blocking the calling thread while the queue is full, for at most
    /// `patience` when there is one (then the queue is closed: its client reads nothing); gives
    /// it back once the response is gone (or the queue closed).
    pub(super) fn send(&self, item: Bytes, patience: Option<Duration>) -> Result<(), Unsent> {
        let cost = cost(&item);
        let deadline = patience.map(|patience| Instant::now() + patience);
        let mut state = self.0.state();
        while !state.closed && state.bytes > 0 && state.bytes + cost > STREAM_BYTES {
            let Some(deadline) = deadline else {
                state = self
                    .0
                    .room
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(state);
                self.close();
                return Err(Unsent::Stalled(item));
            }
            state = self
                .0
                .room
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if state.closed {
            return Err(Unsent::Closed(item));
        }
        state.bytes += cost;
        state.messages.push_back(item);
        drop(state);
        self.0.ready.notify_one();
        Ok(())
    }

    /// Queues `item` without waiting for room, for what the proxy itself puts on a response
    /// (its own answers, a priming event, the events a resumed stream replays: each bounded
    /// by what it answers or by the replay's bound); dropped when the response is gone.
    pub(super) fn put(&self, item: Bytes) {
        let mut state = self.0.state();
        if state.closed {
            return;
        }
        state.bytes += cost(&item);
        state.messages.push_back(item);
        drop(state);
        self.0.ready.notify_one();
    }

    /// Whether the response is gone (or the queue closed).
    pub(super) fn is_closed(&self) -> bool {
        self.0.state().closed
    }

    /// Closes the queue: a sender waiting for room gets its message back, and the response
    /// ends once its client has read what already waits. For a session that ends while its
    /// client does not read.
    pub(super) fn close(&self) {
        self.0.state().closed = true;
        self.0.room.notify_all();
        self.0.ready.notify_one();
    }
}

impl Clone for Sender {
    fn clone(&self) -> Sender {
        self.0.state().senders += 1;
        Sender(self.0.clone())
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.senders -= 1;
        let last = state.senders == 0;
        drop(state);
        if last {
            self.0.ready.notify_one();
        }
    }
}

impl Receiver {
    /// The next item; `None` once every sender is gone, or the queue closed, and nothing
    /// waits.
    pub(super) async fn recv(&mut self) -> Option<Bytes> {
        loop {
            {
                let mut state = self.0.state();
                if let Some(item) = state.messages.pop_front() {
                    state.bytes -= cost(&item);
                    drop(state);
                    self.0.room.notify_all();
                    return Some(item);
                }
                if state.senders == 0 || state.closed {
                    return None;
                }
            }
            // An item sent since the check left a permit: this returns at once.
            self.0.ready.notified().await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.closed = true;
        // What waited is dropped with the response.
        state.messages.clear();
        state.bytes = 0;
        drop(state);
        self.0.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::Duration;

    use super::*;

    fn routed(bytes: usize) -> Bytes {
        Bytes::from(vec![b'x'; bytes])
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_full_queue_holds_up_its_sender_until_the_receiver_reads() {
        let (sender, mut receiver) = queue();
        let half = STREAM_BYTES / 2 - MESSAGE_COST;
        sender.send(routed(half), None).unwrap();
        sender.send(routed(half), None).unwrap();
        let blocked = thread::spawn(move || {
            sender.send(routed(1), None).unwrap();
            // A message larger than the queue waits alone.
            sender.send(routed(3 * STREAM_BYTES), None).unwrap();
        });
        thread::sleep(Duration::from_millis(100));
        assert!(!blocked.is_finished(), "sent past the bound");
        let sizes: Vec<usize> = block_on(async {
            let mut sizes = Vec::new();
            while let Some(routed) = receiver.recv().await {
                sizes.push(routed.len());
            }
            sizes
        });
        assert_eq!(sizes, [half, half, 1, 3 * STREAM_BYTES]);
        blocked.join().unwrap();
    }

    #[test]
    fn a_gone_receiver_gives_the_message_back_and_frees_a_blocked_sender() {
        let (sender, receiver) = queue();
        sender.send(routed(STREAM_BYTES), None).unwrap();
        let other = sender.clone();
        let blocked = thread::spawn(move || match other.send(routed(10), None) {
            Err(Unsent::Closed(back)) => back.len(),
            _ => 0,
        });
        thread::sleep(Duration::from_millis(50));
        drop(receiver);
        assert_eq!(blocked.join().unwrap(), 10);
        assert!(sender.is_closed());
        assert!(matches!(
            sender.send(routed(1), None),
            Err(Unsent::Closed(_))
        ));
    }

    #[test]
    fn closing_frees_a_blocked_sender_and_ends_the_receiver_after_what_waits() {
        let (sender, mut receiver) = queue();
        sender.send(routed(STREAM_BYTES), None).unwrap();
        let other = sender.clone();
        let blocked = thread::spawn(move || other.send(routed(10), None).is_err());
        thread::sleep(Duration::from_millis(50));
        sender.close();
        assert!(blocked.join().unwrap());
        block_on(async {
            assert!(receiver.recv().await.is_some());
            assert!(receiver.recv().await.is_none());
        });
    }

    #[test]
    fn a_sender_with_patience_closes_a_queue_that_stays_full() {
        let (sender, mut receiver) = queue();
        sender.send(routed(STREAM_BYTES), None).unwrap();
        let started = Instant::now();
        let stalled = sender.send(routed(10), Some(Duration::from_millis(100)));
        assert!(matches!(stalled, Err(Unsent::Stalled(_))), "{stalled:?}");
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(sender.is_closed());
        block_on(async {
            assert!(receiver.recv().await.is_some());
            assert!(receiver.recv().await.is_none());
        });
    }

    #[test]
    fn the_receiver_ends_when_the_last_sender_goes() {
        let (sender, mut receiver) = queue();
        let other = sender.clone();
        other.send(routed(3), None).unwrap();
        drop(sender);
        let waiting = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            drop(other);
        });
        block_on(async {
            assert_eq!(receiver.recv().await.map(|routed| routed.len()), Some(3));
            assert!(receiver.recv().await.is_none());
        });
        waiting.join().unwrap();
    }
}
