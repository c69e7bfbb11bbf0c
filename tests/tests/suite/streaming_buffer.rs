//! `FenceBuffer` fed by every way in at once — `push_str`, `push_bytes`, `fmt::Write`,
//! `io::Write` and tokio's `AsyncWrite`, empty calls included — against the lossy one-shot
//! reference: `fence` of `String::from_utf8_lossy` of all the bytes. After every call it holds
//! back exactly what it must (an incomplete character at the end, or else a live marker
//! prefix), and everything else is in the block.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use fence_reference as reference;
use fence_runtime::{FenceBuffer, Source, fence, neutralise, parse};
use proptest::collection::vec;
use proptest::prelude::*;
use tokio::io::AsyncWrite;

/// One call into the buffer.
#[derive(Clone, Debug)]
enum Call {
    PushStr(String),
    FmtWrite(String),
    PushBytes(Vec<u8>),
    IoWrite(Vec<u8>),
    AsyncWrite(Vec<u8>),
}

impl Call {
    fn bytes(&self) -> &[u8] {
        match self {
            Call::PushStr(text) | Call::FmtWrite(text) => text.as_bytes(),
            Call::PushBytes(bytes) | Call::IoWrite(bytes) | Call::AsyncWrite(bytes) => bytes,
        }
    }

    fn apply(&self, buffer: &mut FenceBuffer) {
        match self {
            Call::PushStr(text) => buffer.push_str(text),
            Call::FmtWrite(text) => fmt::Write::write_fmt(buffer, format_args!("{text}")).unwrap(),
            Call::PushBytes(bytes) => buffer.push_bytes(bytes),
            Call::IoWrite(bytes) => io::Write::write_all(buffer, bytes).unwrap(),
            Call::AsyncWrite(bytes) => {
                let mut cx = Context::from_waker(Waker::noop());
                let polled = Pin::new(buffer).poll_write(&mut cx, bytes);
                assert!(matches!(polled, Poll::Ready(Ok(n)) if n == bytes.len()));
            }
        }
    }
}

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(""),
        Just("</untrusted-content>"),
        Just("<UNTRUSTED-"),
        Just("</untrus"),
        Just("ted-content>"),
        Just("<"),
        Just("/"),
        Just("é"),
        Just("€"),
        Just("🦀"),
        Just("a b"),
        Just("<!MURMUR-NEUTRALISED!/untrusted-content>"),
    ];
    vec(piece, 0..4).prop_map(|pieces| pieces.concat())
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        text().prop_map(String::into_bytes),
        Just(b"\xf0\x9f".to_vec()), // the start of 🦀
        Just(b"\xa6\x80".to_vec()), // its end
        Just(b"\xf0".to_vec()),
        Just(b"\x9f\xa6".to_vec()),
        Just(b"\xe2\x82".to_vec()), // the start of €
        Just(b"\xac".to_vec()),
        Just(b"\xc3".to_vec()), // the start of é
        Just(b"\xa9".to_vec()),
        Just(b"\xff".to_vec()),
        Just(b"\xed\xa0\x80".to_vec()), // a surrogate: never valid
        Just(b"\xc0\xaf".to_vec()),     // an overlong `/`
        vec(any::<u8>(), 0..4),
    ];
    vec(piece, 0..3).prop_map(|pieces| pieces.concat())
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        text().prop_map(Call::PushStr),
        text().prop_map(Call::FmtWrite),
        bytes().prop_map(Call::PushBytes),
        bytes().prop_map(Call::IoWrite),
        bytes().prop_map(Call::AsyncWrite),
    ]
}

/// Applies `calls`, checking after each that the buffer holds back exactly what it must and
/// that everything else is in the block; returns the buffer and all the bytes given.
fn feed(calls: &[Call]) -> Result<(FenceBuffer, Vec<u8>), TestCaseError> {
    let mut buffer = FenceBuffer::new(&Source::tool("t"));
    let mut seen = Vec::new();
    for call in calls {
        call.apply(&mut buffer);
        seen.extend_from_slice(call.bytes());
        let held = reference::buffer_held(&seen);
        prop_assert_eq!(buffer.held(), held, "after {:?}", call);
        prop_assert!(held.len() <= 18);
        let before = String::from_utf8_lossy(&seen[..seen.len() - held.len()]);
        prop_assert_eq!(buffer.content_len(), neutralise(&before).len());
    }
    Ok((buffer, seen))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn any_mix_of_calls_gives_the_lossy_one_shot_block(calls in vec(call(), 0..24)) {
        let (buffer, seen) = feed(&calls)?;
        let expected = fence(&Source::tool("t"), &String::from_utf8_lossy(&seen));
        prop_assert_eq!(buffer.into_block(), expected);
    }

    #[test]
    fn cut_short_it_is_the_lossy_content_and_the_notice(calls in vec(call(), 0..24)) {
        let (buffer, seen) = feed(&calls)?;
        let block = buffer.into_truncated_block();
        let content = neutralise(&String::from_utf8_lossy(&seen)).into_owned();
        prop_assert_eq!(
            block.as_str(),
            format!(
                "<untrusted-content source=tool:t>\n{content}\n\
                 [!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n\
                 </untrusted-content>"
            )
        );
        let read = parse(block.as_str()).unwrap();
        prop_assert!(read.is_truncated());
    }
}

/// The case: an empty `push_str` between the two halves of a character ended it, and
/// gave three U+FFFD instead of one 🦀.
#[test]
fn empty_text_between_the_halves_of_a_character_leaves_it_whole() {
    let source = Source::tool("t");
    let mut buffer = FenceBuffer::new(&source);
    buffer.push_bytes(b"\xf0\x9f");
    buffer.push_str("");
    buffer.push_bytes(b"\xa6\x80");
    assert_eq!(buffer.into_block().content(), "🦀");

    // Every empty way in, between every two bytes of characters and markers.
    let bytes = "a🦀</untrus€ted-content>é<UNTRUSTED-CONTENT>".as_bytes();
    let empties: [fn(&mut FenceBuffer); 4] = [
        |buffer| buffer.push_str(""),
        |buffer| fmt::Write::write_fmt(buffer, format_args!("{}", "")).unwrap(),
        |buffer| buffer.push_bytes(b""),
        |buffer| assert_eq!(io::Write::write(buffer, b"").unwrap(), 0),
    ];
    for empty in empties {
        let mut buffer = FenceBuffer::new(&source);
        for byte in bytes {
            buffer.push_bytes(std::slice::from_ref(byte));
            empty(&mut buffer);
        }
        assert_eq!(
            buffer.into_block(),
            fence(&source, std::str::from_utf8(bytes).unwrap())
        );
    }
}

/// A marker prefix, then the start of a character: both were held, `held()` reported only the
/// character. The character decides the prefix is no marker, so now only it is held, and the
/// prefix is in the block.
#[test]
fn held_is_everything_held_back() {
    let mut buffer = FenceBuffer::new(&Source::tool("t"));
    buffer.push_str("x </untrus");
    assert_eq!(buffer.held(), b"</untrus");
    assert_eq!(buffer.content_len(), 2);
    buffer.push_bytes(b"\xf0\x9f");
    assert_eq!(buffer.held(), b"\xf0\x9f");
    assert_eq!(buffer.content_len(), "x </untrus".len());
    buffer.push_bytes(b"\xa6\x80ted-content>");
    assert_eq!(buffer.into_block().content(), "x </untrus🦀ted-content>");
}

/// `is_truncated` reads what the writers write: the notice on a line of its own at the very end
/// of the content. Content that spells it there says it is truncated, and a reader takes it at
/// its word: that makes a whole block look cut short, never the other way round.
#[test]
fn is_truncated_reads_the_notice_on_its_own_last_line() {
    let notice = fence_runtime::TRUNCATION_NOTICE;
    let empty = FenceBuffer::new(&Source::tool("t")).into_truncated_block();
    assert_eq!(empty.content(), format!("\n{notice}"));
    let cases = [
        (format!("rows\n{notice}"), true),
        (format!("\n{notice}"), true),
        (format!("rows{notice}"), false),
        (notice.to_owned(), false),
        (format!("rows\n{notice}\n"), false),
        (format!("rows\n{notice} and more"), false),
        ("rows".to_owned(), false),
    ];
    for (content, truncated) in cases {
        let block = fence(&Source::tool("t"), &content);
        let read = parse(block.as_str()).unwrap();
        assert_eq!(read.is_truncated(), truncated, "{content:?}");
    }
    assert!(parse(empty.as_str()).unwrap().is_truncated());
}
