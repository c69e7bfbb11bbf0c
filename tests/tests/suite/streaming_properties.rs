//! Chunking-independence, with proptest: inputs up to 1 MiB cut into random chunks of 1 byte to
//! 64 KiB give `neutralise_bytes` of the whole input through the `Neutraliser`, and `fence` of it
//! through a `FenceWriter`; and after every push the neutraliser holds back exactly the bytes
//! that could still begin a marker — never more than 18, never one it could have let go.
//!
//! Inputs are built from marker-heavy pieces (whole markers in random casings, every prefix of
//! one, neutralised markers, stray `<` and `/`, bytes that are not UTF-8) tiled with runs of
//! filler, so that chunk boundaries land inside markers often.

use std::io::Write;

use fence_reference::{self as reference, MAX_HELD};
use fence_runtime::{FenceWriter, Neutraliser, Source, neutralise_bytes};
use proptest::collection::vec;
use proptest::prelude::*;

fn piece() -> impl Strategy<Value = Vec<u8>> {
    let casing = |word: &'static [u8]| {
        vec(any::<bool>(), word.len()).prop_map(move |upper| {
            word.iter()
                .zip(upper)
                .map(|(&b, up)| if up { b.to_ascii_uppercase() } else { b })
                .collect::<Vec<u8>>()
        })
    };
    prop_oneof![
        casing(b"</untrusted-content>"),
        casing(b"<untrusted-content source=tool:x>"),
        (casing(b"</untrusted-content"), 0..19usize).prop_map(|(m, n)| m[..n].to_vec()),
        (casing(b"<untrusted-content"), 0..18usize).prop_map(|(m, n)| m[..n].to_vec()),
        Just(b"<!MURMUR-NEUTRALISED!/untrusted-content>".to_vec()),
        Just(b"<<</".to_vec()),
        Just("é€𝄞".as_bytes().to_vec()),
        vec(any::<u8>(), 0..32),
        (any::<u8>(), 0..4096usize).prop_map(|(byte, n)| vec![byte; n]),
        (0..2048usize).prop_map(|n| b"<p>some html, a < b </p>\n".repeat(n / 24 + 1)),
    ]
}

/// An input of `len` bytes tiled from marker-heavy pieces.
fn input(max: usize) -> impl Strategy<Value = Vec<u8>> {
    (vec(piece(), 1..48), 0..=max).prop_map(|(pieces, len)| {
        let mut input = Vec::with_capacity(len);
        if pieces.iter().all(Vec::is_empty) {
            return input;
        }
        while input.len() < len {
            for piece in &pieces {
                input.extend_from_slice(piece);
            }
        }
        input.truncate(len);
        input
    })
}

/// Chunk sizes, used in turn and cycled: 1 byte to 64 KiB, with small sizes common.
fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    vec(
        prop_oneof![3 => 1..=32usize, 2 => 1..=4096usize, 1 => 1..=65_536usize],
        1..24,
    )
}

fn chunked<'a>(input: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = input;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at(size.min(rest.len()));
        chunks.push(chunk);
        rest = after;
    }
    chunks
}

/// Pushes the chunks, checking after each push that the neutraliser holds back exactly what it
/// must; returns the output.
fn push_checked(input: &[u8], chunks: &[&[u8]]) -> Result<Vec<u8>, TestCaseError> {
    let mut neutraliser = Neutraliser::new();
    let mut out = Vec::new();
    let mut seen = 0;
    for chunk in chunks {
        neutraliser.push_bytes(chunk, &mut out);
        seen += chunk.len();
        prop_assert!(neutraliser.held().len() <= MAX_HELD);
        prop_assert_eq!(neutraliser.held(), reference::partial_tail(&input[..seen]));
    }
    neutraliser.finish_bytes(&mut out);
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_chunkings_of_up_to_1_mib_equal_one_shot(
        input in input(1 << 20),
        sizes in chunk_sizes(),
    ) {
        let chunks = chunked(&input, &sizes);
        let out = push_checked(&input, &chunks)?;
        prop_assert!(out == *neutralise_bytes(&input), "the neutraliser's output differs");
        prop_assert!(out == reference::neutralise(&input), "the neutraliser differs from the reference");

        let source = Source::tool("t");
        let mut writer = FenceWriter::new(Vec::new(), &source).unwrap();
        for chunk in &chunks {
            writer.write_all(chunk).unwrap();
            prop_assert!(writer.held().len() <= MAX_HELD);
        }
        let block = writer.finish().unwrap();
        prop_assert!(block == reference::block_bytes(source.as_str(), &input), "the FenceWriter's block differs");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// On small inputs, the output so far is exactly the neutralised input so far, less the
    /// bytes held back: nothing is delayed that need not be.
    #[test]
    fn after_every_push_the_output_is_the_neutralised_input_but_the_held_tail(
        input in input(2048),
        sizes in vec(1..=40usize, 1..8),
    ) {
        let mut neutraliser = Neutraliser::new();
        let mut out = Vec::new();
        let mut seen = 0;
        for chunk in chunked(&input, &sizes) {
            neutraliser.push_bytes(chunk, &mut out);
            seen += chunk.len();
            let held = neutraliser.held().len();
            prop_assert_eq!(&input[seen - held..seen], neutraliser.held());
            prop_assert!(out == *neutralise_bytes(&input[..seen - held]));
        }
    }
}

#[test]
fn the_held_back_buffer_reaches_18_bytes_and_never_more() {
    let mut most = 0;
    for upper in [false, true] {
        for marker in [&b"</untrusted-content"[..], b"<untrusted-content"] {
            let marker: Vec<u8> = if upper {
                marker.to_ascii_uppercase()
            } else {
                marker.to_vec()
            };
            // Every proper prefix of the marker (a `<`, an optional `/` and a part of the
            // name), fed a byte at a time, then broken off.
            for len in 1..marker.len() {
                let mut neutraliser = Neutraliser::new();
                let mut out = Vec::new();
                for byte in &marker[..len] {
                    neutraliser.push_bytes(std::slice::from_ref(byte), &mut out);
                    most = most.max(neutraliser.held().len());
                    assert!(neutraliser.held().len() <= MAX_HELD);
                }
                neutraliser.push_bytes(b"!", &mut out);
                assert!(neutraliser.held().is_empty());
                neutraliser.finish_bytes(&mut out);
                let mut expected = marker[..len].to_vec();
                expected.push(b'!');
                assert_eq!(out, expected);
            }
        }
    }
    assert_eq!(most, MAX_HELD);
}
