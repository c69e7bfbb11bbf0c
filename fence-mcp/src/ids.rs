//! Request ids as the clients match them.
//!
//! JSON-RPC says an answer carries its request's id, and a strict client (rmcp) matches the two
//! exactly. The official SDKs do not: the Python SDK turns a string id back into an integer with
//! Python's `int()` (so `"2"`, `" 2"`, `"+2"`, `"2_0"` and `"２"` match the requests 2, 2, 2, 20
//! and 2), and the TypeScript SDK keys its requests by `Number(id)` (so `"1"`, `" 1 "`, `"0x1"`,
//! `"1e0"` and `1.0` all match request 1, and integers past 2⁵³ round). If the proxy matched
//! ids exactly, an answer a lenient client reads as the answer to a `tools/call` could reach it
//! unfenced.
//!
//! So an id stands for a set of [`IdKey`]s: its exact spelling, and every number a client may
//! read it as. Two ids are one id when their sets meet. The sets are a superset of what each
//! client does: an id read too loosely costs at most a request refused for reusing an id, or an
//! answer delivered (fenced, with the request's own id) that a strict client would have dropped;
//! an id read too strictly could let a lenient client pair two requests the proxy keeps apart,
//! and that is the one mistake this module must not make.

use serde_json::value::RawValue;

/// One reading of a request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    /// The id is this string, exactly.
    Text(String),
    /// A client may read the id as this number: an integer in decimal with no sign on zero and
    /// no leading zeros (`"-12"`), or, for a number with a fraction, its shortest decimal form
    /// (`"1.5"`).
    Number(String),
}

/// Why a value cannot be used as a request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadId {
    /// `null`, a boolean, an object or an array: no client takes it as a request's id.
    NotAnId,
    /// A string with an escape that does not decode (a lone surrogate, `"\ud800"`).
    Undecodable,
    /// A number with a fraction, or one beyond a double's range (`1.5`, `1e400`): no SDK
    /// sends one, and neither Python's nor the TypeScript SDK's schema takes one as an id.
    NotAnInteger,
    /// A string that reads as a number up to a numeric character the proxy has no value for (a
    /// digit Unicode added after version 14, or a fraction such as `½`, which it cannot tell
    /// apart): a newer Python may read it as a number.
    UnknownDigits,
}

impl BadId {
    /// Says what is wrong, for an error message: "is not a string or a number".
    pub(crate) fn problem(self) -> &'static str {
        match self {
            BadId::NotAnId => "is not a string or a number",
            BadId::NotAnInteger => "is a number that is not an integer a client can read",
            BadId::Undecodable => "holds an escape that cannot be decoded (a lone surrogate)",
            BadId::UnknownDigits => "holds digits the proxy cannot read as a number",
        }
    }
}

/// Every way a client may read the request id `id` (its raw JSON).
pub(crate) fn keys(id: &RawValue) -> Result<Vec<IdKey>, BadId> {
    let json = id.get();
    match json.as_bytes().first() {
        Some(b'"') => {
            let text: String = serde_json::from_str(json).map_err(|_| BadId::Undecodable)?;
            string_keys(text)
        }
        Some(b'-' | b'0'..=b'9') => Ok(number_keys(json)),
        _ => Err(BadId::NotAnId),
    }
}

/// Every way a client may read the id of a request the client sends: as [`keys`], but a number
/// must be an integer, written as one (`7`, `7.0`, `7e0`) and within a double's range, or
/// written in digits alone (`12345678901234567890123`, which Python reads exactly).
pub(crate) fn request_keys(id: &RawValue) -> Result<Vec<IdKey>, BadId> {
    let json = id.get();
    if json.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        && json.contains(['.', 'e', 'E'])
        && !json
            .parse::<f64>()
            .is_ok_and(|value| value.is_finite() && value.fract() == 0.0)
    {
        return Err(BadId::NotAnInteger);
    }
    keys(id)
}

/// Whether two key sets stand for one id.
pub(crate) fn meet(one: &[IdKey], other: &[IdKey]) -> bool {
    one.iter().any(|key| other.contains(key))
}

fn string_keys(text: String) -> Result<Vec<IdKey>, BadId> {
    let mut keys = Vec::with_capacity(3);
    match python_int(&text) {
        PythonInt::Value(value) => keys.push(IdKey::Number(value)),
        PythonInt::NotAnInt => {}
        PythonInt::UnknownDigits => return Err(BadId::UnknownDigits),
    }
    match js_number(&text) {
        JsNumber::Value(value) => push_new(&mut keys, float_key(value)),
        JsNumber::NaN => {}
        // A non-decimal literal too long for the proxy to round as JavaScript does: a number
        // no request it keeps can be told apart from.
        JsNumber::TooLong => return Err(BadId::UnknownDigits),
    }
    keys.push(IdKey::Text(text));
    Ok(keys)
}

/// A JSON number (valid, as `serde_json` checked): Python reads an integer exactly and any
/// other number as a float, which its SDK turns into an integer when it has no fraction;
/// JavaScript reads any as the nearest double.
fn number_keys(json: &str) -> Vec<IdKey> {
    let mut keys = Vec::with_capacity(2);
    if !json.contains(['.', 'e', 'E']) {
        let (negative, digits) = match json.strip_prefix('-') {
            Some(digits) => (true, digits),
            None => (false, json),
        };
        keys.push(IdKey::Number(integer(negative, digits)));
    }
    // A valid JSON number always parses, past a double's range as an infinity.
    if let Ok(value) = json.parse::<f64>() {
        push_new(&mut keys, float_key(value));
    }
    keys
}

fn push_new(keys: &mut Vec<IdKey>, key: IdKey) {
    if !keys.contains(&key) {
        keys.push(key);
    }
}

/// 2⁶⁴, the first double past `u64::MAX`.
const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

/// A double (not NaN) as a key: an integral one as its exact integer, an infinity as `inf` or
/// `-inf`, any other by its shortest decimal form, which has a `.` and so never equals an
/// integer's.
fn float_key(value: f64) -> IdKey {
    if value.is_infinite() {
        IdKey::Number(if value < 0.0 { "-inf" } else { "inf" }.to_owned())
    } else if value.fract() == 0.0 {
        // An id is nearly always a small integer: `u64`'s formatting is exact for it and far
        // cheaper than a float's exact formatting, which is kept for the rest.
        let exact = if value.abs() < TWO_TO_64 {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "integral, not negative and under 2⁶⁴: the cast is exact"
            )]
            let integer = value.abs() as u64;
            integer.to_string()
        } else {
            format!("{:.0}", value.abs())
        };
        IdKey::Number(integer(value < 0.0, &exact))
    } else {
        IdKey::Number(format!("{value}"))
    }
}

/// An integer's key from its ASCII decimal digits: no leading zeros, no sign on zero.
fn integer(negative: bool, digits: &str) -> String {
    let digits = digits.trim_start_matches('0');
    match (digits.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_owned(),
    }
}

enum PythonInt {
    Value(String),
    NotAnInt,
    UnknownDigits,
}

/// What Python's `int(text)` gives: surrounding whitespace stripped, an optional sign, then
/// decimal digits of any script, single underscores allowed between digits. (Python itself also
/// refuses more than 4,300 digits; reading those as a number is the safe side.)
fn python_int(text: &str) -> PythonInt {
    let text = text.trim_matches(is_python_space);
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let mut digits = String::with_capacity(rest.len());
    let mut after_digit = false;
    for ch in rest.chars() {
        if ch == '_' && after_digit {
            after_digit = false;
            continue;
        }
        match decimal_digit(ch) {
            Some(digit) => {
                digits.push(char::from(b'0' + digit));
                after_digit = true;
            }
            None if ch.is_numeric() && !ch.is_ascii() => return PythonInt::UnknownDigits,
            None => return PythonInt::NotAnInt,
        }
    }
    if after_digit {
        PythonInt::Value(integer(negative, &digits))
    } else {
        PythonInt::NotAnInt
    }
}

/// The characters Python's `str.strip()` removes (`str.isspace()`).
fn is_python_space(ch: char) -> bool {
    matches!(ch, '\u{1c}'..='\u{1f}') || ch.is_whitespace()
}

/// The first code point of each run of ten Unicode decimal digits (general category `Nd`), as
/// of Unicode 14.0 (Python 3.11's). Each run holds the digits 0 to 9 in order.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a Unicode decimal digit.
fn decimal_digit(ch: char) -> Option<u8> {
    let code = u32::from(ch);
    let run = DIGIT_ZEROS
        .partition_point(|&zero| zero <= code)
        .checked_sub(1)?;
    let value = code - DIGIT_ZEROS[run];
    u8::try_from(value).ok().filter(|&value| value < 10)
}

enum JsNumber {
    /// A number, infinities included: JavaScript's `Map` takes `Infinity` as a key like any.
    Value(f64),
    /// `NaN`. A `Map` would take every `NaN` for one key, but no client that keys its requests
    /// by `Number(id)` sends an id that is not a number: its own ids are integers.
    NaN,
    TooLong,
}

/// What JavaScript's `Number(text)` gives (ECMAScript's `StringToNumber`): surrounding white space
/// and line terminators trimmed, the empty string 0, a `0x`/`0o`/`0b` integer, `Infinity` with
/// an optional sign, or a decimal literal with an optional sign, fraction and exponent (an
/// infinity past a double's range); anything else `NaN`.
fn js_number(text: &str) -> JsNumber {
    let text = text.trim_matches(is_js_space);
    if text.is_empty() {
        return JsNumber::Value(0.0);
    }
    let bytes = text.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        let radix = match bytes[1] {
            b'x' | b'X' => Some(16),
            b'o' | b'O' => Some(8),
            b'b' | b'B' => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            return radix_integer(&text[2..], radix);
        }
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned == "Infinity" {
        return JsNumber::Value(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    // Rust's grammar for an `f64` is ECMAScript's StrDecimalLiteral — an optional sign, digits
    // with an optional `.` and fraction (either side may be empty, not both), an optional
    // exponent — but for the words Rust also reads in any case (`inf`, `infinity`, `NaN`),
    // which JavaScript does not.
    if unsigned
        .bytes()
        .any(|byte| byte.is_ascii_alphabetic() && !matches!(byte, b'e' | b'E'))
    {
        return JsNumber::NaN;
    }
    text.parse::<f64>().map_or(JsNumber::NaN, JsNumber::Value)
}

/// A `0x`, `0o` or `0b` literal's digits as JavaScript reads them.
fn radix_integer(digits: &str, radix: u32) -> JsNumber {
    if digits.is_empty() {
        return JsNumber::NaN;
    }
    let mut value: u64 = 0;
    for ch in digits.chars() {
        let Some(digit) = ch.to_digit(radix) else {
            return JsNumber::NaN;
        };
        // Past 2⁶⁴ the proxy would have to round as JavaScript does; no client sends such ids.
        let Some(next) = value
            .checked_mul(u64::from(radix))
            .and_then(|value| value.checked_add(u64::from(digit)))
        else {
            return JsNumber::TooLong;
        };
        value = next;
    }
    // Rounded to the nearest double, as JavaScript does (ties to even, which `as` does too).
    #[allow(clippy::cast_precision_loss)]
    JsNumber::Value(value as f64)
}

/// ECMAScript's `StrWhiteSpaceChar`: `WhiteSpace` (tab, vertical tab, form feed, the byte order
/// mark, and Unicode's space separators) and `LineTerminator`.
fn is_js_space(ch: char) -> bool {
    matches!(
        ch,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(json: &str) -> Result<Vec<IdKey>, BadId> {
        keys(&serde_json::from_str::<Box<RawValue>>(json).unwrap())
    }

    fn one(a: &str, b: &str) -> bool {
        meet(&keys_of(a).unwrap(), &keys_of(b).unwrap())
    }

    #[test]
    fn the_python_sdk_reads_string_ids_with_int() {
        for spelling in [
            r#""2""#,
            r#"" 2""#,
            r#""+2""#,
            r#""2 ""#,
            r#""\t2\n""#,
            r#""\u001c2""#,
            r#""\u30002""#,
            r#""０２""#,
            r#""٢""#,
            r#""002""#,
        ] {
            assert!(one(spelling, "2"), "{spelling} is 2");
        }
        assert!(one(r#""2_0""#, "20"));
        assert!(one(r#""-0""#, "0"));
        assert!(one(r#""-3""#, "-3"));
        for spelling in [r#""2__0""#, r#""_20""#, r#""20_""#, r#""+-2""#, r#""2a""#] {
            assert!(!one(spelling, "20") && !one(spelling, "2"), "{spelling}");
        }
    }

    #[test]
    fn the_typescript_sdk_reads_ids_with_number() {
        for spelling in [
            r#""1""#,
            r#"" 1 ""#,
            r#""\ufeff1""#,
            r#""0x1""#,
            r#""0B1""#,
            r#""0o1""#,
            r#""1e0""#,
            r#""1.""#,
            r#""10e-1""#,
            "1.0",
            "1e0",
            "10E-1",
        ] {
            assert!(one(spelling, "1"), "{spelling} is 1");
        }
        assert!(one(r#""""#, "0"), "Number(\"\") is 0");
        assert!(!one(r#""0x""#, "0") && !one(r#""1x5""#, "5") && !one(r#""0b""#, "0"));
        assert!(one("-3.0", "-3") && !one("-3.0", "3"));
        assert!(!one("1.5", "2") && !one(r#""1.5""#, "2") && !one("-1.5", "-2"));
        // JavaScript reads these as one infinity, and keys a `Map` by it like any number.
        assert!(one(r#""Infinity""#, "1e400") && one(r#""1e500""#, r#"" +Infinity ""#));
        assert!(one(r#""-Infinity""#, "-1e400") && !one(r#""-Infinity""#, "1e400"));
        // But Rust's other words for numbers are not JavaScript's.
        for word in [r#""inf""#, r#""infinity""#, r#""NaN""#, r#""nan""#] {
            assert!(!one(word, "1e400") && !one(word, "0"), "{word}");
        }
        // Every NaN would be one key to a `Map`; no client keying by `Number` sends one.
        assert!(!one(r#""NaN""#, r#""nan""#) && !one(r#""abc""#, r#""def""#));
        assert!(one(r#"" ""#, "0"));
        assert!(one(r#"".5""#, r#""0.5""#));
        // Past 2⁵³ doubles round: JavaScript cannot tell these two apart.
        assert!(one("9007199254740993", "9007199254740992"));
        for spelling in [r#""0x""#, r#""1e""#, r#"".""#, r#""1 0""#] {
            assert!(!one(spelling, "1") && !one(spelling, "10"), "{spelling}");
        }
        // A sign is not allowed before a hex literal.
        assert!(!one(r#""-0x1""#, "-1"));
    }

    #[test]
    fn distinct_ids_stay_apart() {
        assert!(!one(r#""a""#, r#""b""#));
        assert!(!one("1", "2"));
        assert!(!one(r#""1.5""#, "1"));
        assert!(one(r#""abc""#, r#""abc""#));
        assert!(!one("9007199254740991", "9007199254740990"));
        // Python reads integers exactly, but JavaScript cannot tell these apart.
        assert!(one(
            "123456789012345678901234567890",
            "123456789012345678901234567891"
        ));
    }

    #[test]
    fn a_requests_id_is_an_integer_when_it_is_a_number() {
        let request =
            |json: &str| request_keys(&serde_json::from_str::<Box<RawValue>>(json).unwrap());
        for json in [
            "7",
            "7.0",
            "7e0",
            "-3",
            "12345678901234567890123",
            "1e20",
            r#""1.5""#,
        ] {
            assert!(request(json).is_ok(), "{json}");
        }
        for json in ["1.5", "1e400", "-1e999", "7.25e1", "1e-1"] {
            assert_eq!(request(json), Err(BadId::NotAnInteger), "{json}");
        }
        // An answer's id is read whatever it is, so it can meet a request's "Infinity".
        assert!(keys_of("1e400").is_ok());
    }

    #[test]
    fn an_integral_double_keys_as_its_exact_integer() {
        let exact = |value: f64| format!("{:.0}", value.abs());
        for value in [
            0.0,
            -0.0,
            1.0,
            -7.0,
            9_007_199_254_740_993.0,
            9_223_372_036_854_775_808.0,
            18_446_744_073_709_549_568.0,
            TWO_TO_64,
            -TWO_TO_64,
            1e20,
            1e300,
        ] {
            let IdKey::Number(key) = float_key(value) else {
                panic!("a number's key")
            };
            assert_eq!(key.trim_start_matches('-'), exact(value), "{value}");
            assert_eq!(key.starts_with('-'), value < 0.0, "{value}");
        }
    }

    #[test]
    fn what_is_not_an_id() {
        for json in ["null", "true", "{}", "[1]"] {
            assert_eq!(keys_of(json), Err(BadId::NotAnId), "{json}");
        }
        assert_eq!(keys_of(r#""\ud800""#), Err(BadId::Undecodable));
        // Nag Mundari digit one (Unicode 15): a newer Python reads it as 1.
        assert_eq!(keys_of("\"\u{1e4f1}\""), Err(BadId::UnknownDigits));
        assert_eq!(
            keys_of(r#""0x1ffffffffffffffff""#),
            Err(BadId::UnknownDigits)
        );
        // Text that is not a number to Python, whatever follows.
        assert!(keys_of("\"a\u{1e4f1}\"").is_ok());
    }

    #[test]
    fn every_decimal_digit_run_is_ten_digits_in_order() {
        for zero in DIGIT_ZEROS {
            for value in 0..10 {
                let ch = char::from_u32(zero + value).unwrap();
                assert_eq!(decimal_digit(ch), Some(u8::try_from(value).unwrap()));
                assert!(ch.is_numeric());
            }
        }
        assert_eq!(decimal_digit('/'), None);
        assert_eq!(decimal_digit(':'), None);
        assert_eq!(decimal_digit('\u{65f}'), None);
    }
}
