use bytes::Bytes;
use proptest::prelude::*;

use super::*;

/// Every event of `stream`, fed in pieces of `piece` bytes.
fn framed(stream: &[u8], piece: usize, limit: usize) -> Vec<Framed> {
    let mut framer = Framer::new(limit);
    let mut out = Vec::new();
    for chunk in stream.chunks(piece.max(1)) {
        framer.feed(chunk, &mut out);
    }
    out.extend(framer.finish());
    out
}

fn events(stream: &[u8], piece: usize) -> Vec<Vec<u8>> {
    framed(stream, piece, usize::MAX)
        .into_iter()
        .map(|framed| match framed {
            Framed::Event(raw) => raw,
            Framed::Oversized(size) => panic!("an event of {size} bytes over no limit"),
        })
        .collect()
}

/// An event as a client reads it: its type, data and id.
type Read = (String, Option<String>, Option<String>);

/// What rmcp's client reads from `stream` (the `sse-stream` crate): each event's type, data
/// and id, or `None` once it gives up on the stream.
fn sse_stream_reads(stream: &[u8], piece: usize) -> Option<Vec<Read>> {
    use futures_util::StreamExt as _;
    let chunks: Vec<Result<Bytes, std::io::Error>> = stream
        .chunks(piece.max(1))
        .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let parsed: Vec<_> =
            sse_stream::SseStream::from_bytes_stream(futures_util::stream::iter(chunks))
                .collect()
                .await;
        parsed
            .into_iter()
            .map(|sse| {
                let sse = sse.ok()?;
                Some((sse.event.unwrap_or_default(), sse.data, sse.id))
            })
            .collect()
    })
}

/// What [`Event::read`] makes of the same stream's events, as `sse_stream_reads` says it.
fn ours(stream: &[u8], piece: usize) -> Vec<Read> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).expect("UTF-8");
    let mut framer = Framer::new(usize::MAX);
    let mut ended = Vec::new();
    for chunk in stream.chunks(piece) {
        framer.feed(chunk, &mut ended);
    }
    // What the stream's end cuts off is no event to a client.
    ended
        .iter()
        .filter_map(|framed| match framed {
            Framed::Event(raw) => Some(raw),
            Framed::Oversized(_) => None,
        })
        .map(|raw| Event::read(raw))
        // `sse-stream` gives an event for every blank line after a field, of any kind.
        .filter(|event| {
            lines(event.raw).any(|(start, end, _)| {
                matches!(field(&event.raw[start..end]), Some((name, _)) if !name.is_empty())
            })
        })
        .map(|event| {
            (
                text(event.kind),
                event.data.as_deref().map(text),
                event.id.map(text),
            )
        })
        .collect()
}

#[test]
fn a_stream_is_cut_at_each_blank_line_keeping_every_byte() {
    let stream = b"data: {\"a\":1}\n\n: a comment\nid: 7\nretry: 10\n\nevent: other\r\ndata: x\r\n\r\ndata:y\r\rtail";
    for piece in 1..stream.len() {
        let got = events(stream, piece);
        assert_eq!(got.concat(), stream, "piece {piece}");
        let split_crlf = stream
            .windows(2)
            .enumerate()
            .any(|(at, pair)| pair == b"\r\n" && (at + 1) % piece == 0);
        if split_crlf {
            // A CR ends the piece, and the LF that goes with it starts the next one.
            continue;
        }
        assert_eq!(
            got[..3],
            [
                b"data: {\"a\":1}\n\n".to_vec(),
                b": a comment\nid: 7\nretry: 10\n\n".to_vec(),
                b"event: other\r\ndata: x\r\n\r\n".to_vec(),
            ],
            "piece {piece}"
        );
    }
}

#[test]
fn a_message_is_a_message_event_or_one_with_no_type_and_data_that_is_not_blank() {
    let message = |raw: &[u8]| Event::read(raw).message().map(<[u8]>::to_vec);
    assert_eq!(message(b"data: {}\n\n"), Some(b"{}".to_vec()));
    assert_eq!(
        message(b"event: message\ndata:{}\n\n"),
        Some(b"{}".to_vec())
    );
    assert_eq!(message(b"event:\ndata: {}\n\n"), Some(b"{}".to_vec()));
    assert_eq!(
        message(b"data: {\"a\":\ndata: 1}\n\n"),
        Some(b"{\"a\":\n1}".to_vec())
    );
    assert_eq!(
        message(b"\xef\xbb\xbfdata: {}\n\n"),
        None,
        "a mark inside a stream starts a field no client knows"
    );
    assert_eq!(message(b"event: endpoint\ndata: {}\n\n"), None);
    assert_eq!(message(b"event: Message\ndata: {}\n\n"), None);
    assert_eq!(
        message(b"data:\nid: 0\nretry: 3000\n\n"),
        None,
        "a priming event"
    );
    assert_eq!(message(b": data: {}\n\n"), None, "a comment");
    assert_eq!(message(b"id: 1\n\n"), None);
}

#[test]
fn the_last_event_type_and_id_count_and_an_id_with_a_nul_does_not() {
    let event = Event::read(b"event: other\nevent: message\nid: 1\nid: 2\ndata: {}\n\n");
    assert_eq!(event.message(), Some(&b"{}"[..]));
    assert_eq!(event.id(), Some(&b"2"[..]));
    assert_eq!(Event::read(b"id: a\0b\ndata: {}\n\n").id(), None);
}

#[test]
fn the_last_retry_of_digits_counts_and_any_other_is_ignored() {
    let retry = |raw: &[u8]| Event::read(raw).retry();
    assert_eq!(retry(b"retry: 500\ndata: {}\n\n"), Some(500));
    assert_eq!(retry(b"retry:500\nretry: 20\n\n"), Some(20));
    // A value that is not all digits is ignored, and an earlier one stands.
    assert_eq!(retry(b"retry: 500\nretry: 2s\n\n"), Some(500));
    for ignored in [
        &b"retry: -1\n\n"[..],
        b"retry: 1.5\n\n",
        b"retry:\n\n",
        b"retry\n\n",
    ] {
        assert_eq!(retry(ignored), None, "{}", String::from_utf8_lossy(ignored));
    }
    assert_eq!(retry(b"retry: 99999999999999999999999\n\n"), Some(u64::MAX));
}

#[test]
fn rewriting_replaces_the_data_and_writes_every_other_field_again_as_a_client_reads_it() {
    let raw = b": c\r\nid: 9\r\ndata:{\"a\":\r\nDATA: x\r\n\xef\xbb\xbfevent: x\rdata: 1}\r\nretry:5\r\n\r\n";
    let event = Event::read(raw);
    assert_eq!(
        event.rewritten(Some(b"{\"b\":\n2}")),
        b": c\nid: 9\ndata: {\"b\":\ndata: 2}\nretry: 5\n\n"
    );
    assert_eq!(event.rewritten(None), b": c\nid: 9\nretry: 5\n\n");
    assert_eq!(
        event.written_again(),
        b": c\nid: 9\ndata: {\"a\":\ndata: 1}\nretry: 5\n\n"
    );
    for new in [&b"{\"b\":\n2}"[..], b"{\"b\":2}"] {
        assert_eq!(
            event.rewritten_around(new.to_vec()).concat(),
            event.rewritten(Some(new)),
            "{}",
            String::from_utf8_lossy(new)
        );
    }
    assert_eq!(message_event(b"{}"), b"event: message\ndata: {}\n\n");
    assert_eq!(
        identified_event(Some("3-1"), b"{}"),
        b"id: 3-1\nevent: message\ndata: {}\n\n"
    );
    let priming = priming_event("3-0", 1000);
    assert_eq!(priming, b"id: 3-0\nretry: 1000\ndata:\n\n");
    let event = Event::read(&priming);
    assert_eq!((event.id(), event.message()), (Some(&b"3-0"[..]), None));
}

#[test]
fn an_event_the_stream_cut_off_is_ended_and_its_other_fields_neutralised() {
    let event =
        Event::read(b": </untrusted-content>\nevent: <untrusted-content source=x>\ndata: x");
    let again = event.written_again();
    assert!(
        again.ends_with(b"data: x\n\n"),
        "{}",
        String::from_utf8_lossy(&again)
    );
    assert!(
        fence_runtime::live_markers(&String::from_utf8_lossy(&again))
            .next()
            .is_none()
    );
    assert_eq!(
        Event::read(b"data:  x\ndata:\n\n").written_again(),
        b"data:  x\ndata:\n\n"
    );
}

#[test]
fn a_mark_at_the_start_of_the_stream_is_skipped_as_clients_skip_it_and_nowhere_else() {
    let stream =
        b"\xef\xbb\xbf\xc3\xaf\xc2\xbb\xc2\xbfdata: 1\n\n\xef\xbb\xbfdata: 2\n\ndata: 3\n\n";
    for piece in 1..stream.len() {
        let got = events(stream, piece);
        let messages: Vec<_> = got
            .iter()
            .filter_map(|raw| Event::read(raw).message().map(<[u8]>::to_vec))
            .collect();
        assert_eq!(messages, [b"1".to_vec(), b"3".to_vec()], "piece {piece}");
    }
    for (short, left) in [
        (&b"\xef\xbb"[..], &b"\xef\xbb"[..]),
        (b"\xef\xbb\xbf\xc3", b"\xc3"),
        (b"\xef\xbb\xbf", b""),
    ] {
        let mut framer = Framer::new(100);
        let mut out = Vec::new();
        framer.feed(short, &mut out);
        assert!(out.is_empty());
        let expected = (!left.is_empty()).then(|| Framed::Event(left.to_vec()));
        assert_eq!(
            framer.finish(),
            expected,
            "a stream of a mark's start alone"
        );
    }
    let mut framer = Framer::new(100);
    let mut out = Vec::new();
    framer.feed(b"\xef\xbbdata: 4\n\n", &mut out);
    assert_eq!(out, [Framed::Event(b"\xef\xbbdata: 4\n\n".to_vec())]);
}

#[test]
fn an_event_over_the_limit_is_dropped_as_it_streams_and_the_next_one_is_whole() {
    let stream = b"data: 0123456789\n\ndata: abcdefghijklmnopqrstuvwxyz\n\ndata: 9\n\n";
    for piece in 1..stream.len() {
        assert_eq!(
            framed(stream, piece, 20),
            [
                Framed::Event(b"data: 0123456789\n\n".to_vec()),
                Framed::Oversized(34),
                Framed::Event(b"data: 9\n\n".to_vec()),
            ],
            "piece {piece}"
        );
    }
}

#[test]
fn a_stream_that_ends_mid_event_gives_back_what_it_had() {
    assert_eq!(
        framed(b"data: 1\n\ndata: 2", 3, 100),
        [
            Framed::Event(b"data: 1\n\n".to_vec()),
            Framed::Event(b"data: 2".to_vec())
        ]
    );
    assert!(framed(b"", 3, 100).is_empty());
}

/// A line of an event stream that `sse-stream` takes too.
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".to_vec()),
        Just(b"data:{\"a\":".to_vec()),
        Just(b"data:  2}".to_vec()),
        Just(b"data:".to_vec()),
        Just(b"data: ".to_vec()),
        Just(b"event: message".to_vec()),
        Just(b"event: other".to_vec()),
        Just(b"event:".to_vec()),
        Just(b"id: 0/1".to_vec()),
        Just(b"id:".to_vec()),
        Just(b"retry: 3000".to_vec()),
        Just(b": keep-alive".to_vec()),
        Just(b":".to_vec()),
        Just(Vec::new()),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let ending = prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\r"[..])];
    proptest::collection::vec((line(), ending), 0..24).prop_map(|lines| {
        let mut stream = Vec::new();
        for (line, ending) in lines {
            stream.extend_from_slice(&line);
            stream.extend_from_slice(ending);
        }
        stream
    })
}

proptest! {
    #[test]
    fn framing_loses_no_byte_and_does_not_depend_on_the_pieces(stream in stream(), piece in 1usize..40) {
        let whole = events(&stream, stream.len().max(1));
        let pieces = events(&stream, piece);
        prop_assert_eq!(pieces.concat(), stream.clone());
        // A CR that ends one piece and an LF that starts the next are one line ending: the
        // LF may then begin the next event rather than end this one, which no client can
        // tell apart.
        let strip = |events: Vec<Vec<u8>>| -> Vec<Vec<u8>> {
            events.into_iter().map(|mut raw| {
                while raw.first() == Some(&b'\n') { raw.remove(0); }
                while raw.last() == Some(&b'\n') || raw.last() == Some(&b'\r') { raw.pop(); }
                raw
            }).filter(|raw| !raw.is_empty()).collect()
        };
        prop_assert_eq!(strip(pieces), strip(whole));
    }

    #[test]
    fn events_read_as_sse_stream_reads_them(stream in stream(), piece in 1usize..40) {
        // `sse-stream` gives up on a stream with two `event` or two `id` lines in one event;
        // only the streams it reads are compared.
        if let Some(theirs) = sse_stream_reads(&stream, piece) {
            prop_assert_eq!(ours(&stream, piece), theirs);
        }
    }

    #[test]
    fn a_rewritten_event_reads_as_its_new_data_with_its_type_and_id(stream in stream()) {
        for raw in events(&stream, stream.len().max(1)) {
            let event = Event::read(&raw);
            let again = event.written_again();
            let reread = Event::read(&again);
            prop_assert_eq!((reread.kind, &reread.data, reread.id), (event.kind, &event.data, event.id));
            prop_assert_eq!(events(&again, again.len()).len(), 1, "still one event");
            if event.message().is_none() {
                continue;
            }
            let new = b"{\"jsonrpc\":\"2.0\",\n\"id\":1}";
            let again = event.rewritten(Some(new));
            let reread = Event::read(&again);
            prop_assert_eq!(reread.message(), Some(&new[..]));
            prop_assert_eq!(reread.id(), event.id());
            prop_assert_eq!(reread.kind, event.kind);
            prop_assert_eq!(events(&again, again.len()).len(), 1, "still one event");
            for new in [&new[..], b"{\"jsonrpc\":\"2.0\",\"id\":1}"] {
                prop_assert_eq!(event.rewritten_around(new.to_vec()).concat(), event.rewritten(Some(new)));
            }
        }
    }
}
