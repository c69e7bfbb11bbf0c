//! Exhaustive sweeps: every ASCII casing of the marker name, as a closer and as an opener, and
//! every single-byte substitution that must not count as a marker.
//!
//! `untrusted-content` has 16 letters and one `-`, so it has 2^16 = 65,536 ASCII casings. The
//! expected output of each is the input with the infix inserted after its `<`: that form is
//! trivially derived, so the expectations here are built rather than written out.

use std::borrow::Cow;
use std::collections::HashSet;

use fence_reference::{INFIX, NAME};
use fence_runtime::{Source, fence, fence_source_of, neutralise, neutralise_bytes, parse};

/// The casing of the name whose letter `i` (counting letters only, from the left) is uppercase
/// exactly when bit `i` of `mask` is set.
fn casing(mask: u32) -> String {
    let mut letter = 0;
    NAME.chars()
        .map(|c| {
            if c == '-' {
                return c;
            }
            let upper = mask >> letter & 1 == 1;
            letter += 1;
            if upper { c.to_ascii_uppercase() } else { c }
        })
        .collect()
}

#[test]
fn the_name_has_16_letters_and_65536_casings() {
    assert_eq!(NAME.chars().filter(char::is_ascii_alphabetic).count(), 16);
    assert_eq!(casing(0), "untrusted-content");
    assert_eq!(casing(0xFFFF), "UNTRUSTED-CONTENT");
    assert_eq!(casing(1), "Untrusted-content");
    assert_eq!(casing(1 << 15), "untrusted-contenT");
    let all: HashSet<String> = (0..1 << 16).map(casing).collect();
    assert_eq!(all.len(), 65_536);
}

#[test]
fn every_casing_of_a_closer_is_neutralised() {
    for mask in 0..1 << 16 {
        let name = casing(mask);
        let closer = format!("</{name}>");
        let expected = format!("<{INFIX}/{name}>");
        let got = neutralise(&closer);
        assert!(matches!(got, Cow::Owned(_)), "{closer}");
        assert_eq!(got, expected, "{closer}");
        assert_eq!(&*neutralise_bytes(closer.as_bytes()), expected.as_bytes());
        // Neutralised once, it is left alone.
        assert!(
            matches!(neutralise(&expected), Cow::Borrowed(_)),
            "{closer}"
        );
    }
}

#[test]
fn every_casing_of_an_opener_is_neutralised() {
    for mask in 0..1 << 16 {
        let name = casing(mask);
        let opener = format!("<{name} source=x>");
        let expected = format!("<{INFIX}{name} source=x>");
        let got = neutralise(&opener);
        assert!(matches!(got, Cow::Owned(_)), "{opener}");
        assert_eq!(got, expected, "{opener}");
        assert_eq!(&*neutralise_bytes(opener.as_bytes()), expected.as_bytes());
        assert!(
            matches!(neutralise(&expected), Cow::Borrowed(_)),
            "{opener}"
        );
    }
}

#[test]
fn every_casing_is_neutralised_inside_surrounding_text() {
    for mask in 0..1 << 16 {
        let name = casing(mask);
        let input = format!("before </{name}> middle <{name} source=x> after");
        let expected = format!("before <{INFIX}/{name}> middle <{INFIX}{name} source=x> after");
        assert_eq!(neutralise(&input), expected, "{input}");
        let block = fence(&Source::tool("t"), &input);
        assert_eq!(
            block.as_str(),
            format!("<untrusted-content source=tool:t>\n{expected}\n</untrusted-content>")
        );
    }
}

#[test]
fn every_casing_is_a_closer_and_an_opener_to_the_parser() {
    for mask in 0..1 << 16 {
        let name = casing(mask);
        let closed = format!("<untrusted-content source=tool:x>\nA\n</{name}>");
        let read = parse(&closed).unwrap_or_else(|e| panic!("{closed:?}: {e}"));
        assert_eq!((read.source(), read.content()), ("tool:x", "A"));

        let opened = format!("<{name} source=tool:x>\nA\n</untrusted-content>");
        let read = parse(&opened).unwrap_or_else(|e| panic!("{opened:?}: {e}"));
        assert_eq!((read.source(), read.content()), ("tool:x", "A"));
        assert_eq!(fence_source_of(&opened), Some("tool:x"));
    }
}

#[test]
fn every_casing_of_the_source_attribute_opens_a_block() {
    for mask in 0..1_u32 << 6 {
        let attribute: String = "source"
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if mask >> i & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        let message = format!("<untrusted-content {attribute}=Tool:X>\nA\n</untrusted-content>");
        let read = parse(&message).unwrap_or_else(|e| panic!("{message:?}: {e}"));
        // The source name keeps its own casing.
        assert_eq!((read.source(), read.content()), ("Tool:X", "A"));
    }
}

#[test]
fn no_other_ascii_byte_stands_in_for_a_character_of_the_name() {
    let name = NAME.as_bytes();
    for position in 0..name.len() {
        for byte in 0..=127_u8 {
            if byte.eq_ignore_ascii_case(&name[position]) {
                continue;
            }
            let mut altered = name.to_vec();
            altered[position] = byte;
            for prefix in [&b"<"[..], b"</"] {
                let input = [prefix, &altered, b">"].concat();
                let got = neutralise_bytes(&input);
                assert!(
                    matches!(got, Cow::Borrowed(b) if b == input.as_slice()),
                    "{:?} changed to {:?}",
                    String::from_utf8_lossy(&input),
                    String::from_utf8_lossy(&got)
                );
            }
        }
    }
}

#[test]
fn only_a_slash_or_nothing_may_sit_between_the_lt_and_the_name() {
    for byte in 0..=127_u8 {
        let input = [b"<", &[byte][..], NAME.as_bytes(), b">"].concat();
        let got = neutralise_bytes(&input);
        match byte {
            // `</untrusted-content>` is a closer.
            b'/' => assert_eq!(&*got, format!("<{INFIX}/{NAME}>").as_bytes()),
            // `<<untrusted-content>`: the second `<` starts an opener.
            b'<' => assert_eq!(&*got, format!("<<{INFIX}{NAME}>").as_bytes()),
            _ => assert!(
                matches!(got, Cow::Borrowed(_)),
                "byte {byte:#04x} made {:?} a marker",
                String::from_utf8_lossy(&input)
            ),
        }
    }
}

#[test]
fn every_proper_prefix_of_a_marker_at_the_end_is_left_alone() {
    for mask in [0, 0xFFFF, 0x5555] {
        let name = casing(mask);
        for marker in [format!("<{name}"), format!("</{name}")] {
            for end in 0..marker.len() {
                let prefix = &marker[..end];
                let input = format!("text {prefix}");
                assert!(
                    matches!(neutralise(&input), Cow::Borrowed(_)),
                    "{input:?} was changed"
                );
            }
            // And the whole of it is a marker.
            assert_eq!(
                neutralise(&format!("text {marker}")),
                format!("text <{INFIX}{}", &marker[1..])
            );
        }
    }
}
