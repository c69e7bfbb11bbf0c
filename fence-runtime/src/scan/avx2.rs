//! The AVX2 vector, and the kernels it makes: for CPUs that have it, found at run time.

#![allow(unsafe_code, reason = "vector intrinsics")]
#![allow(
    clippy::inline_always,
    reason = "see `vector`: the helpers inline into the kernels"
)]

#[cfg(any(feature = "std", test))]
use alloc::vec::Vec;
use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_load_si256, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm256_shuffle_epi8,
    _mm256_storeu_si256,
};

#[cfg(any(feature = "std", test))]
use super::vector;
use super::vector::Vector;
#[cfg(any(feature = "std", test))]
use crate::marker::Marker;

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

/// [`find_marker`](super::find_marker) with AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(any(feature = "std", test))] // Detecting AVX2 at run time needs `std`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn find(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    // SAFETY: this function is compiled with AVX2, and the caller guarantees the CPU has it.
    unsafe { vector::find::<__m256i>(hay, from) }
}

/// [`push_neutralised`](super::push_neutralised) with AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(any(feature = "std", test))]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn push(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    // SAFETY: this function is compiled with AVX2, and the caller guarantees the CPU has it.
    unsafe { vector::push::<__m256i>(out, hay, from) }
}
