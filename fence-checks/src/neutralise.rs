//! `neutralise_bytes`, `neutralise` and `fence`'s content against the naive reference matcher,
//! on the input and on shifted, repeated and padded copies of it, so that markers land at every
//! offset of the scan's 64-byte blocks, in both its vector loop and its scalar tail, and
//! after a kilobyte of filler.
//!
//! Invariants, for the input, its first few suffixes and a repetition of it (padded copies at
//! every block offset get the first two):
//! - the output equals the reference (a byte loop over the marker rule);
//! - it is `Cow::Borrowed`, pointing at the input, exactly when the input holds no marker;
//! - its length is the input's plus 20 per marker;
//! - it holds no marker, so neutralising it again returns it borrowed (idempotence);
//! - for UTF-8 input, `neutralise` gives the same bytes and borrows in the same cases, and
//!   `fence` (which counts markers for its one exact-size allocation) fences exactly that.
use std::borrow::Cow;

use fence_reference as reference;
use fence_runtime::{Source, fence, neutralise, neutralise_bytes};

/// Checks every invariant on `data`, its suffixes, a repetition and padded copies; panics on
/// the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// fence_checks::neutralise::check(b"a </UNTRUSTED-content> b <untrusted-conten");
/// ```
pub fn check(data: &[u8]) {
    check_one(data);
    for shift in 1..=3.min(data.len()) {
        check_one(&data[shift..]);
    }
    let Some(&first) = data.first() else { return };

    // Repeated past three blocks: each marker of the data lands at several block offsets.
    let mut repeated = Vec::with_capacity(data.len() + 200);
    while repeated.len() < 200 {
        repeated.extend_from_slice(data);
    }
    check_one(&repeated);

    // Padded with a filler the data chooses (a `<` or `/` filler can complete a marker the data
    // starts, a `u` one can follow a `<` the data ends with), at every offset of a 64-byte
    // block, and ending at the very end of the input or a few bytes before it: so that every
    // marker meets every block boundary and the end of the vector loop. Coverage cannot steer
    // the fuzzer towards a missed candidate, so the offsets are swept, not chosen.
    let filler = [b'.', b'<', b'/', b'u'][usize::from(first >> 6)];
    let befores = if data.len() <= 512 {
        (0..64).collect::<Vec<usize>>()
    } else {
        let chosen = usize::from(first % 64);
        vec![0, 1, 2, 61, 62, 63, chosen]
    };
    let mut padded = Vec::with_capacity(64 + data.len() + 130);
    for before in befores {
        for after in [0, 1, 2, 130] {
            padded.clear();
            padded.resize(before, filler);
            padded.extend_from_slice(data);
            padded.resize(padded.len() + after, filler);
            check_output(&padded);
        }
    }

    // The data twice, around a stretch of filler a little over 1 KiB long: every 1 KiB of
    // steps without a hit, the copy loop brings its copy back to an aligned address or hands
    // text without `<` to a loop of its own, and the second copy of the data meets those at an
    // offset the stretch's length moves.
    for extra in [0, 1, 2, 31, 32, 33, 63, usize::from(first % 64)] {
        padded.clear();
        padded.extend_from_slice(data);
        padded.resize(data.len() + 1024 + extra, filler);
        padded.extend_from_slice(data);
        check_output(&padded);
    }
}

/// The output equals the reference's, borrowed exactly when there is no marker.
fn check_output(input: &[u8]) {
    let out = neutralise_bytes(input);
    assert_eq!(
        *out,
        *reference::neutralise(input),
        "neutralise_bytes differs from the reference"
    );
    let borrowed = matches!(out, Cow::Borrowed(_));
    assert_eq!(
        borrowed,
        reference::markers(input).is_empty(),
        "borrowed or not, wrongly"
    );
}

/// Every invariant.
fn check_one(input: &[u8]) {
    let markers = reference::markers(input);
    let expected = reference::neutralise(input);
    let out = neutralise_bytes(input);
    assert_eq!(
        *out, *expected,
        "neutralise_bytes differs from the reference"
    );
    match &out {
        Cow::Borrowed(borrowed) => {
            assert!(markers.is_empty(), "borrowed although it had markers");
            assert!(
                std::ptr::eq(borrowed.as_ptr(), input.as_ptr()),
                "borrowed, but not the input"
            );
        }
        Cow::Owned(_) => assert!(!markers.is_empty(), "copied although it had no marker"),
    }
    assert_eq!(
        out.len(),
        input.len() + reference::INFIX.len() * markers.len()
    );
    assert!(reference::markers(&out).is_empty(), "a marker survived");
    assert!(
        matches!(neutralise_bytes(&out), Cow::Borrowed(_)),
        "not idempotent"
    );

    if let Ok(text) = std::str::from_utf8(input) {
        let out_text = neutralise(text);
        assert_eq!(
            out_text.as_bytes(),
            &*out,
            "neutralise differs from neutralise_bytes"
        );
        assert_eq!(matches!(out_text, Cow::Borrowed(_)), markers.is_empty());
        let block = fence(&Source::tool("t"), text);
        assert_eq!(block.content(), &*out_text);
        assert_eq!(
            block.as_str().as_bytes(),
            reference::block_bytes("tool:t", input)
        );
    }
}
