//! `AsyncFenceWriter`: content cut into chunks by the input, written into an inner writer that
//! takes a few bytes a poll, is `Pending` now and then and fails now and then; then finished,
//! finished as cut short, shut down, given up after a failed `finish`, or dropped — with
//! `finish` half done, inside a tokio runtime or outside one.
//!
//! Input layout: `[n, accept, pending, fail, end, sizes[n % 8 + 1]…, content…]`. The inner
//! writer takes at most `accept % 32 + 1` bytes a poll; when `pending` is not 0 it is `Pending`
//! on every `pending % 7 + 2`th poll, and when `fail` is not 0 it fails every `fail % 8 + 2`th
//! poll (interrupted or not, by turns). `end % 8` picks how the block ends; bit 3 of `end`
//! gives up on the rest of a chunk after a write that took only part of it, as a cancelled
//! `write_all` does; bit 4 flushes after every chunk; `end >> 5` is how often a cancelled
//! `finish` is polled first.
//!
//! Invariants:
//! - a write that returns an error or `Pending` took none of its bytes, one that returns a
//!   count took that many and at least one; after every write the writer holds back exactly
//!   the reference's [`partial_tail`](fence_reference::partial_tail) of the bytes it took: it
//!   decides nothing on bytes it has not taken, which the caller may never write;
//! - the block's content is the bytes taken, whatever else the caller offered;
//! - finished (a failed `finish` retried) or shut down, the inner writer holds exactly the
//!   reference block, and a shut-down writer was shut down; finished as cut short, the
//!   reference block with the truncation notice;
//! - dropped unfinished, a cancelled `finish`, or given up after a failed `finish`, the inner
//!   writer holds a prefix of the block that was being closed (cut short when unfinished, whole
//!   when `finish` had queued the end): all of it when the drop's one attempt met no `Pending`
//!   and no error, nothing more at all when the writer's last call had failed or the drop
//!   happened outside a tokio runtime, and otherwise a block `parse` refuses.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use fence_reference as reference;
use fence_runtime::{AsyncFenceWriter, Source, fence, parse};
use tokio::io::AsyncWrite;
use tokio::runtime::Runtime;

use crate::input::split;

/// How the block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Finish,
    FinishTruncated,
    Shutdown,
    Drop,
    DropOutsideRuntime,
    CancelledFinish,
    GiveUp,
}

/// Checks every invariant on `data`; panics on the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// // Dropped unfinished, into a writer that takes 3 bytes a poll and is pending on every
/// // second: the block is closed as cut short, or left open for `parse` to refuse.
/// fence_checks::async_writer::check(b"\x00\x02\x00\x00\x03\x05cut </untrus");
/// ```
pub fn check(data: &[u8]) {
    let (header, rest) = data.split_at(5.min(data.len()));
    let [n, accept, pending, fail, end] =
        [0, 1, 2, 3, 4].map(|i| header.get(i).copied().unwrap_or(0));
    let (sizes, content) = rest.split_at((usize::from(n % 8) + 1).min(rest.len()));
    let chunks = split(content, sizes);
    let how = match end % 8 {
        0 | 7 => End::Finish,
        1 => End::FinishTruncated,
        2 => End::Shutdown,
        3 => End::Drop,
        4 => End::DropOutsideRuntime,
        5 => End::CancelledFinish,
        _ => End::GiveUp,
    };

    let flow = Flow::new(
        usize::from(accept % 32) + 1,
        (pending != 0).then(|| usize::from(pending % 7) + 2),
        (fail != 0).then(|| usize::from(fail % 8) + 2),
    );
    let state = Rc::clone(&flow.0);
    let runtime = runtime().enter();
    let source = Source::tool("fuzz");
    let mut writer = AsyncFenceWriter::new(flow, &source);
    let mut cx = Context::from_waker(Waker::noop());

    let taken = write_chunks(&mut writer, &chunks, end, &mut cx);
    let content = &taken[..];

    let whole = reference::block_bytes(source.as_str(), content);
    let truncated = reference::truncated_block_bytes(source.as_str(), content);
    if let Ok(text) = std::str::from_utf8(content) {
        assert_eq!(
            whole,
            fence(&source, text).as_str().as_bytes(),
            "one-shot fence"
        );
    }
    match how {
        End::Finish | End::FinishTruncated => {
            let truncate = how == End::FinishTruncated;
            assert!(finish(writer, truncate, false, &mut cx).is_none());
            let expected = if truncate { truncated } else { whole };
            assert_eq!(state.borrow().bytes, expected, "a finished block");
        }
        End::Shutdown => {
            let mut tries = 0;
            while !matches!(
                Pin::new(&mut writer).poll_shutdown(&mut cx),
                Poll::Ready(Ok(()))
            ) {
                tries += 1;
                assert!(tries < 100_000, "shutdown makes no progress");
            }
            assert!(
                state.borrow().shut_down,
                "the inner writer was not shut down"
            );
            assert_eq!(state.borrow().bytes, whole, "a shut-down block");
        }
        End::Drop => dropped(writer, &state, &truncated, true),
        End::DropOutsideRuntime => {
            drop(runtime);
            dropped(writer, &state, &truncated, false);
            return;
        }
        End::CancelledFinish => {
            {
                let mut finish = pin!(writer.finish());
                for _ in 0..end >> 5 {
                    if finish.as_mut().poll(&mut cx).is_ready() {
                        // Finished (or failed) before it could be cancelled: whatever was
                        // sent is a prefix of the whole block.
                        assert!(whole.starts_with(&state.borrow().bytes));
                        return;
                    }
                }
                state.borrow_mut().mark();
            }
            // The future, and the writer in it, are dropped here: once polled, `finish` had
            // queued the end of a whole block, which goes out; never polled, it had not begun.
            settled(
                &state,
                if end >> 5 == 0 { &truncated } else { &whole },
                true,
            );
        }
        End::GiveUp => {
            if let Some(writer) = finish(writer, false, true, &mut cx) {
                dropped(writer, &state, &whole, true);
            } else {
                assert_eq!(state.borrow().bytes, whole, "a finished block");
            }
        }
    }
    drop(runtime);
}

/// Writes every chunk (bit 3 of `end`: giving up on what a write did not take, bit 4:
/// flushing after each), checking each write; returns the bytes the writer took.
fn write_chunks(
    writer: &mut AsyncFenceWriter<Flow>,
    chunks: &[&[u8]],
    end: u8,
    cx: &mut Context<'_>,
) -> Vec<u8> {
    // What the writer took: the content of the block, whatever the caller offered.
    let mut taken = Vec::new();
    for chunk in chunks {
        let mut rest = *chunk;
        let mut tries = 0;
        while !rest.is_empty() {
            if let Poll::Ready(Ok(n)) = Pin::new(&mut *writer).poll_write(cx, rest) {
                assert!(
                    n > 0 && n <= rest.len(),
                    "a write took {n} of {} bytes",
                    rest.len()
                );
                taken.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                if end & 0x08 != 0 {
                    // A caller that gives up on what was not taken (a cancelled `write_all`)
                    // and writes other bytes next.
                    rest = &[];
                }
            }
            assert_eq!(
                writer.held(),
                reference::partial_tail(&taken),
                "held back other bytes than the ones taken call for"
            );
            tries += 1;
            assert!(tries < 100_000, "no progress");
        }
        if end & 0x10 != 0 {
            // A failed flush keeps what it could not send queued for the next call.
            let _ = Pin::new(&mut *writer).poll_flush(cx);
        }
    }
    taken
}

/// Polls `finish` (or `finish_truncated`) to the end; a failed one is retried with `finish`,
/// unless `give_up`, which hands the writer back. `None` once finished.
fn finish(
    mut writer: AsyncFenceWriter<Flow>,
    truncate: bool,
    give_up: bool,
    cx: &mut Context<'_>,
) -> Option<AsyncFenceWriter<Flow>> {
    let mut tries = 0;
    let mut first = truncate;
    loop {
        let result = if first {
            poll_to_end(pin!(writer.finish_truncated()), cx)
        } else {
            poll_to_end(pin!(writer.finish()), cx)
        };
        first = false;
        match result {
            Ok(_) => return None,
            Err(err) if give_up => return Some(err.into_writer()),
            Err(err) => writer = err.into_writer(),
        }
        tries += 1;
        assert!(tries < 100_000, "finish makes no progress");
    }
}

fn poll_to_end<T>(mut future: Pin<&mut impl Future<Output = T>>, cx: &mut Context<'_>) -> T {
    for _ in 0..100_000 {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return output;
        }
    }
    panic!("a future that never ends");
}

/// Drops `writer` and checks what its drop wrote.
fn dropped(
    writer: AsyncFenceWriter<Flow>,
    state: &Rc<RefCell<State>>,
    block: &[u8],
    runtime: bool,
) {
    state.borrow_mut().mark();
    drop(writer);
    settled(state, block, runtime);
}

/// What a drop leaves: a prefix of `block`; nothing new when the writer's last call had failed
/// or there was no runtime; all of it unless the drop met a refusal; otherwise an open block.
fn settled(state: &Rc<RefCell<State>>, block: &[u8], runtime: bool) {
    let state = state.borrow();
    assert!(
        block.starts_with(&state.bytes),
        "a dropped writer wrote other bytes"
    );
    if !runtime || state.mark.failed_before {
        assert_eq!(
            state.polls, state.mark.polls,
            "a drop polled a writer it must not"
        );
    } else if !state.mark.refused_since {
        assert_eq!(
            state.bytes, block,
            "a drop that met no refusal left the block unfinished"
        );
    }
    if state.bytes != block {
        let text = String::from_utf8_lossy(&state.bytes);
        assert!(parse(&text).is_err(), "an unclosed block parses: {text:?}");
    }
}

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
    })
}

/// What the inner writer has seen, shared with the check.
#[derive(Debug, Default)]
struct State {
    bytes: Vec<u8>,
    polls: usize,
    accept: usize,
    pending_every: Option<usize>,
    fail_every: Option<usize>,
    last_failed: bool,
    shut_down: bool,
    mark: Mark,
}

/// Where things stood before a drop, and what the drop met.
#[derive(Debug, Default)]
struct Mark {
    polls: usize,
    failed_before: bool,
    refused_since: bool,
}

impl State {
    /// Notes where things stand before a drop.
    fn mark(&mut self) {
        self.mark = Mark {
            polls: self.polls,
            failed_before: self.last_failed,
            refused_since: false,
        };
    }

    /// One poll: `Pending`, an error, or ready for `ready` to do its work.
    fn poll<T>(
        &mut self,
        cx: &Context<'_>,
        ready: impl FnOnce(&mut Self) -> T,
    ) -> Poll<io::Result<T>> {
        self.polls += 1;
        if self
            .pending_every
            .is_some_and(|every| self.polls % every == 0)
        {
            self.mark.refused_since = true;
            self.last_failed = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if let Some(every) = self.fail_every.filter(|every| self.polls % every == 0) {
            self.mark.refused_since = true;
            self.last_failed = true;
            let kind = if (self.polls / every) % 2 == 0 {
                io::ErrorKind::Interrupted
            } else {
                io::ErrorKind::Other
            };
            return Poll::Ready(Err(io::Error::new(kind, "flaky")));
        }
        self.last_failed = false;
        Poll::Ready(Ok(ready(self)))
    }
}

/// An inner writer that takes a few bytes a poll, pushes back and fails on a schedule.
#[derive(Debug)]
struct Flow(Rc<RefCell<State>>);

impl Flow {
    fn new(accept: usize, pending_every: Option<usize>, fail_every: Option<usize>) -> Flow {
        Flow(Rc::new(RefCell::new(State {
            accept,
            pending_every,
            fail_every,
            ..State::default()
        })))
    }
}

impl AsyncWrite for Flow {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.borrow_mut().poll(cx, |state| {
            let n = buf.len().min(state.accept);
            state.bytes.extend_from_slice(&buf[..n]);
            n
        })
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.borrow_mut().poll(cx, |_| ())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.borrow_mut().poll(cx, |state| state.shut_down = true)
    }
}
