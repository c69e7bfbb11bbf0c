//! Bytes into text, and the text helpers both readers need: UTF-8 decoded as WHATWG's
//! `TextDecoder` and Python's `errors="replace"` codec decode it, Latin-1, each language's idea
//! of white space, and Python's `repr` of a string.

/// UTF-8 decoded a chunk at a time, as a streaming decoder does: every invalid sequence is one
/// U+FFFD per maximal subpart (what WHATWG's decoder, Python's and Rust's
/// `String::from_utf8_lossy` all do), a sequence cut by a chunk's end is held for the next
/// chunk, and one that the stream ends inside is U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Utf8Stream {
    /// Bytes of a sequence the last chunk ended inside.
    held: Vec<u8>,
    /// Whether to drop a U+FEFF BOM that is the stream's first character (`TextDecoder`
    /// without `ignoreBOM`).
    strip_bom: bool,
    /// Whether any character has been decoded yet.
    started: bool,
}

impl Utf8Stream {
    /// A decoder; `strip_bom` drops a BOM at the very start of the stream, as `TextDecoder` does.
    pub(crate) fn new(strip_bom: bool) -> Utf8Stream {
        Utf8Stream {
            strip_bom,
            ..Utf8Stream::default()
        }
    }

    /// The text `chunk` completes.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> String {
        self.held.extend_from_slice(chunk);
        let cut = complete_prefix(&self.held);
        let rest = self.held.split_off(cut);
        let bytes = std::mem::replace(&mut self.held, rest);
        self.decode(&bytes)
    }

    /// The text of whatever the stream ended inside.
    pub(crate) fn finish(&mut self) -> String {
        let bytes = std::mem::take(&mut self.held);
        self.decode(&bytes)
    }

    fn decode(&mut self, bytes: &[u8]) -> String {
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if !self.started && !text.is_empty() {
            self.started = true;
            if self.strip_bom && text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
        }
        text
    }
}

/// How much of `bytes` ends on a character boundary: all of it but a trailing sequence that is
/// valid so far and not finished (the next chunk may finish it).
fn complete_prefix(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=3.min(len) {
        let start = len - back;
        let lead = bytes[start];
        let needs = match lead {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            0x80..=0xBF => continue,
            _ => return len,
        };
        if back >= needs {
            return len;
        }
        // The second byte's range, which some leads narrow (no overlongs, no surrogates,
        // nothing past U+10FFFF); the rest are continuation bytes.
        let second = match lead {
            0xE0 => 0xA0..=0xBF,
            0xED => 0x80..=0x9F,
            0xF0 => 0x90..=0xBF,
            0xF4 => 0x80..=0x8F,
            _ => 0x80..=0xBF,
        };
        let valid = bytes[start + 1..].iter().enumerate().all(|(index, byte)| {
            if index == 0 {
                second.contains(byte)
            } else {
                (0x80..=0xBF).contains(byte)
            }
        });
        return if valid { start } else { len };
    }
    len
}

/// Every byte as the character of that code point (ISO-8859-1).
pub(crate) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&byte| char::from(byte)).collect()
}

/// The characters JavaScript's `String.prototype.trim` removes: white space and line
/// terminators, as `Number()` trims them ([`crate::lenient`] reads ids so).
pub(crate) use crate::lenient::is_js_space;

/// The characters Python's `str.isspace` is true of, which `str.strip()` removes.
pub(crate) fn is_py_space(ch: char) -> bool {
    matches!(
        ch,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{1c}'
            ..='\u{1f}'
                | ' '
                | '\u{85}'
                | '\u{a0}'
                | '\u{1680}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
    ) || ('\u{2000}'..='\u{200a}').contains(&ch)
}

/// Whether Python's `str.isprintable` is true of `ch`, which decides what `repr` escapes:
/// exact in Latin-1, and for the rest the format, separator, private-use and noncharacter code
/// points a hostile header is likely to hold (Python reads Unicode's tables; unassigned code
/// points, also not printable, are not known here).
fn is_py_printable(ch: char) -> bool {
    let code = u32::from(ch);
    !matches!(code,
        0x00..=0x1F
        | 0x7F..=0xA0
        | 0xAD
        | 0x600..=0x605
        | 0x61C
        | 0x6DD
        | 0x70F
        | 0x1680
        | 0x180E
        | 0x2000..=0x200F
        | 0x2028..=0x202F
        | 0x205F..=0x2064
        | 0x2066..=0x206F
        | 0x3000
        | 0xE000..=0xF8FF
        | 0xFDD0..=0xFDEF
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0xFFFE..=0xFFFF
        | 0xF_0000..=0x10_FFFF
    )
}

/// Python's `repr()` of a string: in single quotes unless it holds a single quote and no
/// double quote; backslash, the quote, `\t`, `\n` and `\r` escaped; any other character that
/// is not printable as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub(crate) fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if ch == quote => {
                out.push('\\');
                out.push(ch);
            }
            _ if is_py_printable(ch) => out.push(ch),
            _ => {
                let code = u32::from(ch);
                let escaped = if code < 0x100 {
                    format!("\\x{code:02x}")
                } else if code < 0x1_0000 {
                    format!("\\u{code:04x}")
                } else {
                    format!("\\U{code:08x}")
                };
                out.push_str(&escaped);
            }
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(chunks: &[&[u8]], strip_bom: bool) -> Vec<String> {
        let mut decoder = Utf8Stream::new(strip_bom);
        let mut out: Vec<String> = chunks.iter().map(|chunk| decoder.feed(chunk)).collect();
        out.push(decoder.finish());
        out
    }

    #[test]
    fn sequences_cut_by_a_chunk_are_held_and_a_bom_goes_only_at_the_start() {
        assert_eq!(
            stream(&[b"\xef", b"\xbb\xbfa\xef\xbb\xbf"], true),
            ["", "a\u{feff}", ""]
        );
        assert_eq!(stream(&[b"\xef\xbb\xbfa"], false), ["\u{feff}a", ""]);
        assert_eq!(stream(&[b"a\xe2\x82", b"\xac"], true), ["a", "€", ""]);
        assert_eq!(stream(&[b"a\xe2\x82"], true), ["a", "\u{fffd}"]);
        assert_eq!(
            stream(&[b"\xed\xa0", b"\x80"], true),
            ["\u{fffd}\u{fffd}", "\u{fffd}", ""]
        );
        assert_eq!(stream(&[b"\xf0\x9f", b"x"], true), ["", "\u{fffd}x", ""]);
        assert_eq!(stream(&[b"\xff\xc3"], true), ["\u{fffd}", "\u{fffd}"]);
    }

    #[test]
    fn repr_is_pythons() {
        assert_eq!(py_repr("a'b"), "\"a'b\"");
        assert_eq!(py_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(
            py_repr("\\\t\u{a0}\u{85}é\u{ad}\u{2028}"),
            "'\\\\\\t\\xa0\\x85é\\xad\\u2028'"
        );
        assert_eq!(py_repr("</untrusted-content>"), "'</untrusted-content>'");
    }
}
