//! Each kernel chosen once per process, the way `memchr` does.
//!
//! An atomic pointer starts at a function that detects the CPU's features. It stores the kernel
//! it chose in the pointer, and calls it. Every later call goes straight to that kernel, with
//! one indirect call and no detection. Detecting needs `std`.

#![allow(unsafe_code, reason = "calls through function pointers")]

use alloc::vec::Vec;
use core::sync::atomic::{AtomicPtr, Ordering};

use super::{avx2, sse2};
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
    let kernel: Find = if has_avx2() { avx2::find } else { sse2::find };
    FIND.store(kernel as *mut (), Ordering::Relaxed);
    // SAFETY: the kernel was chosen for this CPU's features.
    unsafe { kernel(hay, from) }
}

/// # Safety
///
/// None: it is `unsafe` only to have the kernels' type.
unsafe fn detect_push(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    let kernel: Push = if has_avx2() { avx2::push } else { sse2::push };
    PUSH.store(kernel as *mut (), Ordering::Relaxed);
    // SAFETY: the kernel was chosen for this CPU's features.
    unsafe { kernel(out, hay, from) }
}

#[inline]
pub(crate) fn find_marker(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    let kernel = FIND.load(Ordering::Relaxed);
    // SAFETY: `FIND` only ever holds a `Find`: `detect_find`, or the kernel it chose for this
    // CPU. Either may be called with any arguments.
    unsafe { core::mem::transmute::<*mut (), Find>(kernel)(hay, from) }
}

#[inline]
pub(crate) fn push_neutralised(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    let kernel = PUSH.load(Ordering::Relaxed);
    // SAFETY: `PUSH` only ever holds a `Push`: `detect_push`, or the kernel it chose for this
    // CPU. Either may be called with any arguments.
    unsafe { core::mem::transmute::<*mut (), Push>(kernel)(out, hay, from) }
}
