//! Reading the event lines after the header: the committed prefix, a torn tail, or corruption.
//!
//! A complete line that cannot be read, or that breaks seq contiguity, is only a torn tail if
//! nothing after it closes a turn: once a later line decodes to a `turn/end`, the damage sits
//! in the committed region and the log is corrupt. A final fragment without a newline is torn.

use dsh_session::SessionEvent;
use dsh_session::chunk_rows::decode_record_into;
use serde_json::Value;

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
    decoded: Vec<SessionEvent>,
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
            decoded: Vec::new(),
        }
    }

    /// Consumes the next plaintext bytes. `Err` is corruption in the committed region.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), String> {
        let chunk_start = self.input_bytes;
        self.input_bytes += chunk.len();
        let mut line_start = 0;
        while let Some(offset) = chunk.get(line_start..).and_then(memchr_newline) {
            let newline = line_start + offset;
            let piece = chunk.get(line_start..newline).unwrap_or_default();
            if self.fragment.is_empty() {
                self.consume_line(piece, chunk_start + newline + 1)?;
            } else {
                let mut line = std::mem::take(&mut self.fragment);
                line.extend_from_slice(piece);
                self.consume_line(&line, chunk_start + newline + 1)?;
            }
            line_start = newline + 1;
        }
        if let Some(rest) = chunk.get(line_start..).filter(|rest| !rest.is_empty()) {
            self.fragment.extend_from_slice(rest);
        }
        Ok(())
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

    fn consume_line(&mut self, line: &[u8], end_byte: usize) -> Result<(), String> {
        self.line += 1;
        self.decoded.clear();
        let decoded = serde_json::from_slice::<Value>(line)
            .map_err(|error| error.to_string())
            .and_then(|value| {
                decode_record_into(value, &mut self.decoded).map_err(|error| error.to_string())
            });
        if decoded.is_err() {
            if self.issue.is_none() {
                self.issue = Some(format!(
                    "corrupt session log: unparsable committed event at line {}",
                    self.line
                ));
            }
            return Ok(());
        }
        let closes_turn = self.decoded.iter().any(|event| event.kind == "turn/end");
        if let Some(issue) = &self.issue {
            return if closes_turn {
                Err(issue.clone())
            } else {
                Ok(())
            };
        }
        let expected = self.events.len() as u64;
        let gap = self
            .decoded
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
        self.events.append(&mut self.decoded);
        self.committed_bytes = end_byte;
        Ok(())
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&byte| byte == b'\n')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TURN: &str = concat!(
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        "\n",
        r#"{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
        "\n"
    );

    fn scan(text: &str) -> Result<ScanOutcome, String> {
        let mut scanner = LogScanner::new(0);
        scanner.write(text.as_bytes())?;
        Ok(scanner.finish())
    }

    #[test]
    fn complete_lines_are_committed_and_a_fragment_is_torn() {
        let outcome = scan(&format!("{TURN}{{\"type\":\"tu")).unwrap();
        assert_eq!(outcome.events.len(), 2);
        assert_eq!(outcome.committed_bytes, TURN.len());
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        let text = format!("{TURN}{{\"type\":\"x\"");
        for split in 0..text.len() {
            let mut scanner = LogScanner::new(0);
            scanner.write(&text.as_bytes()[..split]).unwrap();
            scanner.write(&text.as_bytes()[split..]).unwrap();
            let outcome = scanner.finish();
            assert_eq!(
                (outcome.events.len(), outcome.committed_bytes),
                (2, TURN.len())
            );
        }
    }

    #[test]
    fn a_bad_line_before_a_turn_end_is_corruption() {
        let text = format!(
            "{}\nnot json\n{}\n",
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
            r#"{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#
        );
        assert_eq!(
            scan(&text).unwrap_err(),
            "corrupt session log: unparsable committed event at line 2"
        );
    }

    #[test]
    fn a_bad_line_without_a_later_turn_end_is_a_torn_tail() {
        let text = format!(
            "{TURN}not json\n{}\n",
            r#"{"type":"turn/start","seq":2,"time":1,"data":{"turn":2}}"#
        );
        let outcome = scan(&text).unwrap();
        assert_eq!(
            (outcome.events.len(), outcome.committed_bytes),
            (2, TURN.len())
        );
    }

    #[test]
    fn a_seq_gap_before_a_turn_end_is_corruption() {
        let text = format!(
            "{}\n{}\n",
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
            r#"{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#
        );
        assert!(
            scan(&text)
                .unwrap_err()
                .contains("seq gap in committed region at line 2 (expected 1, got 2)")
        );
    }
}
