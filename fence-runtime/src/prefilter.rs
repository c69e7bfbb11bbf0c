//! Finding markers, and copying content with its markers neutralised, many bytes at a time.
//!
//! Every marker starts with `<u` or `</u` in some casing, so the vectors look for a hit: a `<`
//! or `/` followed by `u` or `U`. Markup that merely has many `<` (HTML has one every ~30 bytes)
//! rarely has one. A hit is only a candidate; [`marker::marker_at`] decides each.
//!
//! Two kernels do the work. [`find_marker`] only reads; [`push_neutralised`] copies as it reads,
//! so that fencing is one pass over the content, and the output grows only when a marker
//! appears. Both test 64-byte blocks for hits (the last bytes as one block padded with zeros),
//! and run through text with no `<` at all four aligned vectors at a time, as `memchr` does.
//!
//! On x86-64 they use SSE2 (always present) or AVX2: under `std`, the first call detects the
//! CPU's features and keeps its choice in an atomic function pointer, so every later call is
//! one indirect call, with no detection. This module holds the crate's only `unsafe` code.
//! Every other target takes the scalar path (one `memchr` for `<` at a time), which the
//! differential tests also hold the vector paths to, with a naive reference.

use alloc::string::String;
use alloc::vec::Vec;

use crate::marker::{self, Marker};
use crate::neutralise::{NEUTRALISED_INFIX, ROOM};

/// Bytes per block: one bit of a `u64` mask each.
const BLOCK: usize = 64;

/// The first marker at or after `from`: the position of its `<`, and its kind.
#[inline]
pub(crate) fn find_marker(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    #[cfg(target_arch = "x86_64")]
    {
        x86::find_marker(hay, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        find_marker_scalar(hay, from)
    }
}

/// Appends `hay[from..]` to `out` with every marker neutralised (a marker is decided on
/// `hay[at..]` alone, so where `from` lies does not change which bytes are markers).
///
/// `out` grows only when a marker appears: with room for the rest of `hay`, `out` is never
/// reallocated for content without one.
#[inline]
pub(crate) fn push_neutralised(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        x86::push_neutralised(out, hay, from);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        push_neutralised_scalar(out, hay, from);
    }
}

/// [`push_neutralised`] for text.
///
/// # Panics
///
/// When `from` is not on a character boundary of `content`.
pub(crate) fn push_neutralised_str(out: &mut String, content: &str, from: usize) {
    /// Puts the string back as it was if neutralising panics half way.
    struct Restore<'a> {
        bytes: &'a mut Vec<u8>,
        len: usize,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.bytes.truncate(self.len);
        }
    }

    assert!(
        content.is_char_boundary(from),
        "neutralising must start on a character boundary"
    );
    // SAFETY: what `push_neutralised` appends is `content[from..]`, valid UTF-8 because `from`
    // is a character boundary of a `str`, with the ASCII infix inserted directly after some of
    // its ASCII `<` bytes, which keeps it valid UTF-8. Should anything panic before it is done,
    // `Restore` truncates the string back to the length it had, a character boundary.
    #[allow(unsafe_code, reason = "the kernels write bytes; this is text")]
    let bytes = unsafe { out.as_mut_vec() };
    let restore = Restore {
        len: bytes.len(),
        bytes,
    };
    push_neutralised(restore.bytes, content.as_bytes(), from);
    core::mem::forget(restore);
}

/// [`find_marker`] one `<` at a time.
#[cfg_attr(
    target_arch = "x86_64",
    allow(dead_code, reason = "x86-64 uses it only in tests, as the reference")
)]
pub(crate) fn find_marker_scalar(hay: &[u8], mut from: usize) -> Option<(usize, Marker)> {
    while let Some(offset) = memchr::memchr(b'<', &hay[from..]) {
        let at = from + offset;
        if let Some(kind) = marker::marker_at(hay, at) {
            return Some((at, kind));
        }
        from = at + 1;
    }
    None
}

/// [`push_neutralised`] one marker at a time.
#[cfg_attr(
    target_arch = "x86_64",
    allow(dead_code, reason = "x86-64 uses it only in tests, as the reference")
)]
pub(crate) fn push_neutralised_scalar(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    let mut copied = from;
    while let Some((at, kind)) = find_marker_scalar(hay, copied) {
        out.extend_from_slice(&hay[copied..=at]);
        out.extend_from_slice(NEUTRALISED_INFIX.as_bytes());
        // The name holds no `<`, so no marker starts inside it.
        out.extend_from_slice(&hay[at + 1..at + kind.len()]);
        copied = at + kind.len();
    }
    out.extend_from_slice(&hay[copied..]);
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    clippy::cast_ptr_alignment,
    reason = "vector intrinsics, raw loads and stores, and dispatch through function pointers"
)]
// The vector helpers must inline into the kernels compiled with AVX2: called, they would run
// without it (a closure in a kernel measured 70 times slower for that reason).
#[allow(clippy::inline_always)]
pub(crate) mod x86 {
    use alloc::vec::Vec;
    use core::arch::x86_64::{
        __m128i, __m256i, _mm_and_si128, _mm_cmpeq_epi8, _mm_load_si128, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128, _mm256_and_si256,
        _mm256_cmpeq_epi8, _mm256_load_si256, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_shuffle_epi8, _mm256_storeu_si256,
    };

    use super::{BLOCK, NEUTRALISED_INFIX, ROOM};
    use crate::marker::{self, Marker};

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

    // Rust 1.87 made these intrinsics safe to call where SSE2 is enabled, which on x86-64 is
    // everywhere; the crate's minimum Rust still needs the `unsafe` blocks.
    #[allow(unused_unsafe)]
    impl Vector for __m128i {
        const BYTES: usize = 16;

        #[inline(always)]
        unsafe fn splat(byte: u8) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_set1_epi8(i8::from_ne_bytes([byte])) }
        }

        #[inline(always)]
        unsafe fn load(ptr: *const u8) -> Self {
            // SAFETY: the caller passes 16 readable bytes; the load is unaligned.
            unsafe { _mm_loadu_si128(ptr.cast()) }
        }

        #[inline(always)]
        unsafe fn load_aligned(ptr: *const u8) -> Self {
            // SAFETY: the caller passes 16 readable bytes, aligned to 16.
            unsafe { _mm_load_si128(ptr.cast()) }
        }

        #[inline(always)]
        unsafe fn store(self, ptr: *mut u8) {
            // SAFETY: the caller passes 16 writable bytes; the store is unaligned.
            unsafe { _mm_storeu_si128(ptr.cast(), self) }
        }

        #[inline(always)]
        unsafe fn eq(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_cmpeq_epi8(self, other) }
        }

        #[inline(always)]
        unsafe fn or(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_or_si128(self, other) }
        }

        #[inline(always)]
        unsafe fn and(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_and_si128(self, other) }
        }

        #[inline(always)]
        unsafe fn lt_or_slash(self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline; so are the methods called.
            unsafe { self.eq(Self::splat(b'<')).or(self.eq(Self::splat(b'/'))) }
        }

        #[inline(always)]
        unsafe fn bits(self) -> u64 {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            let mask = unsafe { _mm_movemask_epi8(self) };
            u64::from(u32::from_ne_bytes(mask.to_ne_bytes()))
        }
    }

    /// For `vpshufb` by each byte's low nibble: `<` (0x3c) at index 0xc, `/` (0x2f) at 0xf, and
    /// elsewhere 0xff, which no byte the lookup keeps (top bit clear) can equal. A byte is `<`
    /// or `/` exactly when it equals its lookup: one shuffle and one compare, not two compares
    /// and an or. (The table is repeated for each 128-bit lane.)
    static LT_OR_SLASH: [u8; 32] = {
        let mut table = [0xff; 32];
        let mut lane = 0;
        while lane < 32 {
            table[lane + 0xc] = b'<';
            table[lane + 0xf] = b'/';
            lane += 16;
        }
        table
    };

    impl Vector for __m256i {
        const BYTES: usize = 32;

        #[inline(always)]
        unsafe fn splat(byte: u8) -> Self {
            // SAFETY: the caller has AVX2 (the trait's contract).
            unsafe { _mm256_set1_epi8(i8::from_ne_bytes([byte])) }
        }

        #[inline(always)]
        unsafe fn load(ptr: *const u8) -> Self {
            // SAFETY: the caller has AVX2 and passes 32 readable bytes; the load is unaligned.
            unsafe { _mm256_loadu_si256(ptr.cast()) }
        }

        #[inline(always)]
        unsafe fn load_aligned(ptr: *const u8) -> Self {
            // SAFETY: the caller has AVX2 and passes 32 readable bytes, aligned to 32.
            unsafe { _mm256_load_si256(ptr.cast()) }
        }

        #[inline(always)]
        unsafe fn store(self, ptr: *mut u8) {
            // SAFETY: the caller has AVX2 and passes 32 writable bytes; the store is unaligned.
            unsafe { _mm256_storeu_si256(ptr.cast(), self) }
        }

        #[inline(always)]
        unsafe fn eq(self, other: Self) -> Self {
            // SAFETY: the caller has AVX2 (the trait's contract).
            unsafe { _mm256_cmpeq_epi8(self, other) }
        }

        #[inline(always)]
        unsafe fn or(self, other: Self) -> Self {
            // SAFETY: the caller has AVX2 (the trait's contract).
            unsafe { _mm256_or_si256(self, other) }
        }

        #[inline(always)]
        unsafe fn and(self, other: Self) -> Self {
            // SAFETY: the caller has AVX2 (the trait's contract).
            unsafe { _mm256_and_si256(self, other) }
        }

        #[inline(always)]
        unsafe fn lt_or_slash(self) -> Self {
            // SAFETY: the caller has AVX2 (the trait's contract); the table is 32 bytes.
            unsafe { _mm256_shuffle_epi8(Self::load(LT_OR_SLASH.as_ptr()), self).eq(self) }
        }

        #[inline(always)]
        unsafe fn bits(self) -> u64 {
            // SAFETY: the caller has AVX2 (the trait's contract).
            let mask = unsafe { _mm256_movemask_epi8(self) };
            u64::from(u32::from_ne_bytes(mask.to_ne_bytes()))
        }
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
    fn first_marker(
        hay: &[u8],
        from: usize,
        start: usize,
        mut hits: u64,
    ) -> Option<(usize, Marker)> {
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

    /// [`super::find_marker`] with `V`.
    ///
    /// # Safety
    ///
    /// `V`'s contract.
    #[inline(always)]
    unsafe fn find<V: Vector>(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
        let mut at = from;
        let mut clean = 0;
        while at + BLOCK + LOOKAHEAD <= hay.len() {
            // SAFETY: the loop condition keeps `BLOCK + LOOKAHEAD` bytes readable at `at`;
            // nothing is copied.
            let (any, hits) =
                unsafe { block::<V, false>(hay.as_ptr().add(at), core::ptr::null_mut()) };
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
        #[cold]
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

    /// [`super::push_neutralised`] with `V`.
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
    unsafe fn push<V: Vector>(out: &mut Vec<u8>, hay: &[u8], from: usize) {
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
                let (_, hits) =
                    unsafe { block::<V, true>(src.add(at), sink.dst.add(sink.written)) };
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

    /// [`super::find_marker`] with SSE2.
    pub(crate) fn find_sse2(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { find::<__m128i>(hay, from) }
    }

    /// [`super::push_neutralised`] with SSE2.
    pub(crate) fn push_sse2(out: &mut Vec<u8>, hay: &[u8], from: usize) {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { push::<__m128i>(out, hay, from) }
    }

    /// [`super::find_marker`] with AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[cfg(any(feature = "std", test))] // Detecting AVX2 at run time needs `std`.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn find_avx2(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
        // SAFETY: this function is compiled with AVX2, and the caller guarantees the CPU has it.
        unsafe { find::<__m256i>(hay, from) }
    }

    /// [`super::push_neutralised`] with AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[cfg(any(feature = "std", test))]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn push_avx2(out: &mut Vec<u8>, hay: &[u8], from: usize) {
        // SAFETY: this function is compiled with AVX2, and the caller guarantees the CPU has it.
        unsafe { push::<__m256i>(out, hay, from) }
    }

    #[cfg(feature = "std")]
    pub(crate) use dispatch::{find_marker, push_neutralised};

    /// Without `std` there is no run-time detection: SSE2, always present, does the work.
    #[cfg(not(feature = "std"))]
    pub(crate) use {find_sse2 as find_marker, push_sse2 as push_neutralised};

    /// Chooses each kernel once per process, the way `memchr` does: an atomic pointer starts
    /// at a function that detects the CPU's features, stores the kernel it chose in the
    /// pointer, and calls it; every later call goes straight to that kernel.
    #[cfg(feature = "std")]
    pub(crate) mod dispatch {
        use alloc::vec::Vec;
        use core::sync::atomic::{AtomicPtr, Ordering};

        use super::{find_avx2, find_sse2, push_avx2, push_sse2};
        use crate::marker::Marker;

        pub(crate) type Find = unsafe fn(&[u8], usize) -> Option<(usize, Marker)>;
        pub(crate) type Push = unsafe fn(&mut Vec<u8>, &[u8], usize);

        pub(crate) static FIND: AtomicPtr<()> = AtomicPtr::new(detect_find as Find as *mut ());
        pub(crate) static PUSH: AtomicPtr<()> = AtomicPtr::new(detect_push as Push as *mut ());

        fn has_avx2() -> bool {
            std::arch::is_x86_feature_detected!("avx2")
        }

        /// # Safety
        ///
        /// None: it is `unsafe` only to have the kernels' type.
        unsafe fn detect_find(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
            let kernel: Find = if has_avx2() { find_avx2 } else { find_sse2 };
            FIND.store(kernel as *mut (), Ordering::Relaxed);
            // SAFETY: the kernel was chosen for this CPU's features.
            unsafe { kernel(hay, from) }
        }

        /// # Safety
        ///
        /// None: it is `unsafe` only to have the kernels' type.
        unsafe fn detect_push(out: &mut Vec<u8>, hay: &[u8], from: usize) {
            let kernel: Push = if has_avx2() { push_avx2 } else { push_sse2 };
            PUSH.store(kernel as *mut (), Ordering::Relaxed);
            // SAFETY: the kernel was chosen for this CPU's features.
            unsafe { kernel(out, hay, from) }
        }

        #[inline]
        pub(crate) fn find_marker(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
            let kernel = FIND.load(Ordering::Relaxed);
            // SAFETY: `FIND` only ever holds a `Find`: `detect_find`, or the kernel it chose
            // for this CPU. Either may be called with any arguments.
            unsafe { core::mem::transmute::<*mut (), Find>(kernel)(hay, from) }
        }

        #[inline]
        pub(crate) fn push_neutralised(out: &mut Vec<u8>, hay: &[u8], from: usize) {
            let kernel = PUSH.load(Ordering::Relaxed);
            // SAFETY: `PUSH` only ever holds a `Push`: `detect_push`, or the kernel it chose
            // for this CPU. Either may be called with any arguments.
            unsafe { core::mem::transmute::<*mut (), Push>(kernel)(out, hay, from) }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    /// Whether a marker starts at `hay[at]`, straight from the rule, byte by byte.
    fn naive_marker_at(hay: &[u8], at: usize) -> Option<Marker> {
        if hay[at] != b'<' {
            return None;
        }
        let (kind, name) = if hay.get(at + 1) == Some(&b'/') {
            (Marker::Closer, at + 2)
        } else {
            (Marker::Opener, at + 1)
        };
        let spelled = hay.get(name..name + 17)?;
        spelled
            .eq_ignore_ascii_case(b"untrusted-content")
            .then_some(kind)
    }

    fn naive_markers(hay: &[u8], from: usize) -> Vec<(usize, Marker)> {
        (from..hay.len())
            .filter_map(|at| naive_marker_at(hay, at).map(|kind| (at, kind)))
            .collect()
    }

    fn naive_neutralised(hay: &[u8], from: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for at in from..hay.len() {
            out.push(hay[at]);
            if naive_marker_at(hay, at).is_some() {
                out.extend_from_slice(NEUTRALISED_INFIX.as_bytes());
            }
        }
        out
    }

    type Find<'a> = &'a dyn Fn(&[u8], usize) -> Option<(usize, Marker)>;
    type Push<'a> = &'a dyn Fn(&mut Vec<u8>, &[u8], usize);

    /// Calls `check` with every way this machine can find markers.
    fn each_find(mut check: impl FnMut(&str, Find<'_>)) {
        check("dispatch", &find_marker);
        check("scalar", &find_marker_scalar);
        #[cfg(target_arch = "x86_64")]
        {
            check("sse2", &x86::find_sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present, as just checked.
                #[allow(unsafe_code)]
                check("avx2", &|hay: &[u8], from| unsafe {
                    x86::find_avx2(hay, from)
                });
            }
        }
    }

    /// Calls `check` with every way this machine can copy content neutralised (and with the
    /// text wrapper when `text`).
    fn each_push(text: bool, mut check: impl FnMut(&str, Push<'_>)) {
        check("dispatch", &push_neutralised);
        check("scalar", &push_neutralised_scalar);
        if text {
            check("str", &|out: &mut Vec<u8>, hay: &[u8], from| {
                // Text in, text out: the `str` wrapper on the same bytes, when they are text.
                let (Ok(prefix), Ok(text)) = (std::str::from_utf8(out), std::str::from_utf8(hay))
                else {
                    return push_neutralised(out, hay, from);
                };
                if !text.is_char_boundary(from) {
                    return push_neutralised(out, hay, from);
                }
                let mut string = String::with_capacity(out.capacity());
                string.push_str(prefix);
                push_neutralised_str(&mut string, text, from);
                *out = string.into_bytes();
            });
        }
        #[cfg(target_arch = "x86_64")]
        {
            check("sse2", &x86::push_sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present, as just checked.
                #[allow(unsafe_code)]
                check("avx2", &|out: &mut Vec<u8>, hay: &[u8], from| unsafe {
                    x86::push_avx2(out, hay, from);
                });
            }
        }
    }

    /// Every marker at or after `from`, by calling `find` marker after marker.
    fn all_markers(hay: &[u8], from: usize, find: Find<'_>) -> Vec<(usize, Marker)> {
        let mut found = Vec::new();
        let mut at = from;
        while let Some((lt, kind)) = find(hay, at) {
            assert!(lt >= at, "a marker before the start");
            found.push((lt, kind));
            at = lt + 1;
        }
        found
    }

    /// Checks every path on `hay` from `from`: the markers found, and the copy appended after a
    /// prefix of `prefix` bytes (so the copy starts at every alignment) into a vector with just
    /// the prefix's capacity (so each marker's infix makes it grow) or with ample room.
    fn check_all(
        hay: &[u8],
        from: usize,
        prefix: usize,
        text: bool,
        context: &dyn core::fmt::Display,
    ) {
        let markers = naive_markers(hay, from);
        each_find(|name, find| {
            assert_eq!(
                all_markers(hay, from, find),
                markers,
                "{name} find: {context}"
            );
        });
        let mut expected = vec![b'p'; prefix];
        expected.extend_from_slice(&naive_neutralised(hay, from));
        each_push(text, |name, push| {
            for room in [0, hay.len() * 3 + 64] {
                let mut out = Vec::with_capacity(prefix + room);
                out.resize(prefix, b'p');
                push(&mut out, hay, from);
                assert!(
                    out == expected,
                    "{name} push, room {room}: {context}\n got {:?}\nwant {:?}",
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&expected)
                );
            }
        });
    }

    /// Checks every way to copy `hay[from..]` neutralised into a vector with ample room where the
    /// copy starts `misalignment` bytes past a 32-byte boundary (which every vector size
    /// divides).
    fn check_push_at(
        hay: &[u8],
        from: usize,
        misalignment: usize,
        context: &dyn core::fmt::Display,
    ) {
        let expected = naive_neutralised(hay, from);
        each_push(false, |name, push| {
            let mut out: Vec<u8> = Vec::with_capacity(32 + hay.len() * 3 + 64);
            let pad = (misalignment + 32 - out.as_ptr().addr() % 32) % 32;
            out.resize(pad, b'p');
            push(&mut out, hay, from);
            assert!(
                out[..pad].iter().all(|&byte| byte == b'p') && out[pad..] == expected[..],
                "{name} push, copy {misalignment} past alignment: {context}\n got {:?}\nwant {:?}",
                String::from_utf8_lossy(&out[pad..]),
                String::from_utf8_lossy(&expected)
            );
        });
    }

    /// `len` dots with `pattern` at `at`, cut short where the input ends.
    fn dots_with(len: usize, at: usize, pattern: &[u8]) -> Vec<u8> {
        let mut hay = vec![b'.'; len];
        let end = (at + pattern.len()).min(len);
        hay[at..end].copy_from_slice(&pattern[..end - at]);
        hay
    }

    /// Markers, pairs that start no marker, and near misses at every offset of inputs of the
    /// given lengths, read from the start, from around the pattern (from its `/` leaves a
    /// closer's `<` before the start) and from the end.
    fn sweep(lengths: core::ops::Range<usize>) {
        let patterns: [&[u8]; 7] = [
            b"</untrusted-content",
            b"<UNTRUSTED-CONTENT",
            b"<u",
            b"</U",
            b"</x",
            b"/u",
            b"x/untrusted-content",
        ];
        for len in lengths {
            for pattern in patterns {
                for at in 0..len {
                    let hay = dots_with(len, at, pattern);
                    for from in [0, at.saturating_sub(1), at, at + 1, len] {
                        let from = from.min(len);
                        let context = format_args!("len {len}, {pattern:?} at {at}, from {from}");
                        check_all(&hay, from, at % 3, false, &context);
                    }
                }
            }
        }
    }

    // Lengths that cross the ends of the two-block and one-block loops (each with a byte of
    // lookahead) up to three blocks: every hit bit, a closer whose `<` ends one block and
    // whose `/` starts the next (or the tail), the shifted loads at a block's end and the
    // padded tail must all agree. Two tests, so that they run side by side.

    #[test]
    fn every_offset_and_tail_length_to_two_blocks() {
        sweep(0..2 * BLOCK + 32);
    }

    #[test]
    fn every_offset_and_tail_length_to_three_blocks() {
        sweep(2 * BLOCK + 32..3 * BLOCK + 4);
    }

    #[test]
    fn every_alignment_of_the_clean_text_loop() {
        // Text with no `<` runs four aligned vectors at a time: `find` gets there after two
        // clean blocks, `push` after a period of steps whose last holds no `<` (with the copy
        // aligned from the start, at `from + PERIOD * STEP`). Enter that loop at every
        // alignment (the start moves by one byte each time), and put the `<` that ends it at
        // every offset of the first two chunks and of the bytes too few for a third, before
        // the end of the input: the step back to an aligned address, the position found and
        // the copy to where it belongs must all agree. For `push`, also put it in the period's
        // last step, which then does not hand over.
        const RUN: usize = 32 + 2 * 128 + BLOCK + 8;
        #[cfg(target_arch = "x86_64")]
        const PERIOD: usize = x86::PERIOD * x86::STEP;
        #[cfg(not(target_arch = "x86_64"))]
        const PERIOD: usize = BLOCK;
        for pattern in [&b"<untrusted-content"[..], b"</UNTRUSTED-CONTENT", b"<"] {
            for from in 0..32 {
                let len = from + BLOCK + RUN;
                for at in (from + BLOCK)..len {
                    let hay = dots_with(len, at, pattern);
                    let context = format_args!("{pattern:?} at {at}, from {from}");
                    check_all(&hay, from, from % 5, true, &context);
                }
                let len = from + PERIOD + RUN;
                for at in (from + PERIOD - 2 * BLOCK)..len {
                    let hay = dots_with(len, at, pattern);
                    let context = format_args!("{pattern:?} at {at}, from {from}");
                    check_push_at(&hay, from, 0, &context);
                }
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_alignment_of_the_copy() {
        // After a period of steps with no hit, `push` brings the copy back to an aligned address
        // by passing a block's first bytes alone, unless they hold a hit. Start the copy at
        // every alignment, and put a marker, a hit that is none, or two markers back to back
        // (the second moves the copy again) at every offset around those bytes: before them,
        // within, across their end, just after.
        const PERIOD: usize = x86::PERIOD * x86::STEP;
        const LEN: usize = PERIOD + 2 * x86::STEP + BLOCK + 8;
        let patterns: [&[u8]; 4] = [
            b"</untrusted-content",
            b"<UNTRUSTED-CONTENT",
            b"x/u",
            b"<untrusted-content</untrusted-content",
        ];
        for misalignment in 0..32 {
            for pattern in patterns {
                for at in PERIOD - 40..PERIOD + 40 {
                    let hay = dots_with(LEN, at, pattern);
                    let context = format_args!("{pattern:?} at {at}");
                    check_push_at(&hay, 0, misalignment, &context);
                }
            }
        }
    }

    /// Bytes from an alphabet that makes markers, candidates, near misses and plain bytes likely.
    fn hay() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"<untrusted-content".to_vec()),
            Just(b"</UNTRUSTED-CONTENT".to_vec()),
            Just(b"<UnTrUsTeD-cOnTeNt>".to_vec()),
            Just(b"<untrusted-conten".to_vec()),
            Just(b"</untrusted_content".to_vec()),
            Just(b"<".to_vec()),
            Just(b"</".to_vec()),
            Just(b"u".to_vec()),
            Just(vec![b'U' ^ 0x80]),
            Just(vec![b'<' | 0x20]),
            proptest::collection::vec(any::<u8>(), 0..8),
            Just(vec![b'.'; 100]),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn every_path_equals_the_naive_rule(
            hay in hay(),
            shift in 0usize..32,
            from in any::<prop::sample::Index>(),
            prefix in 0usize..40,
        ) {
            // The input at every alignment of its address, from anywhere in it.
            let mut backing = vec![b'.'; shift];
            backing.extend_from_slice(&hay);
            let hay = &backing[shift..];
            let from = from.index(hay.len() + 1);
            check_all(hay, from, prefix, true, &format_args!("shift {shift}, from {from}"));
        }
    }

    #[test]
    fn text_stays_text() {
        // Multi-byte characters cut by every block and chunk boundary, with markers between
        // them: the `str` kernel's output is the `String` the naive rule gives.
        let unit = "é</untrusted-content>€🦀 plain words, no markup at all ";
        let text = unit.repeat(20);
        for from in (0..unit.len()).filter(|&at| text.is_char_boundary(at)) {
            let mut out = String::from("→");
            push_neutralised_str(&mut out, &text, from);
            let mut expected = String::from("→");
            expected
                .push_str(&String::from_utf8(naive_neutralised(text.as_bytes(), from)).unwrap());
            assert_eq!(out, expected, "from {from}");
        }
    }

    #[test]
    #[should_panic(expected = "character boundary")]
    fn text_must_start_on_a_character_boundary() {
        push_neutralised_str(&mut String::new(), "é", 1);
    }

    #[test]
    fn output_grows_only_for_markers() {
        // With room for the rest of the input, clean content never reallocates the output...
        let clean = "<p>plain</p> words ".repeat(100);
        let mut out = Vec::with_capacity(clean.len());
        let before = out.as_ptr();
        push_neutralised(&mut out, clean.as_bytes(), 0);
        assert_eq!((out.as_ptr(), out.capacity()), (before, clean.len()));
        // ...and each marker adds exactly its infix.
        let dirty = "<p>plain</p></untrusted-content> ".repeat(100);
        let mut out = Vec::new();
        push_neutralised(&mut out, dirty.as_bytes(), 0);
        assert_eq!(out.len(), dirty.len() + 100 * NEUTRALISED_INFIX.len());
    }

    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    #[test]
    fn dispatch_is_decided_once() {
        use core::sync::atomic::Ordering;
        // After one call each, the pointers hold the kernels for this CPU, not the detector.
        find_marker(b"", 0);
        push_neutralised(&mut Vec::new(), b"", 0);
        let (find, push) = (
            x86::dispatch::FIND.load(Ordering::Relaxed),
            x86::dispatch::PUSH.load(Ordering::Relaxed),
        );
        if std::arch::is_x86_feature_detected!("avx2") {
            assert_eq!(find, x86::find_avx2 as x86::dispatch::Find as *mut ());
            assert_eq!(push, x86::push_avx2 as x86::dispatch::Push as *mut ());
        } else {
            assert_eq!(find, x86::find_sse2 as x86::dispatch::Find as *mut ());
            assert_eq!(push, x86::push_sse2 as x86::dispatch::Push as *mut ());
        }
    }
}
