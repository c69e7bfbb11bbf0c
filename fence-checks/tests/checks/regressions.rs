//! Replays the regression corpus: every file under `fence-runtime/fuzz/regressions/<target>/`
//! through its target's check, as `cargo fuzz` would run it. A file there is an input that once
//! found a bug (a fuzzer's crash, or a hole found by review); replayed on every `cargo test`, it
//! keeps the bug from coming back.

use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fence-runtime/fuzz/regressions")
}

/// Every file of a target's corpus, in name order (none when it has no directory).
fn files(target: &str) -> Vec<PathBuf> {
    files_in(&corpus().join(target))
}

/// Every file directly in `dir`, in name order (none when it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_regression_input_passes_its_target_s_check() {
    let mut failed = Vec::new();
    let mut replayed = 0;
    for &(target, check) in fence_checks::TARGETS {
        for file in files(target) {
            let data = fs::read(&file).expect("a readable regression file");
            if panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(format!(
                    "{target}/{}",
                    file.file_name().unwrap().to_string_lossy()
                ));
            }
            replayed += 1;
        }
    }
    assert!(
        replayed > 0,
        "no regression input found under {}",
        corpus().display()
    );
    assert!(failed.is_empty(), "regressions failed again: {failed:#?}");
}

/// A directory named after no target would be skipped without a word.
#[cfg(feature = "std")]
#[test]
fn every_corpus_directory_is_a_target() {
    for entry in fs::read_dir(corpus()).expect("the regression corpus") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            assert!(
                fence_checks::TARGETS
                    .iter()
                    .any(|(target, _)| *target == name),
                "{name} is not a target: name a directory after the target that replays it"
            );
        }
    }
}

/// The cargo-fuzz crate's targets and this crate's checks are the same list, so a target
/// cannot be fuzzed without its corpus being replayed, or the other way round.
#[cfg(feature = "std")]
#[test]
fn every_fuzz_target_has_a_check_and_every_check_a_target() {
    let manifest = fs::read_to_string(corpus().join("../Cargo.toml")).expect("the fuzz crate");
    let mut bins: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| {
            let name = bin.lines().find_map(|line| line.strip_prefix("name = "))?;
            Some(name.trim_matches('"'))
        })
        .collect();
    let mut checks: Vec<&str> = fence_checks::TARGETS
        .iter()
        .map(|(name, _)| *name)
        .collect();
    bins.sort_unstable();
    checks.sort_unstable();
    assert_eq!(bins, checks);
}
