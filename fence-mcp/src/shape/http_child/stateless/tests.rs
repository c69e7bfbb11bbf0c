//! Renumbering a stateless body, refusing what the server would read otherwise, and reading
//! what a server message names.

use super::*;

/// The body `renumbered` sends on, as text.
fn sent(renumbered: &Renumbered<'_>) -> Option<String> {
    renumbered
        .body
        .as_deref()
        .map(|body| String::from_utf8(body.to_vec()).unwrap())
}

/// Ids counted from 41, as a test can predict them.
fn counting() -> impl FnMut() -> u64 {
    let mut next = 40;
    move || {
        next += 1;
        next
    }
}

#[test]
fn requests_are_renumbered_and_nothing_else_is_touched() {
    let body = br#"[ {"jsonrpc":"2.0","id":1,"method":"tools/list"}, {"jsonrpc":"2.0","method":"notifications/x","id":null}, {"jsonrpc":"2.0","id":"a","result":{"id":1}}, {"id" : "k\"1", "method":"ping","params":{"id":1}} ]"#;
    let renumbered = Renumbered::new(body, counting());
    assert_eq!(
        sent(&renumbered).unwrap(),
        r#"[{"jsonrpc":"2.0","id":41,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x","id":null},{"jsonrpc":"2.0","id":"a","result":{"id":1}},{"id" : 42, "method":"ping","params":{"id":1}}]"#
    );
    let original = |new: &str| {
        renumbered
            .replaced(new)
            .map(|replaced| replaced.id.as_str())
    };
    assert_eq!(original("41"), Some("1"));
    assert_eq!(original("42"), Some(r#""k\"1""#));
    assert_eq!(original("43"), None);
    assert!(renumbered.refused.is_empty() && renumbered.notes.is_empty());
    // Nothing to renumber: the body as it came, borrowed.
    for body in [
        &br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#[..],
        b"{not json",
        br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
    ] {
        let renumbered = Renumbered::new(body, counting());
        assert!(matches!(renumbered.body, Some(Cow::Borrowed(same)) if same == body));
    }
}

#[test]
fn a_progress_token_is_renumbered_with_its_request() {
    let body = br#"{"jsonrpc":"2.0","params":{"name":"slow","_meta":{"progressToken":"t"}},"id":1,"method":"subscriptions/listen"}"#;
    let renumbered = Renumbered::new(body, || 9);
    assert_eq!(
        sent(&renumbered).unwrap(),
        r#"{"jsonrpc":"2.0","params":{"name":"slow","_meta":{"progressToken":9}},"id":9,"method":"subscriptions/listen"}"#
    );
    let replaced = renumbered.replaced("9").unwrap();
    assert_eq!(
        (replaced.id.as_str(), replaced.token.as_deref()),
        ("1", Some(r#""t""#))
    );
    assert!(replaced.listens);
    let untokened = Renumbered::new(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, || 9);
    let replaced = untokened.replaced("9").unwrap();
    assert_eq!((replaced.token.as_deref(), replaced.listens), (None, false));
}

#[test]
fn a_request_with_two_of_a_member_the_proxy_renumbers_is_refused() {
    let meta = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    for (body, id, problem) in [
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"_meta":{{{meta},"progressToken":"a","progressToken":1}}}}}}"#
            ),
            "2",
            "two `params._meta.progressToken` members",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"_meta":{"progressToken":"a"},"\u005fmeta":{"progressToken":1}}}"#.to_owned(),
            r#""x""#,
            "two `params._meta` members",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{},"params":{"_meta":{"progressToken":1}}}"#.to_owned(),
            "3",
            "two `params` members",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"id":1,"method":"ping"}"#.to_owned(),
            "null",
            "two `id` members",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"\ud800":1,"progressToken":1}}}"#.to_owned(),
            "4",
            "`params._meta` that cannot be read",
        ),
    ] {
        let renumbered = Renumbered::new(body.as_bytes(), counting());
        assert_eq!(sent(&renumbered), None, "{body}");
        let [refused] = renumbered.refused.as_slice() else {
            panic!("{body}: {:?}", renumbered.refused);
        };
        let refused: serde_json::Value = serde_json::from_slice(refused).unwrap();
        assert_eq!(refused["id"].to_string(), id, "{body}");
        assert_eq!(refused["error"]["code"], -32600, "{body}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(problem), "{body}: {message}");
    }
    // In a batch, the rest goes on.
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"params":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let renumbered = Renumbered::new(batch, counting());
    assert_eq!(
        sent(&renumbered).unwrap(),
        r#"[{"jsonrpc":"2.0","id":41,"method":"ping"}]"#
    );
    assert_eq!(renumbered.refused.len(), 1);
}

#[test]
fn a_cancellation_goes_on_only_for_a_request_of_its_own_body() {
    let cancel = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        )
    };
    for named in ["1", r#""1""#, "7", r#""x""#] {
        let body = cancel(named);
        let renumbered = Renumbered::new(body.as_bytes(), counting());
        assert_eq!(sent(&renumbered), None, "{named}");
        let [note] = renumbered.notes.as_slice() else {
            panic!("{named}: {:?}", renumbered.notes);
        };
        assert!(
            note.starts_with("dropped a stateless client's notifications/cancelled"),
            "{note}"
        );
    }
    let unreadable = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}"#;
    assert_eq!(sent(&Renumbered::new(unreadable, counting())), None);

    let own = format!(
        r#"[{{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{{"name":"slow"}}}},{}]"#,
        cancel("1")
    );
    let renumbered = Renumbered::new(own.as_bytes(), counting());
    assert_eq!(
        sent(&renumbered).unwrap(),
        format!(
            r#"[{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"slow"}}}},{}]"#,
            cancel("41")
        )
    );
    assert!(renumbered.notes.is_empty());
}

#[test]
fn the_proxys_ids_are_random_and_exact_in_every_client() {
    let ids: Vec<u64> = (0..64).map(|_| fresh_id()).collect();
    assert!(ids.iter().all(|id| (1..=MAX_ID).contains(id)));
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len());
    assert!(
        ids.windows(2)
            .any(|pair| pair[0].abs_diff(pair[1]) > 1 << 20)
    );
    assert_ne!(unrandom(), unrandom());
}

fn members_of(json: &str) -> Members<'_> {
    Members::of(serde_json::from_str(json).unwrap()).unwrap()
}

#[test]
fn a_servers_progress_and_subscription_are_read_strictly() {
    let progress = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","method":"notifications\/progress","params":{params}}}"#)
    };
    let read = |json: &str| progress_named(&members_of(json));
    assert_eq!(
        read(&progress(r#"{"progressToken":9,"progress":1}"#)),
        Named::This("9".to_owned())
    );
    for params in [
        r#"{"progressToken":9,"progressToken":1}"#,
        r#"{"progress":1}"#,
        "[9]",
    ] {
        assert!(
            matches!(read(&progress(params)), Named::Unreadable(_)),
            "{params}"
        );
    }
    let twice = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9},"params":{}}"#;
    assert!(matches!(read(twice), Named::Unreadable(_)));
    let other =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":9}}"#;
    assert_eq!(read(other), Named::Nothing);

    let subscription = |meta: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{{"uri":"u","_meta":{meta}}}}}"#
        )
    };
    let read = |json: &str| subscription_named(&members_of(json));
    assert_eq!(
        read(&subscription(
            r#"{"io.modelcontextprotocol/subscriptionId":41}"#
        )),
        Named::This("41".to_owned())
    );
    assert!(matches!(
        read(&subscription(
            r#"{"io.modelcontextprotocol/subscriptionId":41,"io.modelcontextprotocol\/subscriptionId":1}"#
        )),
        Named::Unreadable(_)
    ));
    assert_eq!(read(&subscription(r#"{"other":1}"#)), Named::Nothing);
    assert_eq!(
        read(r#"{"jsonrpc":"2.0","id":41,"result":{}}"#),
        Named::Nothing
    );
}
