//! `fence` → `parse` round trips with arbitrary source names and content, and `parse` /
//! `fence_source_of` on arbitrary messages against a naive parser written from DESIGN §2.
//!
//! Input layout: `selector name 0xFF content 0xFF message`, each part read as text (invalid UTF-8
//! replaced). The selector byte picks `Source::tool(name)`, `Source::custom(kind, name)` (the
//! name split at its first `=`) or `Source::task(origin)`.
//!
//! Invariants:
//! - the source is `kind:` and the name sanitised as DESIGN §2 says (neutralised, then `>` → `_`,
//!   CR and LF → space), and holds no `>`, CR, LF or marker; `sanitise_source_name` agrees;
//! - the block is exactly opener, `\n`, the reference-neutralised content, `\n`, closer; its only
//!   markers are its own opener and closer;
//! - `parse` gives back the source and exactly `neutralise(content)`, and `fence_source_of` the
//!   source; `ModelContent` and an untrusted task fence the same bytes;
//! - on any message (the third part, and the same text wrapped raw in markers), `parse` and
//!   `fence_source_of` agree with the naive parser, error for error, and when `parse`
//!   succeeds the block's pieces reassemble the message.
#![no_main]

use fence_runtime::{
    ModelContent, ParseError, ParsedBlock, Source, SourceKind, TaskOrigin, TaskProvenance, fence,
    fence_source_of, neutralise, parse, sanitise_source_name,
};
use fence_runtime_fuzz::{self as reference, CLOSER, OPENER_PREFIX};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let selector = data.first().copied().unwrap_or(0);
    let parts = reference::text_parts(data.get(1..).unwrap_or_default(), 3);
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    let (name, content, message) = (part(0), part(1), part(2));

    round_trip(selector, name, content);

    check_parse(message);
    check_parse(content);
    check_parse(&format!("{OPENER_PREFIX}{name}>\n{message}\n{CLOSER}"));
});

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
            let Ok(custom) = Source::custom(kind, name) else {
                let reserved = kind.trim().to_ascii_lowercase();
                assert!(reserved == "tool" || reserved == "task", "{kind:?} refused");
                return;
            };
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
        let provenance = TaskProvenance::derive(origin, None);
        let task = ModelContent::task(&provenance, content);
        if provenance.is_fenced() {
            assert_eq!(task.as_str(), text);
        } else {
            assert_eq!(task.as_str(), content);
        }
    }
}

fn check_parse(message: &str) {
    let parsed = parse(message);
    let simplified = parsed.map(|block: ParsedBlock<'_>| (block.source(), block.content()));
    assert_eq!(simplified, naive_parse(message), "parse of {message:?}");
    assert_eq!(
        fence_source_of(message),
        naive_opener(message).ok(),
        "fence_source_of {message:?}"
    );
    if let Ok(block) = parsed {
        let (source, content) = (block.source(), block.content());
        let head = &message[..OPENER_PREFIX.len()];
        let tail = &message[message.len() - CLOSER.len()..];
        assert!(head.eq_ignore_ascii_case(OPENER_PREFIX));
        assert!(tail.eq_ignore_ascii_case(CLOSER));
        assert_eq!(format!("{head}{source}>\n{content}\n{tail}"), message);
        let _ = block.source_kind();
    }
}

/// The source of an opener at the very start: `<untrusted-content source=` in any ASCII casing,
/// then a name that runs to the first `>`, with no CR or LF before it.
fn naive_opener(message: &str) -> Result<&str, ParseError> {
    let bytes = message.as_bytes();
    let prefix = OPENER_PREFIX.as_bytes();
    if !bytes
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    {
        return Err(ParseError::NoOpener);
    }
    let rest = &message[prefix.len()..];
    match rest.find(['>', '\r', '\n']) {
        Some(end) if rest.as_bytes()[end] == b'>' => Ok(&rest[..end]),
        _ => Err(ParseError::SourceNotTerminated),
    }
}

/// DESIGN §2's strict reading, one rule at a time, in the order of the grammar.
fn naive_parse(message: &str) -> Result<(&str, &str), ParseError> {
    let source = naive_opener(message)?;
    let bytes = message.as_bytes();
    let opener_end = OPENER_PREFIX.len() + source.len() + 1;
    if bytes.get(opener_end) != Some(&b'\n') {
        return Err(ParseError::MissingSeparatorAfterOpener);
    }
    let content_start = opener_end + 1;
    // The final closer: the last `</untrusted-content>`, in any casing, starting in the content.
    let closer = (content_start..=bytes.len().saturating_sub(CLOSER.len()))
        .rev()
        .find(|&at| {
            bytes
                .get(at..at + CLOSER.len())
                .is_some_and(|spelled| spelled.eq_ignore_ascii_case(CLOSER.as_bytes()))
        })
        .ok_or(ParseError::NoCloser)?;
    if closer + CLOSER.len() != bytes.len() {
        return Err(ParseError::TextAfterCloser);
    }
    if closer == content_start || bytes[closer - 1] != b'\n' {
        return Err(ParseError::MissingSeparatorBeforeCloser);
    }
    Ok((source, &message[content_start..closer - 1]))
}
