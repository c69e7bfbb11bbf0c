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

/// How deep [`neutralise_all`] follows nested arrays and objects; `serde_json` refuses to build a
/// `Value` deeper than this, so no JSON a `serde_json` client accepts is deeper.
pub(crate) const MAX_DEPTH: usize = 128;

/// A JSON string, borrowed from the input when it has no escapes.
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
    /// Reads `raw` as an object; `None` when it is not one.
    pub(crate) fn of(raw: &'a RawValue) -> Option<Members<'a>> {
        serde_json::from_str(raw.get()).ok()
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

    /// Writes the object: member `i`'s value is `replacements[i]` when that is `Some`, else the
    /// value as it came.
    pub(crate) fn write_with(&self, out: &mut Vec<u8>, replacements: &[Option<Vec<u8>>]) {
        out.push(b'{');
        for (index, (key, value)) in self.0.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_string(out, key);
            out.push(b':');
            match replacements.get(index) {
                Some(Some(json)) => out.extend_from_slice(json),
                _ => out.extend_from_slice(value.get().as_bytes()),
            }
        }
        out.push(b'}');
    }
}

/// Two members of one name where the proxy must know which one a client reads.
#[derive(Debug)]
pub(crate) struct Duplicate;

/// Reads `raw` as an array of raw values; `None` when it is not one.
pub(crate) fn elements(raw: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(raw.get()).ok()
}

/// Reads `raw` as a string; `None` when it is not one.
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Text<'_>>(raw.get())
        .ok()
        .map(|text| text.0)
}

/// Writes `text` as a JSON string.
pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    // Writing a `str` into a `Vec` cannot fail.
    serde_json::to_writer(&mut *out, text).unwrap_or_default();
}

/// Writes an array: element `i` is `replacements[i]` when that is `Some`, else as it came.
pub(crate) fn write_array(
    out: &mut Vec<u8>,
    elements: &[&RawValue],
    replacements: &[Option<Vec<u8>>],
) {
    out.push(b'[');
    for (index, element) in elements.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        match replacements.get(index) {
            Some(Some(json)) => out.extend_from_slice(json),
            _ => out.extend_from_slice(element.get().as_bytes()),
        }
    }
    out.push(b']');
}

/// JSON nested deeper than [`MAX_DEPTH`].
#[derive(Debug)]
pub(crate) struct TooDeep;

/// `raw` with every string in it neutralised, keys included, or `None` when no string spells
/// a marker (the value is then kept as it came).
pub(crate) fn neutralise_all(raw: &RawValue) -> Result<Option<Vec<u8>>, TooDeep> {
    neutralise_at(raw, 0)
}

fn neutralise_at(raw: &RawValue, depth: usize) -> Result<Option<Vec<u8>>, TooDeep> {
    match raw.get().as_bytes().first() {
        Some(b'"') => Ok(string(raw).and_then(|text| match neutralise(&text) {
            Cow::Borrowed(_) => None,
            Cow::Owned(neutralised) => {
                let mut out = Vec::with_capacity(neutralised.len() + 2);
                write_string(&mut out, &neutralised);
                Some(out)
            }
        })),
        Some(b'{') => {
            if depth >= MAX_DEPTH {
                return Err(TooDeep);
            }
            let Some(mut members) = Members::of(raw) else {
                return Ok(None);
            };
            let mut replacements = Vec::with_capacity(members.0.len());
            let mut changed = false;
            for (key, value) in &mut members.0 {
                if let Cow::Owned(neutralised) = neutralise(key) {
                    *key = Cow::Owned(neutralised);
                    changed = true;
                }
                let replacement = neutralise_at(value, depth + 1)?;
                changed |= replacement.is_some();
                replacements.push(replacement);
            }
            Ok(changed.then(|| {
                let mut out = Vec::with_capacity(raw.get().len() + 64);
                members.write_with(&mut out, &replacements);
                out
            }))
        }
        Some(b'[') => {
            if depth >= MAX_DEPTH {
                return Err(TooDeep);
            }
            let Some(items) = elements(raw) else {
                return Ok(None);
            };
            let mut replacements = Vec::with_capacity(items.len());
            for item in &items {
                replacements.push(neutralise_at(item, depth + 1)?);
            }
            Ok(replacements.iter().any(Option::is_some).then(|| {
                let mut out = Vec::with_capacity(raw.get().len() + 64);
                write_array(&mut out, &items, &replacements);
                out
            }))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> &RawValue {
        serde_json::from_str(json).unwrap()
    }

    fn neutralised(json: &str) -> Option<String> {
        neutralise_all(raw(json))
            .unwrap()
            .map(|out| String::from_utf8(out).unwrap())
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
        members.write_with(&mut out, &[]);
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
    fn neutralise_all_rewrites_every_string_and_key_and_nothing_else() {
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
    fn neutralise_all_refuses_json_deeper_than_serde_json_reads() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(neutralise_all(raw(&deep)).is_err());
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(neutralise_all(raw(&fine)).unwrap(), None);
    }
}
