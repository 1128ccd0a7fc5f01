//! Reading the event lines after the header: the committed prefix, a torn tail, or corruption.
//!
//! A complete line that cannot be read, or that breaks seq contiguity, is only a torn tail if
//! nothing after it closes a turn: once a later line decodes to a `turn/end`, the damage sits
//! in the committed region and the log is corrupt. A final fragment without a newline is torn.

use crate::record::{LineDecode, decode_line_into};
use dsh_protocol::kinds;
use dsh_session::SessionEvent;

/// The result of scanning a log's event lines.
#[derive(Debug)]
pub struct ScanOutcome {
    /// The contiguous committed prefix.
    pub events: Vec<SessionEvent>,
    /// Byte offset (in the plaintext, header included) just past the last good line.
    pub committed_bytes: usize,
}

/// Incremental scanner of event lines; feed it plaintext in any chunking.
#[derive(Debug)]
pub struct LogScanner {
    events: Vec<SessionEvent>,
    fragment: Vec<u8>,
    input_bytes: usize,
    committed_bytes: usize,
    line: usize,
    issue: Option<String>,
}

impl LogScanner {
    /// A scanner whose plaintext starts after a header record of `header_len` bytes.
    pub fn new(header_len: usize) -> Self {
        Self {
            events: Vec::new(),
            fragment: Vec::new(),
            input_bytes: header_len,
            committed_bytes: header_len,
            line: 0,
            issue: None,
        }
    }

    /// Consumes the next plaintext bytes. `Err` is corruption in the committed region.
    ///
    /// Large inputs are parsed on several threads; the committed-prefix rules then run over the
    /// decoded lines in order, so the outcome does not depend on how the input is chunked.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), String> {
        let chunk_start = self.input_bytes;
        self.input_bytes += chunk.len();
        let mut line_start = 0;
        if !self.fragment.is_empty() {
            let Some(newline) = memchr_newline(chunk) else {
                self.fragment.extend_from_slice(chunk);
                return Ok(());
            };
            let mut line = std::mem::take(&mut self.fragment);
            line.extend_from_slice(chunk.get(..newline).unwrap_or_default());
            let decoded = decode_line(&line);
            self.accept(decoded, chunk_start + newline + 1)?;
            line_start = newline + 1;
        }
        let rest = chunk.get(line_start..).unwrap_or_default();
        let complete = rest
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |last| last + 1);
        let (lines, fragment) = rest.split_at(complete);
        let decoded = DecodedLines {
            lines: decode_lines(lines),
            len: lines.len(),
        };
        self.events.reserve(decoded.event_count());
        for (decoded, end) in decoded.lines {
            self.accept(decoded, chunk_start + line_start + end)?;
        }
        self.fragment.extend_from_slice(fragment);
        Ok(())
    }

    /// Accepts lines decoded elsewhere (see [`decode_plaintext`]) as the next plaintext. Call
    /// it only between complete lines (after a write that ended in a newline).
    pub fn accept_lines(&mut self, lines: DecodedLines) -> Result<(), String> {
        let base = self.input_bytes;
        self.input_bytes += lines.len;
        for (decoded, end) in lines.lines {
            self.accept(decoded, base + end)?;
        }
        Ok(())
    }

    /// Makes room for `additional` more events.
    pub fn reserve(&mut self, additional: usize) {
        self.events.reserve(additional);
    }

    /// Bytes consumed so far, the committed offset, and the number of committed events.
    pub fn checkpoint(&self) -> (usize, usize, usize) {
        (self.input_bytes, self.committed_bytes, self.events.len())
    }

    /// Ends the scan; a trailing fragment without a newline is dropped as torn.
    pub fn finish(self) -> ScanOutcome {
        ScanOutcome {
            events: self.events,
            committed_bytes: self.committed_bytes,
        }
    }

    /// Applies the committed-prefix rules to one decoded line ending at `end_byte`.
    fn accept(&mut self, decoded: Decoded, end_byte: usize) -> Result<(), String> {
        self.line += 1;
        let events: &[SessionEvent] = match &decoded {
            Decoded::One(event) => std::slice::from_ref(event),
            Decoded::Events(events) => events,
            Decoded::Unreadable => {
                if self.issue.is_none() {
                    self.issue = Some(format!(
                        "corrupt session log: unparsable committed event at line {}",
                        self.line
                    ));
                }
                return Ok(());
            }
            Decoded::BadEnvelope {
                seq,
                closes_turn,
                reason,
            } => {
                let expected = self.events.len() as u64;
                if let Some(issue) = &self.issue {
                    // A readable `turn/end` after damage: the damage was committed.
                    return if *closes_turn {
                        Err(issue.clone())
                    } else {
                        Ok(())
                    };
                }
                if *seq == expected {
                    // A complete, parsable event: damage, never a torn write.
                    return Err(format!(
                        "corrupt session log: event seq {seq} at line {} has an invalid \
                         envelope: {reason}",
                        self.line
                    ));
                }
                self.issue = Some(format!(
                    "corrupt session log: seq gap in committed region at line {} (expected \
                     {expected}, got {seq})",
                    self.line
                ));
                return Ok(());
            }
        };
        let closes_turn = events.iter().any(|event| event.kind == kinds::TURN_END);
        if let Some(issue) = &self.issue {
            return if closes_turn {
                Err(issue.clone())
            } else {
                Ok(())
            };
        }
        let expected = self.events.len() as u64;
        let gap = events
            .iter()
            .enumerate()
            .find(|(index, event)| event.seq != expected + *index as u64);
        if let Some((index, event)) = gap {
            let issue = format!(
                "corrupt session log: seq gap in committed region at line {} (expected {}, got {})",
                self.line,
                expected + index as u64,
                event.seq
            );
            if closes_turn {
                return Err(issue);
            }
            self.issue = Some(issue);
            return Ok(());
        }
        match decoded {
            Decoded::One(event) => self.events.push(event),
            Decoded::Events(mut events) => self.events.append(&mut events),
            Decoded::Unreadable | Decoded::BadEnvelope { .. } => {}
        }
        self.committed_bytes = end_byte;
        Ok(())
    }
}

/// What one line decoded to.
enum Decoded {
    /// One event (most lines): kept out of a vector until accepted.
    One(SessionEvent),
    Events(Vec<SessionEvent>),
    Unreadable,
    BadEnvelope {
        seq: u64,
        closes_turn: bool,
        reason: String,
    },
}

fn decode_line(line: &[u8]) -> Decoded {
    let mut events = Vec::new();
    match decode_line_into(line, &mut events) {
        LineDecode::Events(1) => events.pop().map_or(Decoded::Unreadable, Decoded::One),
        LineDecode::Events(_) => Decoded::Events(events),
        LineDecode::Unreadable => Decoded::Unreadable,
        LineDecode::BadEnvelope {
            seq,
            closes_turn,
            reason,
        } => Decoded::BadEnvelope {
            seq,
            closes_turn,
            reason,
        },
    }
}

/// One stretch of plaintext that ends at a line end, decoded line by line.
pub struct DecodedLines {
    lines: Vec<(Decoded, usize)>,
    len: usize,
}

impl DecodedLines {
    /// How many events the stretch holds.
    pub fn event_count(&self) -> usize {
        self.lines
            .iter()
            .map(|(line, _)| match line {
                Decoded::One(_) => 1,
                Decoded::Events(events) => events.len(),
                Decoded::Unreadable | Decoded::BadEnvelope { .. } => 0,
            })
            .sum()
    }
}

/// Decodes a stretch of plaintext made of complete lines; `None` when it does not end with a
/// newline (a record continues past it, so it must go through [`LogScanner::write`]).
pub fn decode_plaintext(plain: &[u8]) -> Option<DecodedLines> {
    if !plain.is_empty() && plain.last() != Some(&b'\n') {
        return None;
    }
    Some(DecodedLines {
        lines: decode_range(plain, 0),
        len: plain.len(),
    })
}

/// Below this many bytes, lines are decoded on the calling thread.
const PARALLEL_THRESHOLD: usize = 256 * 1024;

/// Decodes complete lines (each ending in `\n`), returning each with the offset just past its
/// newline. Large inputs are split at line boundaries across the available cores.
fn decode_lines(lines: &[u8]) -> Vec<(Decoded, usize)> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(8);
    if lines.len() < PARALLEL_THRESHOLD || threads < 2 {
        return decode_range(lines, 0);
    }
    let mut parts = Vec::with_capacity(threads);
    let mut start = 0;
    for part in 1..=threads {
        let target = (lines.len() * part / threads).max(start);
        let end = if part == threads {
            lines.len()
        } else {
            lines
                .get(target..)
                .and_then(memchr_newline)
                .map_or(lines.len(), |offset| target + offset + 1)
        };
        parts.push((start, end));
        start = end;
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .skip(1)
            .map(|&(start, end)| {
                let slice = lines.get(start..end).unwrap_or_default();
                scope.spawn(move || decode_range(slice, start))
            })
            .collect();
        let (first_start, first_end) = parts.first().copied().unwrap_or_default();
        let mut decoded = decode_range(lines.get(first_start..first_end).unwrap_or_default(), 0);
        for handle in handles {
            match handle.join() {
                Ok(more) => decoded.extend(more),
                // A panicking decoder is a bug; report the rest as undecodable rather than lose it.
                Err(_) => decoded.push((Decoded::Unreadable, lines.len())),
            }
        }
        decoded
    })
}

fn decode_range(lines: &[u8], base: usize) -> Vec<(Decoded, usize)> {
    let mut decoded = Vec::with_capacity(memchr::memchr_iter(b'\n', lines).count());
    let mut start = 0;
    while let Some(offset) = lines.get(start..).and_then(memchr_newline) {
        let end = start + offset;
        decoded.push((
            decode_line(lines.get(start..end).unwrap_or_default()),
            base + end + 1,
        ));
        start = end + 1;
    }
    decoded
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}
