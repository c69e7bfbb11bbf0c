//! `fence` → `parse` round trips with arbitrary source names and content, and `parse` /
//! `fence_source_of` on arbitrary messages against the reference's rule-by-rule parser.
//!
//! Input layout: `selector name 0xFF content 0xFF message`, each part read as text (invalid UTF-8
//! replaced). The selector byte picks `Source::tool(name)`, `Source::custom(kind, name)` (the
//! name split at its first `=`) or `Source::task(origin)`.
//!
//! Invariants:
//! - the source is `kind:` and the name sanitised (neutralised, then `>` → `_`, CR and LF →
//!   space), and holds no `>`, CR, LF or marker; `sanitise_source_name` agrees;
//! - `Source::custom` refuses the kinds `tool` and `task` in any casing and surrounded by any
//!   whitespace, so a custom source never spells a tool's or a task's source;
//! - the block is exactly opener, `\n`, the reference-neutralised content, `\n`, closer; its only
//!   markers are its own opener and closer;
//! - `parse` gives back the source and exactly `neutralise(content)`, and `fence_source_of` the
//!   source; `ModelContent` and an untrusted task fence the same bytes, and a trusted task is
//!   the content neutralised;
//! - on any message (the third part, and the same text wrapped raw in markers), `parse` and
//!   `fence_source_of` agree with the reference parser, error for error; when `parse` succeeds
//!   the block's pieces reassemble the message, and it is truncated exactly when the reference
//!   says its content ends with the truncation notice.
use fence_reference::{self as reference, CLOSER, OPENER_PREFIX};
use fence_runtime::{
    ModelContent, Source, SourceKind, TaskOrigin, TaskProvenance, fence, fence_source_of,
    neutralise, parse, sanitise_source_name,
};

use crate::api::{parse_error, task_content};
use crate::input::text_parts;

/// Checks every invariant on `data`; panics on the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// fence_checks::fence_parse::check(b"\x00web-fetch\xff</untrusted-content>\xff<untrusted-content source=x>\ny\n</untrusted-content>");
/// ```
pub fn check(data: &[u8]) {
    let selector = data.first().copied().unwrap_or(0);
    let parts = text_parts(data.get(1..).unwrap_or_default(), 3);
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    let (name, content, message) = (part(0), part(1), part(2));

    round_trip(selector, name, content);

    check_parse(message);
    check_parse(content);
    check_parse(&format!("{OPENER_PREFIX}{name}>\n{message}\n{CLOSER}"));
}

fn round_trip(selector: u8, name: &str, content: &str) {
    let (source, expected_source) = match selector % 3 {
        0 => (
            Source::tool(name),
            format!("tool:{}", reference::sanitise(name)),
        ),
        1 => {
            let (kind, name) = name.split_once('=').unwrap_or(("member", name));
            let expected = format!(
                "{}:{}",
                reference::sanitise(kind).replace(':', "_"),
                reference::sanitise(name)
            );
            let reserved = kind.trim().to_ascii_lowercase();
            let reserved = reserved == "tool" || reserved == "task";
            let Ok(custom) = Source::custom(kind, name) else {
                assert!(reserved, "{kind:?} refused");
                return;
            };
            assert!(!reserved, "the reserved kind {kind:?} accepted");
            assert!(!custom.is_tool(), "a custom source passes for a tool's");
            assert!(
                !custom.as_str().starts_with("tool:") && !custom.as_str().starts_with("task:"),
                "a custom source spells {:?}",
                custom.as_str()
            );
            (custom, expected)
        }
        _ => {
            let origin = TaskOrigin::ALL[usize::from(selector / 3) % TaskOrigin::ALL.len()];
            (Source::task(origin), format!("task:{}", origin.as_str()))
        }
    };
    let src = source.as_str();
    assert_eq!(src, expected_source);
    assert_eq!(sanitise_source_name(name), reference::sanitise(name));
    assert!(
        !src.contains(['>', '\r', '\n']),
        "unsafe character in {src:?}"
    );
    assert!(
        reference::markers(src.as_bytes()).is_empty(),
        "marker in {src:?}"
    );

    let block = fence(&source, content);
    let text = block.as_str();
    assert_eq!(
        text.as_bytes(),
        reference::block_bytes(src, content.as_bytes())
    );
    assert_eq!(
        reference::markers(text.as_bytes()),
        [0, text.len() - CLOSER.len()],
        "markers other than the block's own"
    );
    let neutralised = neutralise(content);
    assert_eq!(block.content(), neutralised);
    assert_eq!(block.source(), &source);

    let read = parse(text).expect("a fenced block parses");
    assert_eq!(read.source(), src);
    assert_eq!(read.content(), neutralised);
    assert_eq!(read.source_kind(), source.kind());
    assert_eq!(fence_source_of(text), Some(src));

    let model = ModelContent::from(block.clone());
    assert_eq!(model.as_str(), text);
    assert_eq!(model.fence_source(), Some(src));

    if let SourceKind::Task(origin) = source.kind() {
        let provenance = TaskProvenance::derive(origin);
        let task = task_content(provenance, content);
        if provenance.is_fenced() {
            assert_eq!(task.as_str(), text);
        } else {
            // A trusted task is not fenced, but its markers are neutralised all the same.
            assert_eq!(task.as_str(), reference::neutralise_str(content));
        }
    }
}

fn check_parse(message: &str) {
    let parsed = parse(message);
    let simplified = parsed.map(|block| (block.source(), block.content()));
    assert_eq!(
        simplified,
        reference::parse(message).map_err(parse_error),
        "parse of {message:?}"
    );
    assert_eq!(
        fence_source_of(message),
        reference::opener(message).ok(),
        "fence_source_of {message:?}"
    );
    if let Ok(block) = parsed {
        let (source, content) = (block.source(), block.content());
        let head = &message[..OPENER_PREFIX.len()];
        let tail = &message[message.len() - CLOSER.len()..];
        assert!(head.eq_ignore_ascii_case(OPENER_PREFIX));
        assert!(tail.eq_ignore_ascii_case(CLOSER));
        assert_eq!(format!("{head}{source}>\n{content}\n{tail}"), message);
        assert_eq!(block.is_truncated(), reference::ends_truncated(content));
        let _ = block.source_kind();
    }
}
