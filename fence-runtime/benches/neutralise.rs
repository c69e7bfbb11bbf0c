//! The neutraliser and `fence` against what a competent user would write instead, and against the
//! machine's limits, on eight kinds of input, in one run.
//!
//! ```text
//! python3 scripts/bench-report.py        # runs this and the streaming benchmark, then prints
//!                                        # the table, the ratios and the floors
//! ```
//!
//! Each baseline is written the way a user who cares about speed would write it:
//!
//! - `regex`: `(?i-u)<(/?untrusted-content)` (ASCII case-insensitive, as the marker rule is) with
//!   `replace_all`, keeping the `Cow` it returns, so clean text is not copied;
//! - `aho-corasick`: both markers, ASCII case-insensitive, leftmost-first; `find` for the first
//!   match (none: the input comes back borrowed), then a splice from there into a `String` with
//!   room for a few infixes;
//! - `reference`: the reference runtime's algorithm (an ASCII-lowercased copy of the whole
//!   input, a find loop, always a new string);
//! - `memchr`: one `memchr::memchr(b'<', ..)` over the whole input, a find (on inputs with no
//!   `<`, where it reads all of them);
//! - `copy`: `to_vec`.
//!
//! CI runs each benchmark once (`cargo test --benches`) so they cannot rot.

use std::borrow::Cow;
use std::fmt::Write;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use aho_corasick::{AhoCorasick, MatchKind};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fence_runtime::{NEUTRALISED_INFIX, Source, fence, neutralise};
use regex::Regex;

const MIB: usize = 1 << 20;

/// A deterministic byte source, so every run measures the same inputs.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next()).unwrap() % n
    }
}

const WORDS: &[&str] = &[
    "the",
    "tool",
    "returned",
    "a",
    "page",
    "about",
    "quarterly",
    "revenue",
    "and",
    "growth",
    "agents",
    "read",
    "untrusted",
    "content",
    "carefully",
    "before",
    "acting",
    "on",
    "it",
    "model",
];

fn prose(len: usize) -> String {
    let mut rng = Lcg(1);
    let mut text = String::with_capacity(len + 16);
    while text.len() < len {
        text.push_str(WORDS[rng.below(WORDS.len())]);
        text.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    text.truncate(len);
    text
}

/// Real HTML: the rustdoc pages that ship with the toolchain, else a generated stand-in.
fn html(len: usize) -> (String, &'static str) {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok());
    if let Some(sysroot) = sysroot {
        let root = Path::new(sysroot.trim()).join("share/doc/rust/html/std");
        let mut pages = Vec::new();
        collect_html(&root, &mut pages);
        pages.sort();
        let mut text = String::with_capacity(len + 64 * 1024);
        for page in pages {
            if text.len() >= len {
                break;
            }
            if let Ok(page) = std::fs::read_to_string(page) {
                text.push_str(&page);
            }
        }
        if text.len() >= len {
            text.truncate(char_boundary_at_or_before(&text, len));
            return (text, "rustdoc");
        }
    }
    (generated_html(len), "generated")
}

fn char_boundary_at_or_before(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

fn collect_html(dir: &Path, pages: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_html(&path, pages);
        } else if path.extension().is_some_and(|ext| ext == "html") {
            pages.push(path);
        }
    }
}

fn generated_html(len: usize) -> String {
    let mut rng = Lcg(2);
    let tags = [
        "div", "span", "a", "p", "ul", "li", "code", "pre", "section", "u",
    ];
    let mut text = String::with_capacity(len + 128);
    while text.len() < len {
        let tag = tags[rng.below(tags.len())];
        write!(text, "<{tag} class=\"item-{}\">", rng.below(100)).unwrap();
        text.push_str(WORDS[rng.below(WORDS.len())]);
        text.push(' ');
        text.push_str(WORDS[rng.below(WORDS.len())]);
        write!(text, "</{tag}>").unwrap();
    }
    text.truncate(len);
    text
}

/// Tool output as JSON lines, with HTML inside the string fields.
fn json_with_html(html: &str, len: usize) -> String {
    let mut text = String::with_capacity(len + 4096);
    let mut offset = 0;
    let mut id = 0;
    while text.len() < len {
        let end = char_boundary_at_or_before(html, offset + 2000);
        let body = &html[offset..end];
        offset = if end == html.len() { 0 } else { end };
        let line = serde_json::json!({"id": id, "status": 200, "url": "https://doc.rust-lang.org/std/", "body": body});
        text.push_str(&line.to_string());
        text.push('\n');
        id += 1;
    }
    text.truncate(char_boundary_at_or_before(&text, len));
    text
}

/// Pushes a forged opener or closer name, `<untrusted-content` or `</untrusted-content`, each
/// letter in random case.
fn push_marker(text: &mut String, rng: &mut Lcg) {
    text.push('<');
    if rng.below(2) == 0 {
        text.push('/');
    }
    for c in "untrusted-content".chars() {
        text.push(if rng.below(2) == 0 {
            c.to_ascii_uppercase()
        } else {
            c
        });
    }
}

/// A forged marker in random casing every ~20 bytes.
fn adversarial(len: usize) -> String {
    let mut rng = Lcg(3);
    let mut text = String::with_capacity(len + 64);
    while text.len() < len {
        push_marker(&mut text, &mut rng);
        text.push_str([">", " ", "> x", ">\n"][rng.below(4)]);
    }
    text.truncate(len);
    text
}

/// Forged markers in random casing with nothing between them: the densest input there is.
fn back_to_back(len: usize) -> String {
    let mut rng = Lcg(5);
    let mut text = String::with_capacity(len + 64);
    while text.len() < len {
        push_marker(&mut text, &mut rng);
    }
    text.truncate(len);
    text
}

/// Near misses that share the marker's prefix and are not markers.
fn near_misses(len: usize) -> String {
    let misses = [
        "<untrusted-contenx>",
        "</untrusted-conten t>",
        "< /untrusted-content>",
        "<untrusted_content>",
        "</ untrusted-content>",
    ];
    let mut rng = Lcg(4);
    let mut text = String::with_capacity(len + 64);
    while text.len() < len {
        text.push_str(misses[rng.below(misses.len())]);
        text.push(' ');
    }
    text.truncate(len);
    text
}

/// What the reference runtime does: lowercase a copy of the whole input, find markers in it,
/// and always build a new string.
fn reference(content: &str) -> String {
    let lower = content.to_ascii_lowercase();
    let mut out = String::with_capacity(content.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find("untrusted-content") {
        let name = from + found;
        let lt = if name >= 1 && &lower[name - 1..name] == "<" {
            Some(name - 1)
        } else if name >= 2 && &lower[name - 2..name] == "</" {
            Some(name - 2)
        } else {
            None
        };
        if let Some(lt) = lt {
            out.push_str(&content[copied..=lt]);
            out.push_str(NEUTRALISED_INFIX);
            copied = lt + 1;
        }
        from = name + 1;
    }
    out.push_str(&content[copied..]);
    out
}

fn with_regex<'a>(re: &Regex, content: &'a str) -> Cow<'a, str> {
    re.replace_all(content, "<!MURMUR-NEUTRALISED!$1")
}

fn with_aho_corasick<'a>(ac: &AhoCorasick, content: &'a str) -> Cow<'a, str> {
    let Some(first) = ac.find(content) else {
        return Cow::Borrowed(content);
    };
    let mut out = String::with_capacity(content.len() + 4 * NEUTRALISED_INFIX.len());
    let mut copied = 0;
    for found in ac.find_iter(&content[first.start()..]) {
        let at = first.start() + found.start();
        out.push_str(&content[copied..=at]);
        out.push_str(NEUTRALISED_INFIX);
        copied = at + 1;
    }
    out.push_str(&content[copied..]);
    Cow::Owned(out)
}

/// The length of a result, whichever way it came back: what a caller goes on to read.
fn len(text: &str) -> usize {
    text.len()
}

fn inputs() -> Vec<(String, String)> {
    let (html_4m, html_kind) = html(4 * MIB);
    let json = json_with_html(&html_4m, MIB);
    let typical = json_with_html(&html_4m, 4096);
    let middle = char_boundary_at_or_before(&html_4m, html_4m.len() / 2);
    let short = json_with_html(&html_4m[middle..], 400);
    vec![
        ("prose-1MiB".into(), prose(MIB)),
        (format!("html-4MiB-{html_kind}"), html_4m),
        ("json-html-1MiB".into(), json),
        ("adversarial-1MiB".into(), adversarial(MIB)),
        ("back-to-back-1MiB".into(), back_to_back(MIB)),
        ("near-miss-1MiB".into(), near_misses(MIB)),
        ("tool-result-4KiB".into(), typical),
        ("message-400B".into(), short),
    ]
}

fn bench(c: &mut Criterion) {
    // What a user writes. `-u`: the marker rule folds ASCII case only (`(?i)` alone would also
    // rewrite `<untruſted-content>`, with a long s, which is not a marker).
    let re = Regex::new(r"(?i-u)<(/?untrusted-content)").unwrap();
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .build(["</untrusted-content", "<untrusted-content"])
        .unwrap();
    let source = Source::tool("web-fetch");
    for (name, input) in inputs() {
        // Every implementation must agree before any is timed.
        let ours = neutralise(&input);
        assert_eq!(ours, reference(&input), "{name}: reference");
        assert_eq!(ours, with_regex(&re, &input), "{name}: regex");
        assert_eq!(ours, with_aho_corasick(&ac, &input), "{name}: aho-corasick");
        let borrowed = |text: &Cow<'_, str>| matches!(text, Cow::Borrowed(_));
        assert_eq!(borrowed(&ours), borrowed(&with_regex(&re, &input)));
        assert_eq!(borrowed(&ours), borrowed(&with_aho_corasick(&ac, &input)));
        let block = fence(&source, &input);
        assert_eq!(block.content(), ours, "{name}: fence");

        let mut group = c.benchmark_group(&name);
        group.throughput(Throughput::Bytes(input.len() as u64));
        let id = |f: &str| BenchmarkId::from_parameter(f);
        group.bench_with_input(id("neutralise"), &input, |b, input| {
            b.iter(|| len(&neutralise(black_box(input))));
        });
        group.bench_with_input(id("fence"), &input, |b, input| {
            b.iter(|| fence(&source, black_box(input)));
        });
        group.bench_with_input(id("regex"), &input, |b, input| {
            b.iter(|| len(&with_regex(&re, black_box(input))));
        });
        group.bench_with_input(id("aho-corasick"), &input, |b, input| {
            b.iter(|| len(&with_aho_corasick(&ac, black_box(input))));
        });
        group.bench_with_input(id("reference"), &input, |b, input| {
            b.iter(|| reference(black_box(input)));
        });
        // One find over the whole input: the limit only where there is no `<` to stop at.
        if !input.contains('<') {
            group.bench_with_input(id("memchr"), &input, |b, input| {
                b.iter(|| memchr::memchr(b'<', black_box(input).as_bytes()));
            });
        }
        group.bench_with_input(id("copy"), &input, |b, input| {
            b.iter(|| black_box(input).as_bytes().to_vec());
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = bench
}
criterion_main!(benches);
