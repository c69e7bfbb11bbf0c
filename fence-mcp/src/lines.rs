//! MCP's stdio framing: one JSON-RPC message a line. A line is read whole up to the size limit;
//! a longer one is never held in memory, but streamed once through `serde_json` to learn its id
//! and method, so the side waiting on it can be told. Each line read goes through the session
//! (an upstream's through the [gate](crate::gate)) and each message written is a line of a
//! [`Sink`].

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::{Mutex, PoisonError};

use memchr::memchr;

use crate::engine::Deliver;
use crate::session::{Outcome, Session, Side, Skimmed};

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line is in the buffer, without its `\n`.
    Whole,
    /// The line is longer than the limit: the buffer holds its first bytes, and the reader is
    /// in the middle of it. Call [`skim`] next.
    Oversized,
    /// The input has ended.
    End,
}

/// A side's input, written a whole message at a time.
pub(crate) struct Sink<W> {
    writer: Mutex<Option<W>>,
}

impl<W: Write> Sink<W> {
    pub(crate) fn new(writer: W) -> Sink<W> {
        Sink {
            writer: Mutex::new(Some(writer)),
        }
    }

    /// Writes `message` and a `\n`, and flushes. `false` once the other side is gone.
    pub(crate) fn send(&self, message: &mut Vec<u8>) -> bool {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let sent = match writer.as_mut() {
            Some(out) => write_line(out, message).is_ok(),
            None => false,
        };
        if !sent {
            *writer = None;
        }
        sent
    }

    /// Closes the writer, so the side reading it sees the end of its input.
    pub(crate) fn close(&self) {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Writes `message` and a `\n`, and flushes: in one write when the message has room for the
/// `\n`, else in two rather than copy a large message to grow it.
pub(crate) fn write_line(out: &mut impl Write, message: &mut Vec<u8>) -> io::Result<()> {
    if message.len() < message.capacity() {
        message.push(b'\n');
        let written = out.write_all(message);
        message.pop();
        written?;
    } else {
        out.write_all(message)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Where one line's outcome goes when both sides are stdio: on to `onward`, back to `back`,
/// the line itself sent as it came from `line`'s buffer, with no copy.
pub(crate) struct Lines<'a, A: Write, B: Write> {
    pub(crate) line: &'a mut Vec<u8>,
    pub(crate) onward: &'a Sink<A>,
    pub(crate) back: &'a Sink<B>,
}

impl<A: Write, B: Write> Deliver for Lines<'_, A, B> {
    fn as_it_came(&mut self) -> bool {
        self.onward.send(self.line)
    }

    fn onward(&mut self, mut message: Vec<u8>) -> bool {
        self.onward.send(&mut message)
    }

    fn back(&mut self, mut message: Vec<u8>) {
        self.back.send(&mut message);
    }
}

/// Reads the next message from `from`'s input into `line` and says what it becomes; `None`
/// once the input has ended or failed. Blank lines are skipped.
pub(crate) fn next_outcome(
    session: &Session,
    limit: usize,
    from: Side,
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> Option<Outcome> {
    loop {
        return match read_line(reader, line, limit) {
            Ok(Line::Whole) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Whole) => Some(match from {
                Side::Client => session.client_line(line),
                Side::Upstream => crate::gate::message(session, line),
            }),
            Ok(Line::Oversized) => {
                let (skimmed, size) = skim(reader, line).ok()?;
                Some(session.oversized(from, skimmed.as_ref(), size, limit))
            }
            Ok(Line::End) | Err(_) => None,
        };
    }
}

/// Reads one line into `line` (cleared first), up to `limit` bytes. A last line without a
/// `\n` counts as a line.
pub(crate) fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Line> {
    line.clear();
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            return Ok(if line.is_empty() {
                Line::End
            } else {
                Line::Whole
            });
        }
        let (take, end) = match memchr(b'\n', available) {
            Some(newline) => (newline, true),
            None => (available.len(), false),
        };
        if line.len() + take > limit {
            return Ok(Line::Oversized);
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take + usize::from(end));
        if end {
            return Ok(Line::Whole);
        }
    }
}

/// The rest of an oversized line, read through once: its id and method when it is a JSON-RPC
/// message (`None` when it is not), and its whole size in bytes. The reader is left at the
/// start of the next line.
pub(crate) fn skim(reader: &mut impl BufRead, start: &[u8]) -> io::Result<(Option<Skimmed>, u64)> {
    let mut rest = Rest {
        reader,
        done: false,
        read: 0,
    };
    // serde_json reads a `Read` a byte at a time: a buffer in between makes that cheap.
    let mut message = BufReader::with_capacity(1 << 16, start.chain(&mut rest));
    let skimmed = serde_json::from_reader::<_, Skimmed>(&mut message);
    let skimmed = match skimmed {
        Ok(skimmed) => Some(skimmed),
        Err(err) if err.is_io() => return Err(err.into()),
        Err(_) => None,
    };
    io::copy(&mut message, &mut io::sink())?;
    drop(message);
    Ok((skimmed, start.len() as u64 + rest.read))
}

/// A whole oversized message (an HTTP body), read through once to its end: its id and method
/// when it is a JSON-RPC message, and its size in bytes.
#[cfg(feature = "http")]
pub(crate) fn skim_all(reader: impl Read) -> (Option<Skimmed>, u64) {
    let mut counted = Counted { reader, read: 0 };
    let mut message = BufReader::with_capacity(1 << 16, &mut counted);
    let skimmed = serde_json::from_reader::<_, Skimmed>(&mut message).ok();
    let _ = io::copy(&mut message, &mut io::sink());
    drop(message);
    (skimmed, counted.read)
}

#[cfg(feature = "http")]
struct Counted<R> {
    reader: R,
    read: u64,
}

#[cfg(feature = "http")]
impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.reader.read(buf)?;
        self.read += read as u64;
        Ok(read)
    }
}

/// A `Read` over the current line's remaining bytes, which consumes its `\n` and stops.
struct Rest<'a, R> {
    reader: &'a mut R,
    done: bool,
    read: u64,
}

impl<R: BufRead> Read for Rest<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        let available = self.reader.fill_buf()?;
        if available.is_empty() {
            self.done = true;
            return Ok(0);
        }
        let (take, end) = match memchr(b'\n', available) {
            Some(newline) if newline <= buf.len() => (newline, true),
            _ => (available.len().min(buf.len()), false),
        };
        buf[..take].copy_from_slice(&available[..take]);
        self.reader.consume(take + usize::from(end));
        self.done = end;
        self.read += take as u64;
        Ok(take)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<Result<String, (Option<String>, u64)>> {
        let mut reader = BufReader::with_capacity(7, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, limit).unwrap() {
                Line::Whole => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
                Line::Oversized => {
                    let (skimmed, size) = skim(&mut reader, &line).unwrap();
                    out.push(Err((skimmed.map(|s| format!("{s:?}")), size)));
                }
                Line::End => return out,
            }
        }
    }

    #[test]
    fn lines_are_split_at_newlines_and_a_last_line_needs_none() {
        assert_eq!(
            lines(b"{\"a\":1}\n\nlong line here\nend", 100),
            [
                Ok("{\"a\":1}".into()),
                Ok(String::new()),
                Ok("long line here".into()),
                Ok("end".into())
            ]
        );
        assert_eq!(lines(b"", 100), []);
    }

    #[test]
    fn an_oversized_line_is_skimmed_for_its_id_and_method_and_the_next_line_is_whole() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","result":{{"text":"{}"}},"id":7}}"#,
            "x".repeat(100)
        );
        let input = format!("{big}\n{{\"id\":8}}\n{big}");
        let out = lines(input.as_bytes(), 20);
        assert_eq!(out.len(), 3, "{out:?}");
        let skimmed = r#"Some("Skimmed { ids: [RawValue(7)], methods: [] }")"#;
        assert_eq!(format!("{:?}", out[0].as_ref().unwrap_err().0), skimmed);
        assert_eq!(out[0].as_ref().unwrap_err().1, big.len() as u64);
        assert_eq!(out[1], Ok("{\"id\":8}".into()));
        assert_eq!(out[2].as_ref().unwrap_err().1, big.len() as u64);
    }

    #[test]
    fn an_oversized_line_that_is_not_json_is_skimmed_to_its_end() {
        let input = format!("{}\n{{\"id\":1}}\n", "not json ".repeat(50));
        let out = lines(input.as_bytes(), 64);
        assert_eq!(out, [Err((None, 450)), Ok("{\"id\":1}".into())]);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_whole_and_one_byte_more_is_not() {
        assert_eq!(
            lines(b"abcdefghij\nabcdefghijk\nxyz", 10),
            [Ok("abcdefghij".into()), Err((None, 11)), Ok("xyz".into())]
        );
    }

    /// A reader interrupted by a signal before each read, that fails at the end of its bytes
    /// when told to.
    struct Jittery<'a> {
        bytes: &'a [u8],
        interrupt: bool,
        fail_at_end: bool,
    }

    impl Read for Jittery<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            if self.bytes.is_empty() && self.fail_at_end {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = self.bytes.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn an_interrupted_read_is_retried_and_a_failed_one_is_an_error() {
        let jittery = |fail_at_end| {
            BufReader::with_capacity(
                4,
                Jittery {
                    bytes: b"{\"id\":1}\nnext",
                    interrupt: false,
                    fail_at_end,
                },
            )
        };
        let mut line = Vec::new();
        let mut reader = jittery(false);
        assert_eq!(read_line(&mut reader, &mut line, 100).unwrap(), Line::Whole);
        assert_eq!(line, b"{\"id\":1}");
        assert_eq!(read_line(&mut reader, &mut line, 100).unwrap(), Line::Whole);
        assert_eq!(line, b"next");
        assert_eq!(read_line(&mut reader, &mut line, 100).unwrap(), Line::End);
        let mut reader = jittery(true);
        assert_eq!(read_line(&mut reader, &mut line, 100).unwrap(), Line::Whole);
        let failed = read_line(&mut reader, &mut line, 100).unwrap_err();
        assert_eq!(failed.kind(), io::ErrorKind::BrokenPipe);
    }
}
