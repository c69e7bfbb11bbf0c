//! Exhaustive split points: every input of the core exact-output tables (`fence_tests::tables`),
//! cut at every single split point and at every pair of split points, and pushed chunk by chunk,
//! gives the table's one-shot output — through the `Neutraliser`, and through a `FenceWriter`
//! both over a caller's `Vec` and in memory.
//!
//! A forged marker split across two chunks (`</untrus` + `ted-content>`) is the bug a per-chunk
//! neutraliser has; every split of every marker in the tables is among these cases.

use std::io::Write;

use fence_runtime::{FenceBuffer, FenceWriter, Neutraliser, Source, neutralise_bytes};
use fence_tests::tables::{FENCE, NEUTRALISE, NEUTRALISE_BYTES, SANITISE};

/// Every way of cutting `len` bytes into chunks at one point, then at two distinct points.
fn cuts(len: usize) -> impl Iterator<Item = Vec<usize>> {
    let singles = (0..=len).map(|at| vec![at]);
    let pairs = (1..len).flat_map(move |a| (a + 1..len).map(move |b| vec![a, b]));
    singles.chain(pairs)
}

fn chunks<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut from = 0;
    for &at in cuts {
        chunks.push(&input[from..at]);
        from = at;
    }
    chunks.push(&input[from..]);
    chunks
}

/// The neutraliser's output for `chunks`, checking after every push that it holds back
/// exactly the input's longest tail that could still begin a marker (at most 18 bytes).
fn neutralised(chunks: &[&[u8]]) -> Vec<u8> {
    let mut neutraliser = Neutraliser::new();
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for chunk in chunks {
        neutraliser.push_bytes(chunk, &mut out);
        seen.extend_from_slice(chunk);
        let held = neutraliser.held();
        assert!(held.len() <= 18, "held {held:?}");
        assert_eq!(
            held,
            fence_reference::partial_tail(&seen),
            "held other bytes than the ones that could still begin a marker"
        );
    }
    neutraliser.finish_bytes(&mut out);
    out
}

fn fenced(source: &Source, chunks: &[&[u8]]) -> (Vec<u8>, String) {
    let mut writer = FenceWriter::new(Vec::new(), source).unwrap();
    let mut in_memory = FenceBuffer::new(source);
    for chunk in chunks {
        writer.write_all(chunk).unwrap();
        in_memory.write_all(chunk).unwrap();
    }
    (
        writer.finish().unwrap(),
        in_memory.into_block().into_string(),
    )
}

fn show(chunks: &[&[u8]]) -> Vec<String> {
    chunks
        .iter()
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect()
}

/// Checks every cut of `input` against `expected`, returning how many it checked.
fn check_neutraliser(
    failures: &mut Vec<String>,
    table: &str,
    name: &str,
    input: &[u8],
    expected: &[u8],
) -> usize {
    let mut checked = 0;
    for cuts in cuts(input.len()) {
        let chunks = chunks(input, &cuts);
        let got = neutralised(&chunks);
        if got != expected {
            failures.push(format!(
                "{table} {name:?} in chunks {:?}: got {:?}",
                show(&chunks),
                String::from_utf8_lossy(&got)
            ));
        }
        checked += 1;
    }
    checked
}

#[test]
fn every_split_of_the_neutralise_tables_gives_the_one_shot_output() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for &(name, input, expected) in NEUTRALISE {
        checked += check_neutraliser(
            &mut failures,
            "NEUTRALISE",
            name,
            input.as_bytes(),
            expected.as_bytes(),
        );
    }
    for &(name, input, expected) in NEUTRALISE_BYTES {
        checked += check_neutraliser(&mut failures, "NEUTRALISE_BYTES", name, input, expected);
    }
    // Source names are sanitised whole, never streamed; their inputs are still good neutraliser
    // inputs, against the one-shot neutraliser.
    for &(name, input, _) in SANITISE {
        let expected = neutralise_bytes(input.as_bytes());
        checked += check_neutraliser(&mut failures, "SANITISE", name, input.as_bytes(), &expected);
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} splits failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 50_000, "only {checked} splits");
}

#[test]
fn every_split_of_the_fence_table_gives_the_one_shot_block() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for &(name, src, content, _, expected) in FENCE {
        let source = src.build();
        for cuts in cuts(content.len()) {
            let chunks = chunks(content.as_bytes(), &cuts);
            let (bytes, block) = fenced(&source, &chunks);
            if bytes != expected.as_bytes() {
                failures.push(format!(
                    "FENCE {name:?} through FenceWriter::new in chunks {:?}: got {:?}",
                    show(&chunks),
                    String::from_utf8_lossy(&bytes)
                ));
            }
            if block != expected {
                failures.push(format!(
                    "FENCE {name:?} through FenceBuffer in chunks {:?}: got {block:?}",
                    show(&chunks),
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} splits failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 8_000, "only {checked} splits");
}

#[test]
fn the_issue_s_split_closer() {
    let chunks: [&[u8]; 2] = [b"</untrus", b"ted-content>"];
    assert_eq!(
        neutralised(&chunks),
        b"<!MURMUR-NEUTRALISED!/untrusted-content>"
    );
    // The negative control: neutralising each chunk on its own misses it.
    let per_chunk: Vec<u8> = chunks
        .iter()
        .flat_map(|chunk| neutralise_bytes(chunk).into_owned())
        .collect();
    assert_eq!(per_chunk, b"</untrusted-content>");
}

#[test]
fn cuts_are_every_single_and_pair_split() {
    let all: Vec<Vec<usize>> = cuts(3).collect();
    assert_eq!(
        all,
        [vec![0], vec![1], vec![2], vec![3], vec![1, 2]],
        "single cuts include both ends (one empty chunk); pairs are distinct inner points"
    );
    assert_eq!(cuts(20).count(), 21 + 19 * 18 / 2);
}
