//! Constant memory: `wrap` of tens of megabytes through a pipe, and `audit` of a record of tens
//! of megabytes, stay far below the input's size (the child's peak resident set, `VmHWM`, read
//! from `/proc` while it runs). The 200 MB runs measured by hand are an ignored test here.

use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::thread;

use fence_runtime::surfaces::RecordLine;
use fence_runtime::{Source, ToolOutput, fence};

use crate::common::{adversarial_text, fence as fence_bin};

/// The child's peak resident set so far, in bytes.
fn peak_rss(child: &Child) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

const MIB: usize = 1024 * 1024;

/// Pipes `input` through `fence wrap --tool t`, in `pieces` writes, and returns the output and
/// the child's peak resident set once all of the input has been written (before its stdin is
/// closed, while the child is alive).
fn wrap_through_a_pipe(input: &[u8], pieces: usize) -> (Vec<u8>, Option<u64>) {
    let mut child = fence_bin()
        .args(["wrap", "--tool", "t"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).unwrap();
        out
    });
    let mut stdin = child.stdin.take().unwrap();
    for piece in input.chunks(input.len().div_ceil(pieces)) {
        stdin.write_all(piece).unwrap();
    }
    stdin.flush().unwrap();
    let peak = peak_rss(&child);
    drop(stdin);
    let out = reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    (out, peak)
}

#[test]
fn wrap_keeps_memory_flat_whatever_the_input_size() {
    let input = adversarial_text(48 * MIB, 7);
    let (out, peak) = wrap_through_a_pipe(input.as_bytes(), 97);
    assert!(out == fence(&Source::tool("t"), &input).as_str().as_bytes());
    if let Some(peak) = peak {
        assert!(
            peak < 16 * MIB as u64,
            "peak resident set {} MiB for a {} MiB input",
            peak / MIB as u64,
            input.len() / MIB
        );
    }
}

#[test]
fn audit_keeps_memory_bounded_by_the_longest_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversation.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let output = ToolOutput::ok(fence(
        &Source::tool("web-fetch"),
        &adversarial_text(2000, 9),
    ));
    let line = RecordLine::tool_result("c1", &output).to_json();
    let mut written = 0;
    while written < 24 * MIB {
        writeln!(file, "{line}").unwrap();
        written += line.len() + 1;
    }
    drop(file);
    let mut child = fence_bin()
        .args(["audit", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut peak = None;
    // The high-water mark only grows: the last reading before the child exits is the closest.
    while child.try_wait().unwrap().is_none() {
        if let Some(now) = peak_rss(&child) {
            peak = Some(now);
        }
        thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut report = String::new();
    stdout.read_to_string(&mut report).unwrap();
    assert!(report.ends_with("clean: every unit verified\n"), "{report}");
    if let Some(peak) = peak {
        assert!(
            peak < 12 * MIB as u64,
            "peak resident set {} MiB for a {} MiB record",
            peak / MIB as u64,
            written / MIB
        );
    }
}

/// The measurement reported by hand: `FENCE_WRAP_MB` (default 200) megabytes through a pipe,
/// byte-identical to one-shot `fence`.
/// `FENCE_WRAP_MB=200 cargo test --release -p fence-cli --test cli -- --ignored --nocapture`
#[test]
#[ignore = "hundreds of megabytes: run by hand"]
fn wrap_of_hundreds_of_megabytes_equals_one_shot_fence() {
    let megabytes: usize = std::env::var("FENCE_WRAP_MB")
        .ok()
        .and_then(|mb| mb.parse().ok())
        .unwrap_or(200);
    let input = adversarial_text(megabytes * MIB, 11);
    let started = std::time::Instant::now();
    let (out, peak) = wrap_through_a_pipe(input.as_bytes(), 4093);
    let elapsed = started.elapsed();
    assert!(out == fence(&Source::tool("t"), &input).as_str().as_bytes());
    eprintln!(
        "{} MiB in {elapsed:?}, peak resident set {:?} KiB",
        input.len() / MIB,
        peak.map(|peak| peak / 1024)
    );
}
