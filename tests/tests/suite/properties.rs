//! Properties, checked with proptest against the deliberately naive reference of
//! `fence-reference`, which shares nothing with the crate: it walks the input byte by byte and,
//! at every `<`, compares the next 17 bytes (after an optional `/`) with the name.
//!
//! The neutraliser properties are written over any `fn(&str) -> Cow<'_, str>`, and a negative
//! control runs them, through proptest's `TestRunner`, against neutralisers broken on purpose:
//! each must fail exactly the properties it breaks, which shows the suite can go red.

use std::borrow::Cow;

use fence_reference::{self as reference, CLOSER, INFIX, NAME, OPENER_PREFIX};
use fence_runtime::{
    Neutraliser, Source, fence, fence_source_of, neutralise, neutralise_bytes, parse,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

/// Where `inner`, a slice of `outer`, starts in it.
fn offset_in(outer: &str, inner: &str) -> usize {
    inner.as_ptr().addr() - outer.as_ptr().addr()
}

// Strategies: text built from fragments, so that markers in random casings, near misses and
// pieces of markers that join up are common.

const TAILS: &[&str] = &[">", " source=tool:x>", "", " ", "s", "\t", "\n", "\u{FF1E}"];
const NEAR_MISSES: &[&str] = &[
    "< /untrusted-content>",
    "</ untrusted-content>",
    "<untrusted_content>",
    "<untrusted content",
    "<\\untrusted-content",
    "\u{FF1C}/untrusted-content>",
    "</untrusted-\u{212A}ontent>",
    "</untru\u{17F}ted-content>",
    "</un\u{442}rusted-content>",
    "</untrusted\u{200D}-content>",
    "</untrusted\u{AD}-content>",
    "!MURMUR-NEUTRALISED!",
    "<!MURMUR-NEUTRALISED!",
    "<!",
];
const PUNCTUATION: &[&str] = &[
    "<", "/", ">", "<<", "</", "!", "-", " ", "\n", "\r", "\r\n", "\0", "source=", ":",
];
const MULTIBYTE: &[&str] = &[
    "\u{E9}",
    "\u{FF1C}",
    "\u{1F642}",
    "\u{212A}",
    "\u{17F}",
    "\u{442}",
    "\u{200B}",
    "\u{65E5}",
];
const INVALID_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc3",
    b"\xe2\x82",
    b"\xc0\xbc",
    b"\xf5",
];

/// The name in a random ASCII casing, often all lowercase or all uppercase.
fn random_casing() -> impl Strategy<Value = String> {
    let mixed = vec(any::<bool>(), NAME.len()).prop_map(|upper| {
        NAME.chars()
            .zip(upper)
            .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
            .collect()
    });
    prop_oneof![
        2 => Just(NAME.to_owned()),
        1 => Just(NAME.to_ascii_uppercase()),
        3 => mixed,
    ]
}

fn slash(closer: bool) -> &'static str {
    if closer { "/" } else { "" }
}

fn fragment() -> BoxedStrategy<String> {
    prop_oneof![
        // A live marker, with something after its name.
        4 => (any::<bool>(), random_casing(), select(TAILS))
            .prop_map(|(closer, name, tail)| format!("<{}{name}{tail}", slash(closer))),
        // A proper prefix of one, which only a later fragment can complete.
        2 => (any::<bool>(), random_casing(), 0..NAME.len())
            .prop_map(|(closer, name, end)| format!("<{}{}", slash(closer), &name[..end])),
        // The end of a name, which can complete such a prefix.
        1 => (random_casing(), 0..NAME.len()).prop_map(|(name, start)| name[start..].to_owned()),
        // An already neutralised marker.
        2 => (any::<bool>(), random_casing())
            .prop_map(|(closer, name)| format!("<{INFIX}{}{name}>", slash(closer))),
        2 => select(NEAR_MISSES).prop_map(str::to_owned),
        3 => select(PUNCTUATION).prop_map(str::to_owned),
        2 => select(MULTIBYTE).prop_map(str::to_owned),
        2 => "[a-zA-Z -]{0,6}",
        1 => any::<char>().prop_map(String::from),
    ]
    .boxed()
}

fn text() -> impl Strategy<Value = String> {
    vec(fragment(), 0..12).prop_map(|parts| parts.concat())
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        3 => fragment().prop_map(String::into_bytes),
        1 => vec(any::<u8>(), 0..6),
        1 => select(INVALID_UTF8).prop_map(<[u8]>::to_vec),
    ];
    vec(part, 0..12).prop_map(|parts| parts.concat())
}

// The neutraliser properties, over any neutraliser.

type Neutralise = for<'a> fn(&'a str) -> Cow<'a, str>;
type Property = fn(Neutralise, &str) -> Result<(), TestCaseError>;

const PROPERTIES: &[(&str, Property)] = &[
    ("equals the reference", equals_reference),
    ("idempotent", idempotent),
    ("insertion only", insertion_only),
    ("no live marker", no_live_marker),
    ("grows by 20 bytes per marker", grows_by_20_per_marker),
    ("borrowed exactly when clean", borrowed_exactly_when_clean),
];

fn equals_reference(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(neutralise(input), reference::neutralise_str(input));
    Ok(())
}

fn idempotent(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    let once = neutralise(input).into_owned();
    prop_assert_eq!(neutralise(&once), once.as_str());
    Ok(())
}

/// Removing the infixes inserted after the reference's markers gives the input back.
fn insertion_only(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    let output = neutralise(input);
    let output = output.as_bytes();
    let mut restored = Vec::with_capacity(input.len());
    let mut copied = 0;
    for (k, at) in reference::markers(input.as_bytes()).into_iter().enumerate() {
        // The k-th infix sits after the k-th marker's `<`, shifted by the k before it.
        let cut = at + 1 + k * INFIX.len();
        let kept = output.get(copied..cut);
        let inserted = output.get(cut..cut + INFIX.len());
        prop_assert!(
            kept.is_some() && inserted == Some(INFIX.as_bytes()),
            "no infix after the marker at byte {} of the input, in {:?}",
            at,
            String::from_utf8_lossy(output)
        );
        restored.extend_from_slice(kept.unwrap_or_default());
        copied = cut + INFIX.len();
    }
    restored.extend_from_slice(output.get(copied..).unwrap_or_default());
    prop_assert_eq!(String::from_utf8_lossy(&restored), input);
    Ok(())
}

fn no_live_marker(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    let output = neutralise(input);
    let live = reference::markers(output.as_bytes());
    prop_assert!(
        live.is_empty(),
        "live markers at {:?} in {:?}",
        live,
        output
    );
    Ok(())
}

fn grows_by_20_per_marker(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    let markers = reference::markers(input.as_bytes()).len();
    prop_assert_eq!(neutralise(input).len(), input.len() + 20 * markers);
    Ok(())
}

fn borrowed_exactly_when_clean(neutralise: Neutralise, input: &str) -> Result<(), TestCaseError> {
    let clean = reference::markers(input.as_bytes()).is_empty();
    match neutralise(input) {
        Cow::Borrowed(output) => {
            prop_assert!(clean, "borrowed, but the input has a marker");
            prop_assert!(std::ptr::eq(output, input), "borrowed from elsewhere");
        }
        Cow::Owned(_) => prop_assert!(!clean, "owned, but the input has no marker"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn neutralise_equals_the_reference(input in text()) {
        equals_reference(neutralise, &input)?;
    }

    #[test]
    fn neutralise_is_idempotent(input in text()) {
        idempotent(neutralise, &input)?;
    }

    #[test]
    fn neutralise_only_inserts(input in text()) {
        insertion_only(neutralise, &input)?;
    }

    #[test]
    fn neutralise_leaves_no_live_marker(input in text()) {
        no_live_marker(neutralise, &input)?;
    }

    #[test]
    fn neutralise_grows_by_20_bytes_per_marker(input in text()) {
        grows_by_20_per_marker(neutralise, &input)?;
    }

    #[test]
    fn neutralise_borrows_exactly_when_clean(input in text()) {
        borrowed_exactly_when_clean(neutralise, &input)?;
    }

    #[test]
    fn neutralise_bytes_equals_the_reference(input in bytes()) {
        let expected = reference::neutralise(&input);
        let got = neutralise_bytes(&input);
        prop_assert_eq!(&*got, expected.as_slice());
        let clean = reference::markers(&input).is_empty();
        prop_assert_eq!(matches!(got, Cow::Borrowed(b) if std::ptr::eq(b, input.as_slice())), clean);
        if let Ok(text) = std::str::from_utf8(&input) {
            let as_text = neutralise(text);
            prop_assert_eq!(&*got, as_text.as_bytes());
        }
    }

    #[test]
    fn neutralise_bytes_on_arbitrary_bytes(input in vec(any::<u8>(), 0..256)) {
        let expected = reference::neutralise(&input);
        prop_assert_eq!(&*neutralise_bytes(&input), expected.as_slice());
    }

    #[test]
    fn streaming_in_random_chunks_equals_one_shot(
        input in bytes(),
        cuts in vec(any::<Index>(), 0..8),
    ) {
        let whole = reference::neutralise(&input);
        prop_assert_eq!(&*neutralise_bytes(&input), whole.as_slice());
        let mut ends: Vec<usize> = cuts.iter().map(|cut| cut.index(input.len() + 1)).collect();
        ends.push(input.len());
        ends.sort_unstable();
        let mut neutraliser = Neutraliser::new();
        let mut out = Vec::new();
        let mut start = 0;
        for end in ends {
            neutraliser.push_bytes(&input[start..end], &mut out);
            let held = neutraliser.held();
            prop_assert!(held.len() <= 18, "holds {} bytes", held.len());
            prop_assert_eq!(held, reference::partial_tail(&input[..end]));
            // Everything before the held bytes is written, and written for good.
            let settled = reference::neutralise(&input[..end - held.len()]);
            prop_assert_eq!(&out, &settled);
            start = end;
        }
        neutraliser.finish_bytes(&mut out);
        prop_assert_eq!(out, whole);
    }

    #[test]
    fn streaming_one_byte_at_a_time_equals_one_shot(input in bytes()) {
        let mut neutraliser = Neutraliser::new();
        let mut out = Vec::new();
        for byte in &input {
            neutraliser.push_bytes(std::slice::from_ref(byte), &mut out);
            prop_assert!(neutraliser.held().len() <= 18);
        }
        neutraliser.finish_bytes(&mut out);
        prop_assert_eq!(out, reference::neutralise(&input));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_reads_back_the_sanitised_source_and_neutralised_content(
        name in text(),
        content in text(),
    ) {
        let source = format!("tool:{}", reference::sanitise(&name));
        let block = fence(&Source::tool(&name), &content);
        let text = block.as_str();
        prop_assert_eq!(block.source().as_str(), source.as_str());
        let read = parse(text).map_err(|e| TestCaseError::fail(format!("{e}: {text:?}")))?;
        prop_assert_eq!(read.source(), source.as_str());
        let neutralised = reference::neutralise_str(&content);
        prop_assert_eq!(read.content(), neutralised.as_str());
        prop_assert_eq!(read.content(), neutralise(&content));
        prop_assert_eq!(block.content(), neutralised.as_str());
        // The content runs from the end of the fence's opener to its separator and closer.
        let start = offset_in(text, read.content());
        prop_assert_eq!(start, OPENER_PREFIX.len() + source.len() + ">\n".len());
        prop_assert_eq!(start + read.content().len() + "\n".len() + CLOSER.len(), text.len());
        prop_assert_eq!(fence_source_of(text), Some(source.as_str()));
        // The only live markers in the block are the fence's own opener and closer.
        prop_assert_eq!(reference::markers(text.as_bytes()), vec![0, text.len() - CLOSER.len()]);
    }

    #[test]
    fn parse_reads_back_a_custom_source(kind in text(), name in text(), content in text()) {
        let source = format!(
            "{}:{}",
            reference::sanitise(&kind).replace(':', "_"),
            reference::sanitise(&name)
        );
        let Ok(custom) = Source::custom(&kind, &name) else {
            let reserved = kind.trim().to_ascii_lowercase();
            prop_assert!(reserved == "tool" || reserved == "task");
            return Ok(());
        };
        let block = fence(&custom, &content);
        let read = parse(block.as_str()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.source(), source.as_str());
        prop_assert_eq!(read.content(), reference::neutralise_str(&content));
        prop_assert_eq!(
            reference::markers(block.as_str().as_bytes()),
            vec![0, block.as_str().len() - CLOSER.len()]
        );
    }

    #[test]
    fn text_glued_around_a_fence_never_ends_it_inside_its_content(
        prefix in prop_oneof![
            Just(String::new()),
            text(),
            text().prop_map(|t| format!("<untrusted-content source=evil>\n{t}")),
        ],
        content in text(),
        suffix in prop_oneof![
            Just(String::new()),
            text(),
            text().prop_map(|t| format!("{t}\n</untrusted-content>")),
        ],
    ) {
        let block = fence(&Source::tool("t"), &content);
        let message = format!("{prefix}{}{suffix}", block.as_str());
        let fence_closer = prefix.len() + block.as_str().len() - CLOSER.len();
        match parse(&message) {
            Ok(read) => {
                let closer = offset_in(&message, read.content()) + read.content().len() + 1;
                prop_assert!(
                    closer >= fence_closer,
                    "the block ended at byte {} inside the fence, whose closer is at {}",
                    closer,
                    fence_closer
                );
                if reference::closers(suffix.as_bytes()).is_empty() {
                    // No closer of the suffix's own: it can only have ended at the fence's.
                    prop_assert_eq!(closer, fence_closer);
                    prop_assert_eq!(suffix.as_str(), "");
                }
                if prefix.is_empty() {
                    prop_assert_eq!(read.source(), "tool:t");
                    if closer == fence_closer {
                        prop_assert_eq!(read.content(), neutralise(&content));
                    }
                }
            }
            Err(_) => prop_assert!(
                !(prefix.is_empty() && suffix.is_empty()),
                "a bare fence failed to parse"
            ),
        }
    }

    #[test]
    fn a_neutralised_suffix_leaves_the_fence_closer_final(content in text(), suffix in text()) {
        let block = fence(&Source::tool("t"), &content);
        let message = format!("{}{}", block.as_str(), neutralise(&suffix));
        let parsed = parse(&message);
        prop_assert_eq!(parsed.is_ok(), suffix.is_empty(), "{:?}", parsed);
        if let Ok(read) = parsed {
            prop_assert_eq!(read.content(), neutralise(&content));
        }
    }

    #[test]
    fn parse_takes_content_verbatim_up_to_the_final_closer(source in text(), content in text()) {
        // Any source free of `>`, CR and LF, and any content at all, live markers included.
        let source: String = source.chars().filter(|c| !matches!(c, '>' | '\r' | '\n')).collect();
        let message = format!("{OPENER_PREFIX}{source}>\n{content}\n{CLOSER}");
        let read = parse(&message).map_err(|e| TestCaseError::fail(format!("{e}: {message:?}")))?;
        prop_assert_eq!(read.source(), source.as_str());
        prop_assert_eq!(read.content(), content.as_str());
    }

    #[test]
    fn whatever_parse_accepts_has_the_grammar_s_shape(message in prop_oneof![
        text(),
        (text(), text()).prop_map(|(s, c)| format!("{OPENER_PREFIX}{s}>\n{c}\n{CLOSER}")),
    ]) {
        if let Ok(read) = parse(&message) {
            let (source, content) = (read.source(), read.content());
            prop_assert!(!source.contains(['>', '\r', '\n']));
            let content_start = OPENER_PREFIX.len() + source.len() + ">\n".len();
            prop_assert_eq!(offset_in(&message, source), OPENER_PREFIX.len());
            prop_assert_eq!(offset_in(&message, content), content_start);
            prop_assert_eq!(message.len(), content_start + content.len() + 1 + CLOSER.len());
            prop_assert!(message[..OPENER_PREFIX.len()].eq_ignore_ascii_case(OPENER_PREFIX));
            prop_assert_eq!(&message[content_start - 2..content_start], ">\n");
            let end = &message[content_start + content.len()..];
            prop_assert!(end.eq_ignore_ascii_case(&format!("\n{CLOSER}")), "ends with {:?}", end);
        }
    }
}

// The negative control.

/// Inserts the infix after every `<` at which `is_marker` says a marker starts.
fn insert_where(input: &str, is_marker: impl Fn(&[u8], usize) -> bool) -> Cow<'_, str> {
    let bytes = input.as_bytes();
    let points: Vec<usize> = (0..bytes.len())
        .filter(|&at| bytes[at] == b'<' && is_marker(bytes, at))
        .collect();
    if points.is_empty() {
        return Cow::Borrowed(input);
    }
    let mut out = String::new();
    let mut copied = 0;
    for at in points {
        out.push_str(&input[copied..=at]);
        out.push_str(INFIX);
        copied = at + 1;
    }
    out.push_str(&input[copied..]);
    Cow::Owned(out)
}

/// Broken: matches lowercase markers only.
fn lowercase_only(input: &str) -> Cow<'_, str> {
    insert_where(input, |bytes, at| {
        let rest = &bytes[at..];
        rest.starts_with(b"<untrusted-content") || rest.starts_with(b"</untrusted-content")
    })
}

/// Broken: misses openers.
fn closers_only(input: &str) -> Cow<'_, str> {
    insert_where(input, |bytes, at| reference::closers(bytes).contains(&at))
}

/// Broken: right text, but always copies.
fn always_owned(input: &str) -> Cow<'_, str> {
    Cow::Owned(reference::neutralise_str(input))
}

/// Broken: escapes the `<` of each marker as `&lt;` instead of inserting the infix.
fn escapes_lt(input: &str) -> Cow<'_, str> {
    let markers = reference::markers(input.as_bytes());
    if markers.is_empty() {
        return Cow::Borrowed(input);
    }
    let mut out = String::new();
    for (at, c) in input.char_indices() {
        if markers.contains(&at) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Broken: also treats an already neutralised marker as a marker, so inserts again.
fn sees_through_the_infix(input: &str) -> Cow<'_, str> {
    insert_where(input, |bytes, at| {
        let mut rest = &bytes[at + 1..];
        while let Some(after) = rest.strip_prefix(INFIX.as_bytes()) {
            rest = after;
        }
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        rest.len() >= NAME.len() && rest[..NAME.len()].eq_ignore_ascii_case(NAME.as_bytes())
    })
}

/// Broken: neutralises only the first marker.
fn first_only(input: &str) -> Cow<'_, str> {
    let first = reference::markers(input.as_bytes()).first().copied();
    insert_where(input, |_, at| Some(at) == first)
}

/// The names of the properties `neutralise` fails, each run by its own `TestRunner`.
fn failing_properties(neutralise: Neutralise) -> Vec<&'static str> {
    let mut failing = Vec::new();
    for &(name, property) in PROPERTIES {
        let config = Config {
            cases: 256,
            failure_persistence: None,
            max_shrink_iters: 64,
            ..Config::default()
        };
        let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut runner = TestRunner::new_with_rng(config, rng);
        match runner.run(&text(), |input| property(neutralise, &input)) {
            Ok(()) => {}
            Err(TestError::Fail(..)) => failing.push(name),
            Err(TestError::Abort(why)) => panic!("{name} aborted: {why}"),
        }
    }
    failing
}

#[test]
fn negative_control_the_real_neutraliser_passes_every_property() {
    assert_eq!(failing_properties(neutralise), Vec::<&str>::new());
}

#[test]
fn negative_control_lowercase_only_matching_fails() {
    assert_eq!(
        failing_properties(lowercase_only),
        [
            "equals the reference",
            "insertion only",
            "no live marker",
            "grows by 20 bytes per marker",
            "borrowed exactly when clean",
        ]
    );
}

#[test]
fn negative_control_missing_openers_fails() {
    assert_eq!(
        failing_properties(closers_only),
        [
            "equals the reference",
            "insertion only",
            "no live marker",
            "grows by 20 bytes per marker",
            "borrowed exactly when clean",
        ]
    );
}

#[test]
fn negative_control_copying_clean_text_fails() {
    assert_eq!(
        failing_properties(always_owned),
        ["borrowed exactly when clean"]
    );
}

#[test]
fn negative_control_escaping_instead_of_inserting_fails() {
    assert_eq!(
        failing_properties(escapes_lt),
        [
            "equals the reference",
            "insertion only",
            "grows by 20 bytes per marker",
        ]
    );
}

#[test]
fn negative_control_re_neutralising_fails() {
    assert_eq!(
        failing_properties(sees_through_the_infix),
        [
            "equals the reference",
            "idempotent",
            "insertion only",
            "grows by 20 bytes per marker",
            "borrowed exactly when clean",
        ]
    );
}

#[test]
fn negative_control_first_marker_only_fails() {
    assert_eq!(
        failing_properties(first_only),
        [
            "equals the reference",
            "idempotent",
            "insertion only",
            "no live marker",
            "grows by 20 bytes per marker",
        ]
    );
}
