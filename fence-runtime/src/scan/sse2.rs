//! The SSE2 vector, part of the x86-64 baseline, and the kernels it makes.

#![allow(unsafe_code, reason = "vector intrinsics")]
#![allow(
    clippy::inline_always,
    reason = "see `vector`: the helpers inline into the kernels"
)]

use alloc::vec::Vec;
use core::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_load_si128, _mm_loadu_si128, _mm_movemask_epi8,
    _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
};

use super::vector::{self, Vector};
use crate::marker::Marker;

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

/// [`find_marker`](super::find_marker) with SSE2.
pub(crate) fn find(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe { vector::find::<__m128i>(hay, from) }
}

/// [`push_neutralised`](super::push_neutralised) with SSE2.
pub(crate) fn push(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe { vector::push::<__m128i>(out, hay, from) }
}
