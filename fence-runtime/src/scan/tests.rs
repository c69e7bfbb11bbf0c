//! Every path against one naive oracle, `fence-reference`: the markers found, and the copy.
//!
//! The sweeps put markers, near misses and hits that are none at every offset around the
//! vector paths' block ends, tails and alignments; the property test takes random input.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use fence_reference as reference;
use proptest::prelude::*;

use super::*;
use crate::marker::NEUTRALISED_INFIX;

/// The vector paths' block: the sweeps cross its ends, on the portable path too.
const BLOCK: usize = 64;
#[cfg(all(target_arch = "x86_64", not(fence_portable)))]
const _: () = assert!(BLOCK == vector::BLOCK);

/// The markers at or after `from`, by the oracle: where each one's `<` is, and its kind.
fn oracle_markers(hay: &[u8], from: usize) -> Vec<(usize, Marker)> {
    let closers = reference::closers(hay);
    reference::markers(hay)
        .into_iter()
        .filter(|&at| at >= from)
        .map(|at| {
            let kind = if closers.contains(&at) {
                Marker::Closer
            } else {
                Marker::Opener
            };
            (at, kind)
        })
        .collect()
}

/// `hay[from..]` neutralised, by the oracle: a marker is decided on the bytes from its `<` on,
/// so cutting `hay` at `from` changes none.
fn oracle_neutralised(hay: &[u8], from: usize) -> Vec<u8> {
    reference::neutralise(&hay[from..])
}

type Find<'a> = &'a dyn Fn(&[u8], usize) -> Option<(usize, Marker)>;
type Push<'a> = &'a dyn Fn(&mut Vec<u8>, &[u8], usize);

/// Calls `check` with every way this machine can find markers.
fn each_find(mut check: impl FnMut(&str, Find<'_>)) {
    check("dispatch", &find_marker);
    check("generic", &generic::find_marker);
    #[cfg(all(target_arch = "x86_64", not(fence_portable)))]
    {
        check("sse2", &sse2::find);
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present, as just checked.
            #[allow(unsafe_code)]
            check("avx2", &|hay: &[u8], from| unsafe { avx2::find(hay, from) });
        }
    }
}

/// Calls `check` with every way this machine can copy content neutralised (and with the
/// text wrapper when `text`).
fn each_push(text: bool, mut check: impl FnMut(&str, Push<'_>)) {
    check("dispatch", &push_neutralised);
    check("generic", &generic::push_neutralised);
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
    #[cfg(all(target_arch = "x86_64", not(fence_portable)))]
    {
        check("sse2", &sse2::push);
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present, as just checked.
            #[allow(unsafe_code)]
            check("avx2", &|out: &mut Vec<u8>, hay: &[u8], from| unsafe {
                avx2::push(out, hay, from);
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
fn check_all(hay: &[u8], from: usize, prefix: usize, text: bool, context: &dyn core::fmt::Display) {
    let markers = oracle_markers(hay, from);
    each_find(|name, find| {
        assert_eq!(
            all_markers(hay, from, find),
            markers,
            "{name} find: {context}"
        );
    });
    let mut expected = vec![b'p'; prefix];
    expected.extend_from_slice(&oracle_neutralised(hay, from));
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
fn check_push_at(hay: &[u8], from: usize, misalignment: usize, context: &dyn core::fmt::Display) {
    let expected = oracle_neutralised(hay, from);
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
    #[cfg(all(target_arch = "x86_64", not(fence_portable)))]
    const PERIOD: usize = vector::PERIOD * vector::STEP;
    // The portable path has no period: any length that keeps the sweep below in bounds.
    #[cfg(not(all(target_arch = "x86_64", not(fence_portable))))]
    const PERIOD: usize = 2 * BLOCK;
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
#[cfg(all(target_arch = "x86_64", not(fence_portable)))]
fn every_alignment_of_the_copy() {
    // After a period of steps with no hit, `push` brings the copy back to an aligned address
    // by passing a block's first bytes alone, unless they hold a hit. Start the copy at
    // every alignment, and put a marker, a hit that is none, or two markers back to back
    // (the second moves the copy again) at every offset around those bytes: before them,
    // within, across their end, just after.
    const PERIOD: usize = vector::PERIOD * vector::STEP;
    const LEN: usize = PERIOD + 2 * vector::STEP + BLOCK + 8;
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
    fn every_path_equals_the_oracle(
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
fn finds_markers_forwards() {
    let hay = b"a<b</untrusted-content> <UNTRUSTED-CONTENT x";
    assert_eq!(find_marker(hay, 0), Some((3, Marker::Closer)));
    assert_eq!(find_marker(hay, 4), Some((24, Marker::Opener)));
    assert_eq!(find_marker(hay, 25), None);
}

#[test]
fn text_stays_text() {
    // Multi-byte characters cut by every block and chunk boundary, with markers between
    // them: the `str` kernel's output is the `String` the oracle gives.
    let unit = "é</untrusted-content>€🦀 plain words, no markup at all ";
    let text = unit.repeat(20);
    for from in (0..unit.len()).filter(|&at| text.is_char_boundary(at)) {
        let mut out = String::from("→");
        push_neutralised_str(&mut out, &text, from);
        let mut expected = String::from("→");
        expected.push_str(&String::from_utf8(oracle_neutralised(text.as_bytes(), from)).unwrap());
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

#[cfg(all(target_arch = "x86_64", not(fence_portable), feature = "std"))]
#[test]
fn dispatch_is_decided_once() {
    use core::sync::atomic::Ordering;
    // After one call each, the pointers hold the kernels for this CPU, not the detector.
    find_marker(b"", 0);
    push_neutralised(&mut Vec::new(), b"", 0);
    let (find, push) = (
        dispatch::FIND.load(Ordering::Relaxed),
        dispatch::PUSH.load(Ordering::Relaxed),
    );
    if std::arch::is_x86_feature_detected!("avx2") {
        assert_eq!(find, avx2::find as dispatch::Find as *mut ());
        assert_eq!(push, avx2::push as dispatch::Push as *mut ());
    } else {
        assert_eq!(find, sse2::find as dispatch::Find as *mut ());
        assert_eq!(push, sse2::push as dispatch::Push as *mut ());
    }
}
