//! JSON and request ids as lenient clients read them: the oracle of the `mcp_session` target.
//!
//! Written apart from `fence-mcp`, and naively, on purpose: it is what the proxy's output is
//! held to, so it shares none of the proxy's JSON or id code.
//!
//! [`parse`] reads a line as `JSON.parse` and Python's `json.loads` do: an object keeps every
//! member, and [`Value::get`] reads the last of a name (both read duplicate keys last-wins); a
//! `\u` escape of a lone surrogate (`"\ud800"`), which both accept, is decoded to U+FFFD (a
//! marker is ASCII, so nothing that matters is lost); a number is kept as its text, so no
//! precision is lost. Otherwise it is strict JSON, as both are: no trailing commas, no
//! comments, no control characters in strings, nothing after the value.
//!
//! [`parse_as`] reads as one SDK's parser does: [`Dialect::JavaScript`] is [`parse`];
//! [`Dialect::Pydantic`] is the Python SDK's (pydantic's `validate_json`, on `jiter`), which
//! refuses every lone surrogate escape, takes `NaN`, `Infinity` and `-Infinity` as numbers, and
//! refuses nesting deeper than 201 levels.
//!
//! [`RequestId`] reads an id as the SDKs match answers to requests: exactly; as the Python
//! SDK does (`int()` on a string id; a JSON number as Python's `json` reads it, an integer
//! exactly and anything else as a float); and as the TypeScript SDK does (`Number(id)`, a
//! double). Two ids are one when any reading says so ([`RequestId::same`]).
//!
//! ```
//! use fence_checks::lenient::{RequestId, parse};
//!
//! let message = parse(r#"{"id":1,"id":" 0x2 ","text":"\ud800<"}"#).unwrap();
//! assert_eq!(message.get("text").and_then(|text| text.as_str()), Some("\u{fffd}<"));
//! let id = RequestId::of(message.get("id").unwrap()).unwrap();
//! assert!(id.same(&RequestId::of(&parse("2").unwrap()).unwrap()));
//! ```

use std::fmt::Write as _;

/// How deep arrays and objects may nest: far past the 128 levels `serde_json` (and so the
/// proxy) takes, and shallow enough for a test thread's stack.
const MAX_DEPTH: usize = 256;

/// How deep pydantic's parser (`jiter`, recursion limit 200) lets arrays and objects nest: a
/// container opened at this depth (the outermost at 0) is refused.
const PYDANTIC_MAX_DEPTH: usize = 201;

/// Whose JSON parser [`parse_as`] reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `JSON.parse` (and Python's `json.loads`): [`parse`].
    JavaScript,
    /// pydantic's `validate_json` (`jiter`), which the Python SDK reads every message with: a
    /// lone surrogate escape is an error, `NaN`, `Infinity` and `-Infinity` are numbers (kept as
    /// [`Value::Number`] of that text), and nesting stops at 201 levels.
    Pydantic,
}

/// A JSON value as a lenient client reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its JSON text.
    Number(String),
    /// A string, decoded; a lone surrogate escape is U+FFFD.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object's members in order, duplicates kept: [`Value::get`] reads the last.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The last member named `key`, when this is an object that has one: what `JSON.parse`
    /// and `json.loads` keep.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members()?
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// Every member named `key`, in order (none when this is not an object).
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.members()
            .unwrap_or_default()
            .iter()
            .filter(move |(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// The members, when this is an object.
    pub fn members(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The items, when this is an array.
    pub fn items(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Calls `each` on every string in the value and every key of its objects, at any depth,
    /// duplicates included; stops at the first for which it returns `false`, and says whether
    /// it went through them all.
    pub fn every_text(&self, each: &mut impl FnMut(&str) -> bool) -> bool {
        match self {
            Value::String(text) => each(text),
            Value::Array(items) => items.iter().all(|item| item.every_text(each)),
            Value::Object(members) => members
                .iter()
                .all(|(key, value)| each(key) && value.every_text(each)),
            Value::Null | Value::Bool(_) | Value::Number(_) => true,
        }
    }
}

/// Why a text is not JSON to a lenient client: where, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The byte offset.
    pub at: usize,
    /// What was expected or found.
    pub what: &'static str,
}

/// Reads `text` as one JSON value, whitespace around it allowed.
///
/// # Errors
///
/// When `text` is not JSON, or nests deeper than 256 levels.
pub fn parse(text: &str) -> Result<Value, Error> {
    parse_as(text, Dialect::JavaScript)
}

/// Reads `text` as one JSON value, as `dialect`'s parser does.
///
/// # Errors
///
/// When `text` is not JSON to that parser.
///
/// ```
/// use fence_checks::lenient::{Dialect, parse_as};
///
/// assert!(parse_as(r#"{"a":NaN}"#, Dialect::Pydantic).is_ok());
/// assert!(parse_as(r#"{"a":NaN}"#, Dialect::JavaScript).is_err());
/// assert!(parse_as(r#""\ud800""#, Dialect::Pydantic).is_err());
/// ```
pub fn parse_as(text: &str, dialect: Dialect) -> Result<Value, Error> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
        dialect,
    };
    reader.space();
    let value = reader.value(0)?;
    reader.space();
    if reader.at != reader.bytes.len() {
        return Err(reader.error("text after the value"));
    }
    Ok(value)
}

/// The JSON text of each element, when `text` is a JSON array: without the whitespace around
/// it, as a proxy that copies elements would write them.
pub fn elements(text: &str) -> Option<Vec<&str>> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
        dialect: Dialect::JavaScript,
    };
    reader.space();
    if !reader.eat(b'[') {
        return None;
    }
    let mut spans = Vec::new();
    reader.space();
    if !reader.eat(b']') {
        loop {
            reader.space();
            let start = reader.at;
            reader.value(1).ok()?;
            spans.push(&text[start..reader.at]);
            reader.space();
            if reader.eat(b']') {
                break;
            }
            if !reader.eat(b',') {
                return None;
            }
        }
    }
    reader.space();
    (reader.at == reader.bytes.len()).then_some(spans)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    dialect: Dialect,
}

impl Reader<'_> {
    fn error(&self, what: &'static str) -> Error {
        Error { at: self.at, what }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn word(&mut self, word: &[u8], value: Value) -> Result<Value, Error> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("a value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, Error> {
        let pydantic = self.dialect == Dialect::Pydantic;
        let max_depth = if pydantic {
            PYDANTIC_MAX_DEPTH
        } else {
            MAX_DEPTH
        };
        if pydantic {
            for word in ["NaN", "Infinity", "-Infinity"] {
                if self.bytes[self.at..].starts_with(word.as_bytes()) {
                    return self.word(word.as_bytes(), Value::Number(word.to_owned()));
                }
            }
        }
        match self.peek() {
            Some(b'{' | b'[') if depth >= max_depth => Err(self.error("less nesting")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.word(b"true", Value::Bool(true)),
            Some(b'f') => self.word(b"false", Value::Bool(false)),
            Some(b'n') => self.word(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, Error> {
        self.at += 1;
        let mut members = Vec::new();
        self.space();
        if self.eat(b'}') {
            return Ok(Value::Object(members));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("a key"));
            }
            let key = self.string()?;
            self.space();
            if !self.eat(b':') {
                return Err(self.error("`:`"));
            }
            self.space();
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.space();
            if self.eat(b'}') {
                return Ok(Value::Object(members));
            }
            if !self.eat(b',') {
                return Err(self.error("`,` or `}`"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, Error> {
        self.at += 1;
        let mut items = Vec::new();
        self.space();
        if self.eat(b']') {
            return Ok(Value::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth + 1)?);
            self.space();
            if self.eat(b']') {
                return Ok(Value::Array(items));
            }
            if !self.eat(b',') {
                return Err(self.error("`,` or `]`"));
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Value, Error> {
        let start = self.at;
        self.eat(b'-');
        if self.eat(b'0') {
            if matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("no leading zero"));
            }
        } else if self.digits() == 0 {
            return Err(self.error("a digit"));
        }
        if self.eat(b'.') && self.digits() == 0 {
            return Err(self.error("a digit after `.`"));
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if self.digits() == 0 {
                return Err(self.error("a digit in the exponent"));
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        Ok(Value::Number(text.to_owned()))
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("four hex digits"))?;
        let mut unit = 0;
        for &digit in digits {
            let value = char::from(digit)
                .to_digit(16)
                .ok_or_else(|| self.error("four hex digits"))?;
            unit = unit * 16 + value;
        }
        self.at += 4;
        Ok(unit)
    }

    /// A string, at its opening quote.
    fn string(&mut self) -> Result<String, Error> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.error("a closing quote"));
            };
            self.at += 1;
            match byte {
                b'"' => break,
                0..=0x1f => return Err(self.error("no control character in a string")),
                b'\\' => {
                    let Some(escape) = self.peek() else {
                        return Err(self.error("an escape"));
                    };
                    self.at += 1;
                    let ch = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error("a valid escape")),
                    };
                    let mut buffer = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buffer).as_bytes());
                }
                _ => out.push(byte),
            }
        }
        // The input is a `str` and escapes are pushed as UTF-8, so this never replaces anything.
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// The character a `\u` escape (after its `u`) stands for: a surrogate pair's character,
    /// and U+FFFD for a surrogate on its own.
    fn unicode_escape(&mut self) -> Result<char, Error> {
        let unit = self.hex4()?;
        if (0xD800..0xDC00).contains(&unit) && self.bytes[self.at..].starts_with(b"\\u") {
            let back = self.at;
            self.at += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                return Ok(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            // Not a pair: the high surrogate stands alone, and the next escape is read next.
            self.at = back;
        }
        match char::from_u32(unit) {
            Some(ch) => Ok(ch),
            None if self.dialect == Dialect::Pydantic => Err(self.error("no lone surrogate")),
            None => Ok('\u{fffd}'),
        }
    }
}

/// A request id, read every way a client may read it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestId {
    /// The id itself: a string's text, or a number's JSON text.
    exact: Exact,
    /// What the Python SDK makes of it.
    python: Option<Python>,
    /// What the TypeScript SDK makes of it: `Number(id)`, unless `NaN`.
    js: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
enum Exact {
    Text(String),
    Number(String),
}

/// A Python number: an `int` (its decimal digits, no leading zeros, `-` unless zero) or a
/// `float`.
#[derive(Debug, Clone, PartialEq)]
enum Python {
    Int(String),
    Float(f64),
}

impl RequestId {
    /// How clients read `value` as a request id; `None` when it is not a string or a number,
    /// which no client takes as an id.
    pub fn of(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(text) => Some(RequestId {
                exact: Exact::Text(text.clone()),
                python: python_int(text).map(Python::Int),
                js: js_number(text),
            }),
            Value::Number(json) => {
                let float: f64 = json.parse().ok()?;
                let python = if json.contains(['.', 'e', 'E']) {
                    Python::Float(float)
                } else {
                    Python::Int(normal_integer(json))
                };
                Some(RequestId {
                    exact: Exact::Number(json.clone()),
                    python: Some(python),
                    js: Some(float),
                })
            }
            _ => None,
        }
    }

    /// Whether some client reads the two as one id: exactly, as Python compares the numbers it
    /// reads, or as doubles (`Number`, where `0` and `-0` are one and so are two infinities).
    // Exact equality of doubles is what JavaScript's `===` and Python's `==` do.
    #[allow(clippy::float_cmp)]
    pub fn same(&self, other: &RequestId) -> bool {
        if self.exact == other.exact {
            return true;
        }
        if let (Some(one), Some(two)) = (self.js, other.js) {
            if one == two {
                return true;
            }
        }
        match (&self.python, &other.python) {
            (Some(one), Some(two)) => python_equal(one, two),
            _ => false,
        }
    }
}

/// Python's `==` between two numbers: an `int` and a `float` are equal when the float is
/// exactly that integer.
#[allow(clippy::float_cmp)]
fn python_equal(one: &Python, two: &Python) -> bool {
    match (one, two) {
        (Python::Int(a), Python::Int(b)) => a == b,
        (Python::Float(a), Python::Float(b)) => a == b,
        (Python::Int(int), Python::Float(float)) | (Python::Float(float), Python::Int(int)) => {
            float.is_finite()
                && float.fract() == 0.0
                && normal_integer(&format!("{float:.0}")) == *int
        }
    }
}

/// An integer's decimal text (an optional `-`, ASCII digits) without leading zeros, and
/// without a sign when it is zero.
fn normal_integer(text: &str) -> String {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        "0".to_owned()
    } else if negative {
        format!("-{digits}")
    } else {
        digits.to_owned()
    }
}

/// The first of a few runs of ten decimal digits Python's `int()` reads besides ASCII's:
/// Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Thai and fullwidth. (Python reads
/// every Unicode decimal digit; these are the ones the generator writes, and more.)
const OTHER_ZEROS: [u32; 6] = [0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10];

fn digit_value(ch: char) -> Option<u32> {
    if ch.is_ascii_digit() {
        return ch.to_digit(10);
    }
    let code = u32::from(ch);
    OTHER_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .map(|zero| code - zero)
}

/// Python's `int(text)`: whitespace stripped (`str.strip()`), an optional sign, digits with
/// single underscores between them. `None` where it raises.
pub(crate) fn python_int(text: &str) -> Option<String> {
    let text =
        text.trim_matches(|ch: char| ch.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&ch));
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let chars: Vec<char> = rest.chars().collect();
    if chars.is_empty() {
        return None;
    }
    let mut digits = String::new();
    for (index, &ch) in chars.iter().enumerate() {
        if ch == '_' {
            let before = index > 0 && digit_value(chars[index - 1]).is_some();
            let after = chars
                .get(index + 1)
                .and_then(|&next| digit_value(next))
                .is_some();
            if !(before && after) {
                return None;
            }
            continue;
        }
        let value = digit_value(ch)?;
        let _ = write!(digits, "{value}");
    }
    let sign = if negative { "-" } else { "" };
    Some(normal_integer(&format!("{sign}{digits}")))
}

/// The characters JavaScript's `Number()` and `String.prototype.trim` trim: white space and
/// line terminators.
pub(crate) fn is_js_space(ch: char) -> bool {
    matches!(
        ch,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    ) || ('\u{2000}'..='\u{200a}').contains(&ch)
}

/// JavaScript's `Number(text)`; `None` for `NaN`.
fn js_number(text: &str) -> Option<f64> {
    let text = text.trim_matches(is_js_space);
    if text.is_empty() {
        return Some(0.0);
    }
    let lower = text.get(..2).map(str::to_ascii_lowercase);
    let radix = match lower.as_deref() {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        return radix_number(&text[2..], radix);
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let value = if unsigned == "Infinity" {
        f64::INFINITY
    } else if decimal_literal(unsigned) {
        unsigned.parse::<f64>().ok()?
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// Digits, an optional fraction, an optional exponent; a digit before or after the `.`.
fn decimal_literal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    let count = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    let mut mantissa = count(&mut at);
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        mantissa += count(&mut at);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if count(&mut at) == 0 {
            return false;
        }
    }
    at == bytes.len()
}

/// A `0x`, `0o` or `0b` literal's value, rounded to the nearest double as JavaScript does.
fn radix_number(digits: &str, radix: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let mut exact: Option<u128> = Some(0);
    let mut approximate = 0.0_f64;
    for ch in digits.chars() {
        let digit = ch.to_digit(radix)?;
        exact = exact
            .and_then(|value| value.checked_mul(u128::from(radix)))
            .and_then(|value| value.checked_add(u128::from(digit)));
        approximate = approximate * f64::from(radix) + f64::from(digit);
    }
    // Past 2¹²⁸ the value is only approximate; no request id the generator writes is so long.
    #[allow(clippy::cast_precision_loss)]
    Some(exact.map_or(approximate, |value| value as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(json: &str) -> RequestId {
        RequestId::of(&parse(json).unwrap()).unwrap()
    }

    fn same(a: &str, b: &str) -> bool {
        id(a).same(&id(b))
    }

    #[test]
    fn duplicate_keys_last_wins_and_lone_surrogates_decode() {
        let value =
            parse(r#" {"a":1,"b":[true,null,-0.5e+3],"a":"\ud800x\udc00\ud83d\ude00\u003c"} "#)
                .unwrap();
        assert_eq!(
            value.get("a").unwrap().as_str(),
            Some("\u{fffd}x\u{fffd}😀<")
        );
        assert_eq!(value.all("a").count(), 2);
        assert_eq!(
            value.get("b").unwrap().items().unwrap()[2],
            Value::Number("-0.5e+3".into())
        );
        assert_eq!(
            parse(r#""\ud800\ud800\udc00""#).unwrap().as_str(),
            Some("\u{fffd}𐀀")
        );
    }

    #[test]
    fn what_is_not_json() {
        for text in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "nul",
            "1 2",
            "{'a':1}",
            "[1]]",
            "NaN",
        ] {
            assert!(parse(text).is_err(), "{text:?}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(parse(&deep).is_err());
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
    }

    #[test]
    fn pydantic_refuses_lone_surrogates_and_takes_nan() {
        let read = |text: &str| parse_as(text, Dialect::Pydantic);
        for text in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800\ud800\udc00""#,
        ] {
            assert!(read(text).is_err(), "{text}");
            assert!(parse(text).is_ok(), "{text}");
        }
        assert_eq!(read(r#""\ud800\udc00""#).unwrap().as_str(), Some("𐀀"));
        for text in ["NaN", "Infinity", "-Infinity", "[NaN,-Infinity]"] {
            assert!(read(text).is_ok() && parse(text).is_err(), "{text}");
        }
        for text in ["+1", "infinity", "-NaN", "-Inf"] {
            assert!(read(text).is_err(), "{text}");
        }
        let nested = |depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(read(&nested(PYDANTIC_MAX_DEPTH)).is_ok());
        assert!(read(&nested(PYDANTIC_MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn elements_are_the_texts_of_an_arrays_items() {
        assert_eq!(
            elements(" [ {\"a\" : [1]} ,2,\"x\" ] "),
            Some(vec!["{\"a\" : [1]}", "2", "\"x\""])
        );
        assert_eq!(elements("[]"), Some(vec![]));
        assert_eq!(elements("{}"), None);
        assert_eq!(elements("[1,]"), None);
    }

    #[test]
    fn python_reads_string_ids_with_int() {
        for spelling in [
            r#""2""#,
            r#"" 2""#,
            r#""+2""#,
            r#""2 ""#,
            r#""\t2\n""#,
            r#""\u001c2""#,
            r#""002""#,
            r#""２""#,
            r#""٢""#,
            "2",
            "2.0",
            "2e0",
        ] {
            assert!(same(spelling, "2"), "{spelling}");
        }
        assert!(same(r#""2_0""#, "20"));
        assert!(same(r#""-0""#, "0"));
        for spelling in [r#""2__0""#, r#""_20""#, r#""20_""#, r#""+-2""#, r#""2a""#] {
            assert!(!same(spelling, "20") && !same(spelling, "2"), "{spelling}");
        }
        // Python compares an int with a float exactly; JavaScript rounds both to doubles.
        assert!(same(r#""9_007199254740993""#, "9007199254740993"));
        assert!(!same(r#""9_007199254740993""#, "9007199254740992"));
        assert!(same("9007199254740993", "9007199254740992"));
    }

    #[test]
    fn javascript_reads_ids_with_number() {
        for spelling in [
            r#""1""#,
            r#"" 1 ""#,
            r#""\ufeff1""#,
            r#""0x1""#,
            r#""0X1""#,
            r#""0B1""#,
            r#""0o1""#,
            r#""1e0""#,
            r#""1.""#,
            r#""10e-1""#,
            "1.0",
            "1e0",
            "10E-1",
        ] {
            assert!(same(spelling, "1"), "{spelling}");
        }
        assert!(same(r#""""#, "0"));
        assert!(same(r#"" ""#, "-0"));
        assert!(same(r#"".5""#, "0.5"));
        assert!(same(r#""Infinity""#, "1e400"));
        assert!(same(r#""-Infinity""#, "-1e999"));
        for spelling in [
            r#""0x""#,
            r#""1e""#,
            r#"".""#,
            r#""1 0""#,
            r#""-0x1""#,
            r#""infinity""#,
            r#""NaN""#,
        ] {
            assert!(
                !same(spelling, "1") && !same(spelling, "10") && !same(spelling, "-1"),
                "{spelling}"
            );
        }
        assert!(same(r#""0xffffffffffffffffff""#, "4722366482869645213695"));
        // `Number("1_0")` is `NaN`, but Python's `int("1_0")` is 10.
        assert!(!same(r#""1_0""#, "1") && same(r#""1_0""#, "10"));
    }

    #[test]
    fn distinct_ids_stay_apart() {
        assert!(!same(r#""a""#, r#""b""#));
        assert!(same(r#""a""#, r#""a""#));
        assert!(!same("1", "2"));
        assert!(!same(r#""1.5""#, "1"));
        assert!(!same(r#""NaN""#, r#""nan""#));
        assert!(same(r#""NaN""#, r#""NaN""#));
        for not_an_id in ["null", "true", "[1]", "{}"] {
            assert!(RequestId::of(&parse(not_an_id).unwrap()).is_none());
        }
    }
}
