use super::*;

/// Everything `receiver` gives until it ends, as text.
fn drained(mut receiver: Receiver) -> Vec<String> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let mut all = Vec::new();
            while let Some(item) = receiver.recv().await {
                all.push(String::from_utf8_lossy(&item).into_owned());
            }
            all
        })
}

/// The answer to the request `id`.
fn answer(id: u64) -> Routed {
    Routed {
        answers: Some(id.to_string()),
        message: format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes(),
    }
}

fn note(text: &str) -> Routed {
    Routed::other(format!(r#"{{"jsonrpc":"2.0","method":"n","params":"{text}"}}"#).into_bytes())
}

fn post_stream(streams: &mut Streams, unanswered: &[u64]) -> (Arc<Stream>, Receiver) {
    let unanswered = unanswered.iter().map(u64::to_string).collect();
    streams.open(Carries::Resumable { listens: false }, unanswered)
}

#[test]
fn every_event_has_an_id_naming_its_stream_and_the_stream_ends_once_answered() {
    let mut streams = Streams::default();
    let _first = post_stream(&mut streams, &[9]);
    let (stream, receiver) = post_stream(&mut streams, &[1, 2]);
    stream.prime();
    stream.send(note("a"), None, false).unwrap();
    stream.send(answer(1), None, true).unwrap();
    stream.send(answer(2), None, true).unwrap();
    let events = drained(receiver);
    assert_eq!(events[0], "id: 2-0\nretry: 1000\ndata:\n\n");
    for (at, event) in events.iter().enumerate().skip(1) {
        assert!(
            event.starts_with(&format!("id: 2-{at}\nevent: message\ndata: {{")),
            "{event}"
        );
    }
    assert_eq!(events.len(), 4);
    // Over: what comes for it now goes elsewhere.
    assert!(stream.send(note("late"), None, false).is_err());
    assert!(!stream.alive());
}

#[test]
fn an_answer_for_a_client_that_has_gone_is_kept_and_a_resumption_replays_it() {
    let mut streams = Streams::default();
    let (stream, receiver) = post_stream(&mut streams, &[1]);
    stream.prime();
    drop(receiver);
    assert!(!stream.reading() && stream.alive());
    // What may go elsewhere does; the answer, which may not, is kept.
    let back = stream.send(note("elsewhere"), None, false).unwrap_err();
    assert!(!back.stalled && back.message.ends_with(b"\"elsewhere\"}"));
    stream.send(answer(1), None, true).unwrap();

    let (found, after) = streams.find("1-0").unwrap();
    assert!(Arc::ptr_eq(&found, &stream));
    let (resumed, missed) = found.resume(after);
    assert!(!missed);
    let events = drained(resumed);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].starts_with("id: 1-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,"));
    // Again, from the start: the priming event too; and after the last, nothing.
    assert_eq!(drained(stream.resume(0).0).len(), 1);
    assert!(drained(stream.resume(1).0).is_empty());
}

#[test]
fn a_resumption_takes_over_from_the_client_before_and_carries_the_rest_of_the_stream() {
    let mut streams = Streams::default();
    let (stream, before) = post_stream(&mut streams, &[1]);
    stream.prime();
    stream.send(note("a"), None, false).unwrap();
    let (resumed, _) = stream.resume(0);
    stream.send(answer(1), None, true).unwrap();
    // The client before reads what waited for it, then its end.
    assert_eq!(drained(before).len(), 2);
    let events = drained(resumed);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].starts_with("id: 1-1\n") && events[1].starts_with("id: 1-2\n"));
}

#[test]
fn past_the_bound_the_oldest_events_are_forgotten_and_an_answer_becomes_an_error() {
    let mut streams = Streams::default();
    let (stream, receiver) = post_stream(&mut streams, &[1, 2]);
    drop(receiver);
    stream.prime();
    stream.send(answer(1), None, true).unwrap();
    let big = "x".repeat(REPLAY_BYTES / 3);
    for _ in 0..4 {
        stream.send(note(&big), None, true).unwrap();
    }
    stream.send(answer(2), None, true).unwrap();
    let (resumed, missed) = stream.resume(0);
    assert!(missed);
    let events = drained(resumed);
    assert!(events[0].starts_with("id: 1-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,"), "{}", events[0]);
    assert!(events[0].contains(FORGOTTEN_WORDS));
    assert!(events.last().unwrap().starts_with("id: 1-6\n"));
    let kept: usize = events.iter().map(|event| event.len() + MESSAGE_COST).sum();
    assert!(kept <= REPLAY_BYTES, "{kept}");
    // The newest is kept, however large.
    let (stream, _) = post_stream(&mut streams, &[1]);
    stream.prime();
    stream
        .send(note(&"y".repeat(2 * REPLAY_BYTES)), None, true)
        .unwrap();
    let (resumed, _) = stream.resume(0);
    stream.finish();
    assert_eq!(drained(resumed).len(), 1);
}

#[test]
fn a_stream_that_cannot_be_resumed_gives_back_what_its_gone_client_would_have_had() {
    let mut streams = Streams::default();
    for carries in [Carries::Events, Carries::Json] {
        let (stream, receiver) = streams.open(carries, vec!["1".into()]);
        drop(receiver);
        let back = stream.send(answer(1), None, true).unwrap_err();
        assert_eq!(back.message, answer(1).message);
        assert!(!stream.alive());
        assert!(streams.find("0-0").is_none());
    }
    let (stream, receiver) = streams.open(Carries::Json, vec!["1".into()]);
    stream.send(answer(1), None, true).unwrap();
    assert_eq!(
        drained(receiver),
        [String::from_utf8(answer(1).message).unwrap()]
    );
}

#[test]
fn a_session_keeps_its_last_streams_and_reads_only_its_own_ids() {
    let mut streams = Streams::default();
    let (reading, _receiver) = post_stream(&mut streams, &[1]);
    let mut gone = Vec::new();
    for _ in 0..REPLAY_STREAMS {
        let (stream, receiver) = post_stream(&mut streams, &[1]);
        drop(receiver);
        gone.push(stream);
    }
    // The oldest no client reads is forgotten; the one read is kept.
    assert!(streams.find("1-0").is_some());
    assert!(streams.find("2-0").is_none());
    assert!(!gone[0].alive());
    assert!(streams.find(&format!("{}-0", REPLAY_STREAMS + 1)).is_some());
    assert!(reading.alive());
    for never in [
        "", "1", "1-", "-0", "1-0-0", "+1-0", "1-+0", "x-0", "99-0", " 1-0",
    ] {
        assert!(streams.find(never).is_none(), "{never:?}");
    }
}
