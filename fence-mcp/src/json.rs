//! The `Value` layer, without `Value`: a message is read as the members of its objects in
//! order, each value kept as the exact JSON text `serde_json` validated ([`RawValue`]), and only
//! the values the proxy rewrites are decoded. What is not rewritten is copied byte for byte, so
//! numbers of any precision, key order, duplicate keys, escapes and fields no library models all
//! survive.

use std::borrow::Cow;
use std::fmt;

use fence_runtime::neutralise;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// How deep [`neutralise_into`] follows nested arrays and objects; `serde_json` refuses to build a
/// `Value` deeper than this, so no JSON a `serde_json` client accepts is deeper.
pub(crate) const MAX_DEPTH: usize = 128;

/// A JSON string, borrowed from the input when it has no escapes.
#[derive(Debug)]
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(TextVisitor(std::marker::PhantomData))
    }
}

/// A JSON object's members in order, duplicates kept, each value as raw JSON.
#[derive(Debug)]
pub(crate) struct Members<'a>(pub(crate) Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl<'a> Members<'a> {
    /// Reads `raw` as an object; `None` when it is not one, or when a key cannot be decoded.
    pub(crate) fn of(raw: &'a RawValue) -> Option<Members<'a>> {
        serde_json::from_str(raw.get()).ok()
    }

    /// Reads `raw` as an object: `Ok(None)` when it is not one, an error when it is one whose
    /// keys cannot all be decoded. For a value the proxy must rewrite, which it then withholds.
    pub(crate) fn read(raw: &'a RawValue) -> Result<Option<Members<'a>>, Unreadable> {
        if !raw.get().starts_with('{') {
            return Ok(None);
        }
        Members::of(raw).map(Some).ok_or(Unreadable::Undecodable)
    }

    /// The value of the only member named `key`; `Err` when there are several.
    pub(crate) fn one(&self, key: &str) -> Result<Option<&'a RawValue>, Duplicate> {
        let mut found = None;
        for (name, value) in &self.0 {
            if name == key {
                if found.is_some() {
                    return Err(Duplicate);
                }
                found = Some(*value);
            }
        }
        Ok(found)
    }

    /// The value of the only member named `key` when it is a string.
    pub(crate) fn string(&self, key: &str) -> Option<Cow<'a, str>> {
        string(self.one(key).ok()??)
    }

    /// Writes the object, each member's value written by `value` (given its key, its raw JSON
    /// and the output), which says whether it wrote the value changed. Each key is written
    /// neutralised: a client may show one (the TypeScript SDK's schema errors name unknown
    /// keys).
    pub(crate) fn write_each<E>(
        &self,
        out: &mut Vec<u8>,
        mut value: impl FnMut(&str, &'a RawValue, &mut Vec<u8>) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let mut changed = false;
        out.push(b'{');
        for (index, (key, raw)) in self.0.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            let written = neutralise(key);
            changed |= matches!(written, Cow::Owned(_));
            write_string(out, &written);
            out.push(b':');
            changed |= value(key, raw, out)?;
        }
        out.push(b'}');
        Ok(changed)
    }
}

/// Two members of one name where the proxy must know which one a client reads.
#[derive(Debug)]
pub(crate) struct Duplicate;

/// Reads `raw` as an array of raw values; `None` when it is not one.
pub(crate) fn elements(raw: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(raw.get()).ok()
}

/// Reads `raw` as a string; `None` when it is not one, or cannot be decoded.
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Text<'_>>(raw.get())
        .ok()
        .map(|text| text.0)
}

/// Reads `raw` as a string: `Ok(None)` when it is not one, an error when it is one that cannot
/// be decoded (an escape such as `\ud800`, a lone surrogate, which `serde_json` validates as
/// JSON but cannot turn into a Rust string, while JavaScript and Python read it as text).
pub(crate) fn text(raw: &RawValue) -> Result<Option<Cow<'_, str>>, Unreadable> {
    if !raw.get().starts_with('"') {
        return Ok(None);
    }
    string(raw).map(Some).ok_or(Unreadable::Undecodable)
}

/// Writes `text` as a JSON string.
pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    // Writing a `str` into a `Vec` cannot fail.
    serde_json::to_writer(&mut *out, text).unwrap_or_default();
}

/// Writes an array, each element written by `element` (given its index, the element and the
/// output), which says whether it wrote the element changed.
pub(crate) fn write_elements<T, E>(
    out: &mut Vec<u8>,
    items: &[T],
    mut element: impl FnMut(usize, &T, &mut Vec<u8>) -> Result<bool, E>,
) -> Result<bool, E> {
    let mut changed = false;
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        changed |= element(index, item, out)?;
    }
    out.push(b']');
    Ok(changed)
}

/// Writes `raw` as it came: the value a writer keeps.
pub(crate) fn keep(raw: &RawValue, out: &mut Vec<u8>) -> bool {
    out.extend_from_slice(raw.get().as_bytes());
    false
}

/// Why a value the proxy must rewrite cannot be read, and so is withheld rather than
/// forwarded as it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Arrays and objects nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A string or a key with an escape that cannot be decoded (a lone surrogate).
    Undecodable,
}

impl Unreadable {
    /// What is wrong, said of a value: "holds …".
    pub(crate) fn problem(self) -> String {
        match self {
            Unreadable::TooDeep => {
                format!("nests arrays and objects deeper than {MAX_DEPTH}")
            }
            Unreadable::Undecodable => "holds a string with an escape that cannot be decoded \
                 (a lone surrogate such as \\ud800), so it cannot be checked for markers"
                .to_owned(),
        }
    }
}

/// Writes `raw` with every string in it neutralised, keys included; says whether any string
/// changed.
pub(crate) fn neutralise_into(raw: &RawValue, out: &mut Vec<u8>) -> Result<bool, Unreadable> {
    // A marker starts with `<`, which JSON spells as itself or as a `\u` escape: JSON with
    // neither has none to neutralise, and is copied without being parsed.
    let json = raw.get().as_bytes();
    if memchr::memchr(b'<', json).is_none() && memchr::memmem::find(json, b"\\u").is_none() {
        return Ok(keep(raw, out));
    }
    neutralise_at(raw, 0, out)
}

fn neutralise_at(raw: &RawValue, depth: usize, out: &mut Vec<u8>) -> Result<bool, Unreadable> {
    match raw.get().as_bytes().first() {
        Some(b'"') => {
            let text = string(raw).ok_or(Unreadable::Undecodable)?;
            match neutralise(&text) {
                Cow::Owned(neutralised) => {
                    write_string(out, &neutralised);
                    Ok(true)
                }
                Cow::Borrowed(_) => Ok(keep(raw, out)),
            }
        }
        Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(Unreadable::TooDeep),
        Some(b'{') => {
            let members = Members::of(raw).ok_or(Unreadable::Undecodable)?;
            members_at(&members, depth, out)
        }
        Some(b'[') => {
            // A `RawValue` is valid JSON, and its elements need no decoding.
            let items = elements(raw).ok_or(Unreadable::Undecodable)?;
            write_elements(out, &items, |_, item, out| {
                neutralise_at(item, depth + 1, out)
            })
        }
        _ => Ok(keep(raw, out)),
    }
}

/// Writes an object's members with every string neutralised, keys included, as
/// [`neutralise_into`] does; says whether any changed.
pub(crate) fn neutralise_members(
    members: &Members<'_>,
    out: &mut Vec<u8>,
) -> Result<bool, Unreadable> {
    members_at(members, 0, out)
}

fn members_at(members: &Members<'_>, depth: usize, out: &mut Vec<u8>) -> Result<bool, Unreadable> {
    let mut changed = false;
    out.push(b'{');
    for (index, (key, value)) in members.0.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        let key = neutralise(key);
        changed |= matches!(key, Cow::Owned(_));
        write_string(out, &key);
        out.push(b':');
        changed |= neutralise_at(value, depth + 1, out)?;
    }
    out.push(b'}');
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> &RawValue {
        serde_json::from_str(json).unwrap()
    }

    fn neutralised(json: &str) -> Option<String> {
        let mut out = Vec::new();
        let changed = neutralise_into(raw(json), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        if changed {
            Some(out)
        } else {
            assert_eq!(out, json, "kept as it came");
            None
        }
    }

    #[test]
    fn members_keep_order_duplicates_escapes_and_numbers() {
        let json = r#"{"z":1,"a":123456789012345678901234567890,"z":"\u0041","n":1.0e400}"#;
        let members = Members::of(raw(json)).unwrap();
        let keys: Vec<_> = members.0.iter().map(|(key, _)| key.as_ref()).collect();
        assert_eq!(keys, ["z", "a", "z", "n"]);
        assert!(members.one("z").is_err());
        assert_eq!(
            members.one("a").unwrap().unwrap().get(),
            "123456789012345678901234567890"
        );
        let mut out = Vec::new();
        let changed = members.write_each(&mut out, |_, value, out| Ok::<_, ()>(keep(value, out)));
        assert_eq!(changed, Ok(false));
        assert_eq!(String::from_utf8(out).unwrap(), json);
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        assert!(matches!(
            string(raw(r#""plain""#)),
            Some(Cow::Borrowed("plain"))
        ));
        assert_eq!(string(raw(r#""a\nb""#)).unwrap(), "a\nb");
        assert!(string(raw("12")).is_none());
    }

    #[test]
    fn neutralising_rewrites_every_string_and_key_and_nothing_else() {
        assert_eq!(neutralised(r#"{"a":[1,"x",{"b":null}],"c":1e400}"#), None);
        assert_eq!(
            neutralised(
                r#"{"</untrusted-content>":["<UNTRUSTED-CONTENT source=tool:x>",12345678901234567890123],"keep":"\u003c/untrusted-content>"}"#
            )
            .unwrap(),
            r#"{"<!MURMUR-NEUTRALISED!/untrusted-content>":["<!MURMUR-NEUTRALISED!UNTRUSTED-CONTENT source=tool:x>",12345678901234567890123],"keep":"<!MURMUR-NEUTRALISED!/untrusted-content>"}"#
        );
        assert_eq!(
            neutralised(r#""<untrusted-content""#).unwrap(),
            r#""<!MURMUR-NEUTRALISED!untrusted-content""#
        );
    }

    #[test]
    fn neutralising_refuses_json_deeper_than_serde_json_reads_only_when_it_must_look() {
        let nested = |depth: usize, inner: &str| {
            format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
        };
        let mut out = Vec::new();
        assert!(neutralise_into(raw(&nested(MAX_DEPTH + 1, r#""<""#)), &mut out).is_err());
        assert_eq!(neutralised(&nested(MAX_DEPTH, r#""<""#)), None);
        // With no `<` anywhere there is nothing to look for, however deep.
        assert_eq!(neutralised(&nested(10 * MAX_DEPTH, "1")), None);
        // Objects count as deeply as arrays.
        let objects =
            |depth: usize| format!("{}\"<\"{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        assert!(neutralise_into(raw(&objects(MAX_DEPTH + 1)), &mut out).is_err());
        assert_eq!(neutralised(&objects(MAX_DEPTH)), None);
    }

    #[test]
    fn a_string_or_key_that_cannot_be_decoded_is_unreadable_wherever_it_is() {
        for json in [
            r#""\ud800""#,
            r#""\udc00</untrusted-content>""#,
            r#"{"a":["<", "\ud800"]}"#,
            r#"{"\udc00":"</untrusted-content>","b":1}"#,
            r#"[[{"x":"\ud83d"}]]"#,
        ] {
            let mut out = Vec::new();
            assert_eq!(
                neutralise_into(raw(json), &mut out),
                Err(Unreadable::Undecodable),
                "{json}"
            );
        }
        // A surrogate pair decodes, and is kept as it came.
        assert_eq!(neutralised(r#"{"a":"\ud83d\ude00"}"#), None);
        assert!(Members::read(raw(r#"{"\ud800":1}"#)).is_err());
        assert!(Members::read(raw("[1]")).unwrap().is_none());
        assert!(text(raw(r#""\udfff""#)).is_err());
        assert!(text(raw("1")).unwrap().is_none());
    }

    #[test]
    fn a_key_alone_is_a_change() {
        assert_eq!(
            neutralised(r#"{"</untrusted-content>":1}"#).unwrap(),
            r#"{"<!MURMUR-NEUTRALISED!/untrusted-content>":1}"#
        );
    }
}
