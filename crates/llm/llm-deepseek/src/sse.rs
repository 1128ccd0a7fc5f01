//! A spec-strict Server-Sent Events parser fed by byte chunks (dsh's `src/sse.ts`, which uses
//! `eventsource-parser`).
//!
//! Lines end at `\r\n`, `\n` or `\r` (a `\r\n` split across two chunks is one line end). An
//! event dispatches only at a blank line; `data:` lines of one event are joined with `\n`; a
//! leading byte-order mark is skipped; comments (`: ...`) are reported as
//! [`SseItem::Comment`] (transport activity, not data); other fields (`event`, `id`, `retry`)
//! are ignored. `data: [DONE]` is [`SseItem::Done`], and everything after it is ignored. Text is
//! decoded as UTF-8 at dispatch, invalid sequences replaced (as `TextDecoderStream` does).

use dsh_llm::{LlmFailure, codes};

/// The `data` payload that ends a DeepSeek stream.
pub const DONE: &str = "[DONE]";

/// One thing the parser recognized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event's `data` (never [`DONE`]).
    Data(String),
    /// A comment line: activity only.
    Comment,
    /// `data: [DONE]`: the stream is over.
    Done,
}

/// The incremental parser. Feed it bytes in any split; the items are the same.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The incomplete line carried over from earlier chunks.
    line: Vec<u8>,
    /// The data buffer of the event being built.
    data: Vec<u8>,
    /// Whether the event being built has a `data` field.
    has_data: bool,
    /// The last chunk ended in `\r`: a leading `\n` of the next one belongs to it.
    skip_lf: bool,
    /// No line has been processed yet (a BOM may lead it).
    started: bool,
    /// `[DONE]` was seen.
    done: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `[DONE]` was seen; later input is ignored.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Parses `bytes`, appending the items completed by them to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseItem>) {
        while !self.done {
            if self.skip_lf {
                match bytes.split_first() {
                    Some((b'\n', rest)) => bytes = rest,
                    Some(_) => {}
                    None => return,
                }
                self.skip_lf = false;
            }
            let Some(end) = memchr::memchr2(b'\r', b'\n', bytes) else {
                self.line.extend_from_slice(bytes);
                return;
            };
            let (head, tail) = bytes.split_at(end);
            if self.line.is_empty() {
                self.process_line(head, out);
            } else {
                self.line.extend_from_slice(head);
                let line = std::mem::take(&mut self.line);
                self.process_line(&line, out);
                self.line = line;
                self.line.clear();
            }
            let Some((terminator, rest)) = tail.split_first() else {
                return;
            };
            self.skip_lf = *terminator == b'\r';
            bytes = rest;
        }
    }

    /// The end of input: `Ok` only when `[DONE]` was seen.
    pub fn finish(&self) -> Result<(), LlmFailure> {
        if self.done {
            Ok(())
        } else {
            Err(stream_closed())
        }
    }

    fn process_line(&mut self, mut line: &[u8], out: &mut Vec<SseItem>) {
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()) {
                line = rest;
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.first() == Some(&b':') {
            out.push(SseItem::Comment);
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let (field, rest) = line.split_at(colon);
                let value = rest.get(1..).unwrap_or_default();
                (field, value.strip_prefix(b" ".as_slice()).unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseItem>) {
        if !self.has_data {
            return;
        }
        self.has_data = false;
        if self.data == DONE.as_bytes() {
            self.done = true;
            self.data.clear();
            out.push(SseItem::Done);
            return;
        }
        let text = match String::from_utf8(std::mem::take(&mut self.data)) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        };
        out.push(SseItem::Data(text));
    }
}

/// The failure of a stream that ended before `[DONE]`.
pub fn stream_closed() -> LlmFailure {
    LlmFailure::new(codes::STREAM_CLOSED, "SSE stream ended without [DONE]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<SseItem> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        out
    }

    #[test]
    fn dispatches_at_blank_lines_only() {
        let items = parse(&[b"data: a\n\ndata: b\ndata: c\r\n\r\n: keep\rdata: [DONE]\n"]);
        assert_eq!(
            items,
            vec![
                SseItem::Data("a".into()),
                SseItem::Data("b\nc".into()),
                SseItem::Comment
            ]
        );
    }

    #[test]
    fn done_needs_its_blank_line_and_ends_parsing() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser.feed(b"data: [DONE]\n", &mut out);
        assert!(out.is_empty());
        assert_eq!(
            parser.finish().map_err(|f| f.code),
            Err("STREAM_CLOSED".to_string())
        );
        parser.feed(b"\ndata: x\n\n", &mut out);
        assert_eq!(out, vec![SseItem::Done]);
        assert!(parser.finish().is_ok());
    }

    #[test]
    fn split_crlf_bom_and_fields() {
        let items = parse(&[
            b"\xEF\xBB",
            b"\xBFdata:x\r",
            b"\nevent: e\nid: 1\ndata\r",
            b"\r\n",
        ]);
        assert_eq!(items, vec![SseItem::Data("x\n".into())]);
    }
}
