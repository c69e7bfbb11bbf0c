//! The Python SDK's event streams: the codec `httpx2` decodes a stream with, and its line and
//! event decoders (`httpx2/_sse.py`, `_SSELineDecoder` and `_SSEEventDecoder`).

use crate::http_readers::text::{Utf8Stream, is_py_space, latin1};
use crate::lenient;

/// `DEFAULT_MAX_SSE_EVENT_SIZE`: the most bytes one event's lines may hold.
const MAX_EVENT_SIZE: usize = 1024 * 1024;

/// The codec `Response.encoding` names: the Content-Type's `charset` (as `email.message`
/// reads it) when Python knows it, else UTF-8. `None` for a charset the model does not know.
pub(super) fn charset(content_type: Option<&str>) -> Option<Codec> {
    let Some(content_type) = content_type else {
        return Some(Codec::Utf8);
    };
    let Some(charset) = charset_param(content_type) else {
        return Some(Codec::Utf8);
    };
    if !charset.is_ascii() {
        return Some(Codec::Utf8);
    }
    // `encodings.normalize_encoding`, after `codecs.lookup` lowercases.
    let mut name = String::new();
    let mut punct = false;
    for ch in charset.to_lowercase().chars() {
        if ch.is_ascii_alphanumeric() || ch == '.' {
            if punct && !name.is_empty() {
                name.push('_');
            }
            name.push(ch);
            punct = false;
        } else {
            punct = true;
        }
    }
    let name = name.replace('.', "_");
    match name.as_str() {
        "" => Some(Codec::Utf8),
        "utf_8" | "utf8" | "u8" | "utf" | "utf8_ucs2" | "utf8_ucs4" | "cp65001" => {
            Some(Codec::Utf8)
        }
        "latin_1" | "latin1" | "latin" | "l1" | "iso8859_1" | "iso_8859_1" | "iso8859" | "8859"
        | "cp819" | "ibm819" | "csisolatin1" | "iso_ir_100" | "iso_8859_1_1987" => {
            Some(Codec::Latin1)
        }
        "ascii" | "us_ascii" | "us" | "646" | "cp367" | "ibm367" | "csascii" | "iso646_us"
        | "iso_ir_6" | "ansi_x3_4_1968" | "ansi_x3_4_1986" | "iso_646_irv_1991" => {
            Some(Codec::Ascii)
        }
        _ => None,
    }
}

/// The first `charset` parameter, as `email.message.Message.get_param` reads it: the value cut
/// at `;` outside quotes, each parameter split at its first `=`, name and value stripped, a
/// quoted value unquoted (and one in `<…>` unbracketed). RFC 2231 parameters are not read.
fn charset_param(content_type: &str) -> Option<String> {
    let mut rest = content_type;
    let mut first = true;
    loop {
        let mut end = rest.find(';');
        while let Some(at) = end.filter(|&at| at > 0) {
            let quotes = rest[..at].matches('"').count() - rest[..at].matches("\\\"").count();
            if quotes % 2 == 0 {
                break;
            }
            end = rest[at + 1..].find(';').map(|next| at + 1 + next);
        }
        let (param, after) = match end {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        if !first {
            if let Some((name, value)) = param.split_once('=') {
                if name
                    .trim_matches(is_py_space)
                    .eq_ignore_ascii_case("charset")
                {
                    return Some(unquote(value.trim_matches(is_py_space)));
                }
            }
        }
        first = false;
        rest = after?;
    }
}

/// `email.utils.unquote`.
fn unquote(value: &str) -> String {
    if value.len() > 1 {
        if let Some(inner) = value
            .strip_prefix('"')
            .and_then(|value| value.strip_suffix('"'))
        {
            return inner.replace("\\\\", "\\").replace("\\\"", "\"");
        }
        if let Some(inner) = value
            .strip_prefix('<')
            .and_then(|value| value.strip_suffix('>'))
        {
            return inner.to_owned();
        }
    }
    value.to_owned()
}

/// The codecs the model decodes a stream with.
#[derive(Debug, Clone, Copy)]
pub(super) enum Codec {
    Utf8,
    Latin1,
    Ascii,
}

/// One event as `httpx2`'s decoder yields it.
#[derive(Debug)]
pub(super) struct Sse {
    pub(super) event: String,
    pub(super) data: String,
    pub(super) id: String,
}

/// The events of a stream, in order, ending with the `SSEError` that stops it, if one does.
pub(super) fn events(chunks: &[Vec<u8>], codec: Codec) -> Vec<Result<Sse, String>> {
    let mut decoder = Utf8Stream::new(false);
    let mut texts: Vec<String> = chunks
        .iter()
        .map(|chunk| match codec {
            Codec::Utf8 => decoder.feed(chunk),
            Codec::Latin1 => latin1(chunk),
            Codec::Ascii => chunk
                .iter()
                .map(|&byte| {
                    if byte < 0x80 {
                        char::from(byte)
                    } else {
                        '\u{fffd}'
                    }
                })
                .collect(),
        })
        .collect();
    texts.push(decoder.finish());
    let mut lines = LineDecoder::default();
    let mut fields = EventDecoder::default();
    let mut out = Vec::new();
    for text in &texts {
        for line in lines.decode(text) {
            match fields.line(&line) {
                Ok(Some(event)) => out.push(Ok(event)),
                Ok(None) => {}
                Err(error) => {
                    out.push(Err(error));
                    return out;
                }
            }
        }
        if let Err(error) = fields.check(lines.pending_size()) {
            out.push(Err(error));
            return out;
        }
    }
    for line in lines.flush() {
        match fields.line(&line) {
            Ok(Some(event)) => out.push(Ok(event)),
            Ok(None) => {}
            Err(error) => {
                out.push(Err(error));
                return out;
            }
        }
    }
    out
}

/// `_SSELineDecoder`: CRLF, CR and LF all end a line; a CR that ends a chunk waits for the
/// next; at the end, a held CR ends a line, and what is left is split into lines and read.
#[derive(Debug, Default)]
struct LineDecoder {
    pending: String,
    trailing_cr: bool,
}

impl LineDecoder {
    fn pending_size(&self) -> usize {
        self.pending.len()
    }

    fn decode(&mut self, text: &str) -> Vec<String> {
        let mut text = if self.trailing_cr {
            self.trailing_cr = false;
            format!("\r{text}")
        } else {
            text.to_owned()
        };
        if text.ends_with('\r') {
            self.trailing_cr = true;
            text.pop();
        }
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        if !text.contains('\n') {
            self.pending.push_str(&text);
            return Vec::new();
        }
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let last = lines.pop().unwrap_or_default();
        lines[0] = format!("{}{}", std::mem::take(&mut self.pending), lines[0]);
        self.pending = last;
        lines
    }

    fn flush(&mut self) -> Vec<String> {
        if self.trailing_cr {
            self.pending.push('\n');
            self.trailing_cr = false;
        }
        let buffer = std::mem::take(&mut self.pending);
        if buffer.is_empty() {
            return Vec::new();
        }
        buffer.split('\n').map(str::to_owned).collect()
    }
}

/// `_SSEEventDecoder`: an event is dispatched at an empty line when any field set it pending;
/// the last event id is kept from event to event.
#[derive(Debug, Default)]
struct EventDecoder {
    event: String,
    data: Vec<String>,
    size: usize,
    last_event_id: String,
    pending: bool,
}

impl EventDecoder {
    fn line(&mut self, line: &str) -> Result<Option<Sse>, String> {
        if line.is_empty() {
            self.size = 0;
            if !self.pending {
                return Ok(None);
            }
            self.pending = false;
            let event = std::mem::take(&mut self.event);
            return Ok(Some(Sse {
                event: if event.is_empty() {
                    "message".to_owned()
                } else {
                    event
                },
                data: std::mem::take(&mut self.data).join("\n"),
                id: self.last_event_id.clone(),
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        self.size += line.len();
        self.check(0)?;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => {
                value.clone_into(&mut self.event);
                self.pending = true;
            }
            "data" => {
                self.data.push(value.to_owned());
                self.pending = true;
            }
            "id" if !value.contains('\0') => {
                value.clone_into(&mut self.last_event_id);
                self.pending = true;
            }
            "retry" if lenient::python_int(value).is_some() => self.pending = true,
            _ => {}
        }
        Ok(None)
    }

    fn check(&self, pending: usize) -> Result<(), String> {
        if self.size + pending > MAX_EVENT_SIZE {
            Err(format!(
                "Server-sent event exceeded the {MAX_EVENT_SIZE} byte limit."
            ))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charset_is_the_first_one_email_reads() {
        for (content_type, expected) in [
            ("text/event-stream; charset=latin-1", Some("latin-1")),
            (
                "text/event-stream; Charset = \"ISO-8859-1\"; charset=utf-8",
                Some("ISO-8859-1"),
            ),
            ("text/event-stream; a=\"x;charset=ascii\"", None),
            ("text/event-stream", None),
        ] {
            assert_eq!(
                charset_param(content_type).as_deref(),
                expected,
                "{content_type}"
            );
        }
    }

    #[test]
    fn lines_end_as_httpx2_ends_them() {
        let mut lines = LineDecoder::default();
        assert_eq!(lines.decode("a\r"), Vec::<String>::new());
        assert_eq!(lines.decode("\nb\rc"), ["a", "b"]);
        assert_eq!(lines.decode("\r"), Vec::<String>::new());
        assert_eq!(lines.flush(), ["c", ""]);
    }
}
