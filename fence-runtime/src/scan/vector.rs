//! The one vector algorithm, written once over a [`Vector`] trait that `sse2` and `avx2`
//! implement.
//!
//! Both kernels test 64-byte blocks for hits: a `<` or `/` followed by `u` or `U`. The last
//! bytes are tested as one block padded with zeros. Text with no `<` at all runs four aligned
//! vectors at a time, as `memchr` does. [`find`] only reads; [`push`] copies as it reads.

#![allow(
    unsafe_code,
    clippy::cast_ptr_alignment,
    reason = "vector intrinsics, raw loads and stores"
)]
// The vector helpers must inline into the kernels compiled with AVX2: called, they would run
// without it (a closure in a kernel measured 70 times slower for that reason).
#![allow(clippy::inline_always)]

use alloc::vec::Vec;

use super::generic::ROOM;
use crate::marker::{self, Marker, NEUTRALISED_INFIX};

/// Bytes per block: one bit of a `u64` mask each.
pub(crate) const BLOCK: usize = 64;

/// The block loops also load each block shifted by one byte, so a block is tested with
/// vectors only when one more byte exists.
const LOOKAHEAD: usize = 1;

/// Clean blocks in a row after which [`find`] hands over to [`skip`]. Text without markup
/// gets there at once; in HTML, where clean blocks come one at a time, waiting for two keeps
/// the hand-over (and the mispredicted branches around it) rare.
const CLEAN_RUN: usize = 2;

/// Bytes [`push`] tests and copies a step: two blocks, with one branch on their hits.
pub(crate) const STEP: usize = 2 * BLOCK;

/// Steps without a hit after which [`push`] looks, out of its loop, at whether its copy is
/// aligned and whether the text has markup at all: every 1 KiB of them. (Periods of 4 to 32
/// steps measured alike on HTML; a short one hands text without markup to [`skip`] sooner.)
pub(crate) const PERIOD: usize = 8;

/// What the kernels need of a vector: [`__m128i`] with SSE2, [`__m256i`] with AVX2.
///
/// # Safety
///
/// Each method may run only where the CPU has its type's instructions: always, for SSE2;
/// for AVX2, inlined into a function compiled with AVX2 that runs only after detecting it.
/// `load` and `store` touch `BYTES` bytes at the pointer, which must be valid for that;
/// `load_aligned` also needs the pointer aligned to `BYTES`.
pub(crate) trait Vector: Copy {
    const BYTES: usize;
    unsafe fn splat(byte: u8) -> Self;
    unsafe fn load(ptr: *const u8) -> Self;
    unsafe fn load_aligned(ptr: *const u8) -> Self;
    unsafe fn store(self, ptr: *mut u8);
    unsafe fn eq(self, other: Self) -> Self;
    unsafe fn or(self, other: Self) -> Self;
    unsafe fn and(self, other: Self) -> Self;
    /// All ones in each byte that is `<` or `/`, zero elsewhere.
    unsafe fn lt_or_slash(self) -> Self;
    /// The top bit of each byte, byte `i` in bit `i`.
    unsafe fn bits(self) -> u64;
}

/// Tests the 64 bytes at `src` (copying them to `dst` first when `COPY`): whether they
/// hold a `<` or `/` at all, and their hits, bit `i` set when `src[i]` is `<` or `/` and
/// `src[i + 1]` is `u` or `U`.
///
/// Every marker's `<` has a hit, on itself (`<u`) or on the next byte (`</u`); rustdoc's
/// HTML has one every 7.6 KB. Testing a pair, not the three bytes of `</u`, takes one
/// shifted load, not two, and a single lookup tells `<` and `/` from other bytes.
///
/// The hits are computed whether or not the block holds a `<`: in HTML one block in six
/// has none, scattered at random, and a branch on it mispredicts more than the work costs.
///
/// # Safety
///
/// `V`'s contract; `BLOCK + LOOKAHEAD` bytes readable at `src`; when `COPY`, `BLOCK`
/// bytes writable at `dst`.
#[inline(always)]
unsafe fn block<V: Vector, const COPY: bool>(src: *const u8, dst: *mut u8) -> (bool, u64) {
    // SAFETY: every load reads `V::BYTES` bytes at `src + k * V::BYTES + d` for
    // `k < BLOCK / V::BYTES` and `d <= LOOKAHEAD`, the last of them below
    // `src + BLOCK + LOOKAHEAD`; every store writes below `dst + BLOCK`. `V`'s
    // instructions are there, by contract.
    unsafe {
        let case = V::splat(0x20);
        let u = V::splat(b'u');
        let mut any = V::splat(0);
        let mut hits = 0;
        for k in 0..BLOCK / V::BYTES {
            let at = src.add(k * V::BYTES);
            let raw = V::load(at);
            if COPY {
                raw.store(dst.add(k * V::BYTES));
            }
            let here = raw.lt_or_slash();
            any = any.or(here);
            let next_u = V::load(at.add(1)).or(case).eq(u);
            hits |= here.and(next_u).bits() << (k * V::BYTES);
        }
        (any.bits() != 0, hits)
    }
}

/// The `<` that a hit at `at` may start a marker with: `at` itself, or the byte before a
/// `/` (which [`marker::marker_at`] checks is a `<`). Without a branch on which: openers and
/// closers come in random order. Past the end of `hay` (wrapping) when `at` is 0 and `/`.
#[inline(always)]
fn hit_lt(hay: &[u8], at: usize) -> usize {
    at.wrapping_sub(usize::from(hay[at] == b'/'))
}

/// The first marker among the hits of the block at `start`.
#[inline(always)]
fn first_marker(hay: &[u8], from: usize, start: usize, mut hits: u64) -> Option<(usize, Marker)> {
    while hits != 0 {
        let at = start + hits.trailing_zeros() as usize;
        hits &= hits - 1;
        // A `<` before `from` is not the caller's.
        let lt = hit_lt(hay, at);
        if lt >= from {
            if let Some(kind) = marker::marker_at(hay, lt) {
                return Some((lt, kind));
            }
        }
    }
    None
}

/// The hits of the last bytes of `hay`, from `at`: fewer than `BLOCK + LOOKAHEAD`, tested
/// as a block padded with zeros (which are neither `<`, `/` nor `u`, so they hit nothing
/// and end the input as its end does). One vector test, where a loop of `memchr` calls
/// costs a streamed chunk of HTML more than its whole block loop.
///
/// # Safety
///
/// `V`'s contract.
#[inline(always)]
unsafe fn tail_hits<V: Vector>(hay: &[u8], at: usize) -> u64 {
    let mut padded = [0; BLOCK + LOOKAHEAD];
    let rest = &hay[at..];
    padded[..rest.len()].copy_from_slice(rest);
    // SAFETY: `padded` holds `BLOCK + LOOKAHEAD` bytes; nothing is copied.
    unsafe { block::<V, false>(padded.as_ptr(), core::ptr::null_mut()).1 }
}

/// The count of clean blocks in a row, after one more block. Arithmetic, not a branch: the
/// compiler otherwise branches on `any`, which in HTML mispredicts one block in six.
#[inline(always)]
fn next_clean(clean: usize, any: bool) -> usize {
    (clean + 1) & usize::from(any).wrapping_sub(1)
}

/// Copies 64 bytes.
///
/// # Safety
///
/// `V`'s contract; `BLOCK` bytes readable at `src` and writable at `dst`.
#[inline(always)]
unsafe fn copy_block<V: Vector>(src: *const u8, dst: *mut u8) {
    for k in 0..BLOCK / V::BYTES {
        // SAFETY: `k * V::BYTES + V::BYTES <= BLOCK`, within what the caller passes.
        unsafe { V::load(src.add(k * V::BYTES)).store(dst.add(k * V::BYTES)) };
    }
}

/// Whether the `STEP` bytes at `src` hold a `<`.
///
/// # Safety
///
/// `V`'s contract; `STEP` bytes readable at `src`.
#[inline(always)]
unsafe fn has_lt<V: Vector>(src: *const u8) -> bool {
    // SAFETY: the loads read `src[..STEP]`; `V`'s instructions are there, by contract.
    unsafe {
        let lt = V::splat(b'<');
        let mut any = V::load(src).eq(lt);
        for k in 1..STEP / V::BYTES {
            any = any.or(V::load(src.add(k * V::BYTES)).eq(lt));
        }
        any.bits() != 0
    }
}

/// Runs through text with no `<` four aligned vectors at a time, copying it to `dst` when
/// `COPY`. Starts at `at`, just past a block found to hold no `<`, whose copy ends at
/// `written`; returns where the first `<` is (or `at`, or a point past it where fewer than
/// four vectors remain) and where its copy goes.
///
/// # Safety
///
/// `V`'s contract; `at >= BLOCK`, and `hay[at - BLOCK..at]` holds no `<`. When `COPY`,
/// `written >= BLOCK`, `dst[written - BLOCK..written]` holds the copy of
/// `hay[at - BLOCK..at]`, and `dst` has room for the rest of `hay` after `written`.
#[inline(always)]
unsafe fn skip<V: Vector, const COPY: bool>(
    hay: &[u8],
    at: usize,
    dst: *mut u8,
    written: usize,
) -> (usize, usize) {
    let chunk = 4 * V::BYTES;
    let src = hay.as_ptr();
    // Back to an aligned address, over bytes of the clean block just passed (already copied,
    // to the same place they are copied to again). Without copying, `written` means
    // nothing: wrapping keeps its arithmetic from panicking.
    let back = (src as usize + at) % V::BYTES;
    let (mut p, mut q) = (at - back, written.wrapping_sub(back));
    while p + chunk <= hay.len() {
        // SAFETY: the loads read `hay[p..p + chunk]`, in bounds by the loop condition and
        // aligned to `V::BYTES`. When copying, `q - p == written - at` (no infix between),
        // so the stores write `dst[q..q + chunk]`, within the room for the rest of `hay`,
        // or over the copy of the clean block when `p < at`.
        let found = unsafe {
            let lt = V::splat(b'<');
            let raw = [0, 1, 2, 3].map(|k| V::load_aligned(src.add(p + k * V::BYTES)));
            if COPY {
                for (k, vector) in raw.iter().enumerate() {
                    vector.store(dst.add(q + k * V::BYTES));
                }
            }
            let eq = raw.map(|vector| vector.eq(lt));
            if eq[0].or(eq[1]).or(eq[2].or(eq[3])).bits() == 0 {
                None
            } else {
                eq.iter().enumerate().find_map(|(k, vector)| {
                    let bits = vector.bits();
                    (bits != 0).then(|| k * V::BYTES + bits.trailing_zeros() as usize)
                })
            }
        };
        if let Some(offset) = found {
            return (p + offset, q.wrapping_add(offset));
        }
        p += chunk;
        q = q.wrapping_add(chunk);
    }
    if p < at { (at, written) } else { (p, q) }
}

/// [`find_marker`](super::find_marker) with `V`.
///
/// # Safety
///
/// `V`'s contract.
#[inline(always)]
pub(crate) unsafe fn find<V: Vector>(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    let mut at = from;
    let mut clean = 0;
    while at + BLOCK + LOOKAHEAD <= hay.len() {
        // SAFETY: the loop condition keeps `BLOCK + LOOKAHEAD` bytes readable at `at`;
        // nothing is copied.
        let (any, hits) = unsafe { block::<V, false>(hay.as_ptr().add(at), core::ptr::null_mut()) };
        if hits != 0 {
            if let Some(found) = first_marker(hay, from, at, hits) {
                return Some(found);
            }
        }
        at += BLOCK;
        clean = next_clean(clean, any);
        if clean == CLEAN_RUN {
            clean = 0;
            // SAFETY: the block just passed holds no `<`; nothing is copied.
            at = unsafe { skip::<V, false>(hay, at, core::ptr::null_mut(), 0).0 };
        }
    }
    // SAFETY: `V`'s contract holds.
    let hits = unsafe { tail_hits::<V>(hay, at) };
    first_marker(hay, from, at, hits)
}

/// Where [`push`] writes: the output so far is `out[..written]`, then `room` more bytes
/// fit at `dst` (`out`'s buffer) before it must grow.
struct Sink<'a> {
    out: &'a mut Vec<u8>,
    dst: *mut u8,
    written: usize,
    room: usize,
}

impl Sink<'_> {
    /// Makes room for `bytes` more bytes after `written`.
    ///
    /// Inlined into each kernel, as it was when the kernels shared its file: `sse2` and `avx2`
    /// are compiled apart from this one.
    #[cold]
    #[inline]
    fn grow(&mut self, bytes: usize) {
        // SAFETY: `dst[..written]` is initialised: the output so far, then copied bytes of
        // `hay` and infixes.
        unsafe { self.out.set_len(self.written) };
        self.out.reserve(bytes + ROOM);
        self.dst = self.out.as_mut_ptr();
        self.room = self.out.capacity() - self.written;
    }

    /// The bytes from `written` up to the next address aligned for `V`.
    #[inline(always)]
    fn misalignment<V: Vector>(&self) -> usize {
        let next = self.dst.wrapping_add(self.written).addr();
        (V::BYTES - next % V::BYTES) % V::BYTES
    }

    /// `written` moves on by `bytes` already copied.
    #[inline(always)]
    fn advance(&mut self, bytes: usize) {
        self.written += bytes;
        self.room -= bytes;
    }
}

/// Neutralises the markers among the hits of the block at `at`, whose copy starts at
/// `sink.written` (made here first unless `copied`), and moves past the block. Returns
/// whether there was one: the output after the block has moved along.
///
/// Each marker's copy is kept up to and including its `<` (which may be the last byte of
/// the block before); the infix follows, then a copy of the 64 bytes after the `<`, which
/// hold the rest of the block up to the next marker.
///
/// # Safety
///
/// `V`'s contract; `at + BLOCK <= hay.len()`, and `sink.room >= hay.len() - at`.
#[inline(always)]
unsafe fn finish_block<V: Vector>(
    sink: &mut Sink<'_>,
    hay: &[u8],
    from: usize,
    at: usize,
    mut hits: u64,
    copied: bool,
) -> bool {
    const INFIX: &[u8] = NEUTRALISED_INFIX.as_bytes();
    let (src, len) = (hay.as_ptr(), hay.len());
    if !copied {
        // SAFETY: `at + BLOCK <= len`, and `room >= len - at` keeps `BLOCK` bytes writable.
        unsafe { copy_block::<V>(src.add(at), sink.dst.add(sink.written)) };
    }
    let mut done = at;
    let mut moved = false;
    while hits != 0 {
        let hit = at + hits.trailing_zeros() as usize;
        hits &= hits - 1;
        let lt = hit_lt(hay, hit);
        if lt < from || marker::marker_at(hay, lt).is_none() {
            continue;
        }
        // A `<` before the block (`lt + 1 == at == done`) keeps nothing more.
        sink.advance(lt + 1 - done);
        done = lt + 1;
        moved = true;
        if sink.room < INFIX.len() + (len - done) {
            sink.grow(INFIX.len() + (len - done));
        }
        // SAFETY: `room >= INFIX.len() + (len - done)`, just made sure of, keeps the infix
        // and then `len - done` bytes writable at `written`; the loads read
        // `hay[done..done + BLOCK]` when it is in bounds, else up to the end of the block.
        unsafe {
            let dst = sink.dst.add(sink.written);
            core::ptr::copy_nonoverlapping(INFIX.as_ptr(), dst, INFIX.len());
            if done + BLOCK <= len {
                copy_block::<V>(src.add(done), dst.add(INFIX.len()));
            } else {
                let rest = at + BLOCK - done;
                core::ptr::copy_nonoverlapping(src.add(done), dst.add(INFIX.len()), rest);
            }
        }
        sink.advance(INFIX.len());
    }
    sink.advance(at + BLOCK - done);
    moved
}

/// [`push_neutralised`](super::push_neutralised) with `V`.
///
/// Two blocks a step, each copied and then tested, with one branch on their hits: when a
/// marker moves the output along, what follows is copied again where it now belongs. A step
/// without a hit asks nothing more. Every [`PERIOD`] such steps, out of the way of the loop:
///
/// - when the copy is not aligned (a marker moved it, or it started so), the first bytes of
///   a block, up to an aligned address, are passed alone;
/// - else, when the last step held no `<`, [`skip`] takes over.
///
/// A test for `<` and a count of clean steps on every step, as [`find`] does, and stores
/// that cross cache lines each cost HTML little alone, but together held it to three
/// quarters of a copy's speed.
///
/// # Safety
///
/// `V`'s contract.
#[inline(always)]
pub(crate) unsafe fn push<V: Vector>(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    let len = hay.len();
    out.reserve(len - from);
    let src = hay.as_ptr();
    let mut sink = Sink {
        dst: out.as_mut_ptr(),
        written: out.len(),
        room: out.capacity() - out.len(),
        out,
    };
    let mut at = from;
    let mut steps = 0;
    // Throughout, `sink.room >= len - at`: room for the rest of `hay` without markers.
    while at + STEP + LOOKAHEAD <= len {
        // SAFETY: the loop condition keeps `STEP + LOOKAHEAD` bytes readable at `at`, and
        // `room >= len - at` keeps `STEP` bytes writable at `written`.
        let (first, second) = unsafe {
            let dst = sink.dst.add(sink.written);
            (
                block::<V, true>(src.add(at), dst).1,
                block::<V, true>(src.add(at + BLOCK), dst.add(BLOCK)).1,
            )
        };
        if first | second != 0 {
            // SAFETY: both blocks are in bounds, and `room >= len - at` holds.
            unsafe {
                let moved = finish_block::<V>(&mut sink, hay, from, at, first, true);
                finish_block::<V>(&mut sink, hay, from, at + BLOCK, second, !moved);
            }
            at += STEP;
            continue;
        }
        sink.advance(STEP);
        at += STEP;
        steps += 1;
        if steps < PERIOD {
            continue;
        }
        steps = 0;
        if at + STEP + LOOKAHEAD > len {
            break;
        }
        let misaligned = sink.misalignment::<V>();
        if misaligned != 0 {
            // SAFETY: as for a step (just checked), of which only the first block is
            // copied and tested.
            let (_, hits) = unsafe { block::<V, true>(src.add(at), sink.dst.add(sink.written)) };
            // Fewer than `V::BYTES` bytes, copied, after which the copy is aligned; when
            // they hold a hit, the next period tries again.
            if hits & ((1 << misaligned) - 1) == 0 {
                sink.advance(misaligned);
                at += misaligned;
            }
        // SAFETY: the period's last step, `hay[at - STEP..at]`, is in bounds.
        } else if unsafe { !has_lt::<V>(src.add(at - STEP)) } {
            // SAFETY: the step just copied to `dst[written - STEP..written]` holds no `<`,
            // and `room >= len - at` is the room for the rest of `hay`.
            let (next, written) = unsafe { skip::<V, true>(hay, at, sink.dst, sink.written) };
            sink.advance(written - sink.written);
            at = next;
        }
    }
    while at + BLOCK + LOOKAHEAD <= len {
        // SAFETY: as above, for one block.
        unsafe {
            let (_, hits) = block::<V, true>(src.add(at), sink.dst.add(sink.written));
            finish_block::<V>(&mut sink, hay, from, at, hits, true);
        }
        at += BLOCK;
    }
    let written = sink.written;
    // SAFETY: `dst[..written]` is initialised: the output so far, then copied bytes of
    // `hay` and infixes.
    unsafe { out.set_len(written) };
    // SAFETY: `V`'s contract holds.
    let mut hits = unsafe { tail_hits::<V>(hay, at) };
    let mut copied = at;
    while hits != 0 {
        let hit = at + hits.trailing_zeros() as usize;
        hits &= hits - 1;
        let lt = hit_lt(hay, hit);
        if lt < from || marker::marker_at(hay, lt).is_none() {
            continue;
        }
        // A `<` just before the tail (`lt + 1 == copied`) is already copied: empty range.
        out.extend_from_slice(&hay[copied..=lt]);
        out.extend_from_slice(NEUTRALISED_INFIX.as_bytes());
        copied = lt + 1;
    }
    out.extend_from_slice(&hay[copied..]);
}
