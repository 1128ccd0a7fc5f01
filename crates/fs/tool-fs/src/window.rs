//! The read window: numbered lines from streamed text, with dsh's caps, and an exact line
//! count. Lines outside the window are only counted, so a 10 MB file costs one newline
//! scan and a page of memory.

use dsh_fs::{FsError, FsErrorCode, quoted};

/// One line of the window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WindowLine {
    /// Its 1-based number in the file.
    pub number: u64,
    /// Its text, without the line ending (capped, with dsh's truncation note).
    pub text: String,
}

/// What to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRequest {
    /// The first line (1-based).
    pub offset: u64,
    /// The most lines.
    pub limit: u64,
    /// The longest line shown whole, in UTF-16 code units (as dsh counts).
    pub max_line_length: usize,
    /// The most UTF-8 bytes of shown text (plus one per line break).
    pub max_bytes: usize,
}

/// The finished window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The shown lines.
    pub lines: Vec<WindowLine>,
    /// How many lines the file has.
    pub total_lines: u64,
    /// Whether the byte cap stopped the window.
    pub truncated_by_bytes: bool,
}

/// Builds a [`Window`] from text pushed in chunks of any size.
#[derive(Debug)]
pub struct WindowBuilder {
    request: WindowRequest,
    lines: Vec<WindowLine>,
    total_lines: u64,
    bytes: usize,
    truncated_by_bytes: bool,
    /// The line in progress when it is wanted (at most `max_line_length + 1` units).
    buffer: String,
    buffer_units: usize,
    /// Whether the line in progress has any character yet.
    pending: bool,
}

impl WindowBuilder {
    /// An empty builder for `request`.
    pub fn new(request: WindowRequest) -> Self {
        Self {
            request,
            lines: Vec::new(),
            total_lines: 0,
            bytes: 0,
            truncated_by_bytes: false,
            buffer: String::new(),
            buffer_units: 0,
            pending: false,
        }
    }

    /// Whether the line in progress (number `total_lines + 1`) goes into the window.
    fn wants_current(&self) -> bool {
        !self.truncated_by_bytes
            && self.total_lines + 1 >= self.request.offset
            && (self.lines.len() as u64) < self.request.limit
    }

    fn append(&mut self, segment: &str) {
        if segment.is_empty() {
            return;
        }
        self.pending = true;
        if !self.wants_current() {
            return;
        }
        let cap = self.request.max_line_length.saturating_add(1);
        for ch in segment.chars() {
            if self.buffer_units >= cap {
                break;
            }
            self.buffer.push(ch);
            self.buffer_units += ch.len_utf16();
        }
    }

    fn end_line(&mut self) {
        let wanted = self.wants_current();
        self.total_lines += 1;
        self.pending = false;
        if !wanted {
            return;
        }
        let mut line = std::mem::take(&mut self.buffer);
        let mut units = self.buffer_units;
        self.buffer_units = 0;
        if line.ends_with('\r') {
            line.pop();
            units -= 1;
        }
        let max = self.request.max_line_length;
        let text = if units > max {
            format!(
                "{}... (line truncated to {max} chars)",
                cut_utf16(&line, max)
            )
        } else {
            line
        };
        let cost = text.len() + usize::from(!self.lines.is_empty());
        if self.bytes + cost > self.request.max_bytes {
            self.truncated_by_bytes = true;
            return;
        }
        self.bytes += cost;
        self.lines.push(WindowLine {
            number: self.total_lines,
            text,
        });
    }

    /// Whether no later line can enter the window (it is full or byte-capped).
    fn done(&self) -> bool {
        self.truncated_by_bytes || (self.lines.len() as u64) >= self.request.limit
    }

    /// Adds the next chunk.
    pub fn push(&mut self, chunk: &str) {
        let bytes = chunk.as_bytes();
        if self.done() {
            // Past the window: only the count matters.
            let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
            let tail = memchr::memrchr(b'\n', bytes).map_or(bytes.len(), |at| bytes.len() - at - 1);
            if newlines > 0 {
                self.total_lines += newlines;
                self.pending = tail > 0;
            } else if tail > 0 {
                self.pending = true;
            }
            return;
        }
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', bytes) {
            if self.total_lines + 1 < self.request.offset {
                // Before the window: count the line without looking at it.
                self.total_lines += 1;
                self.pending = false;
            } else {
                self.append(chunk.get(start..newline).unwrap_or_default());
                self.end_line();
            }
            start = newline + 1;
            if self.done() {
                return self.push(chunk.get(start..).unwrap_or_default());
            }
        }
        self.append(chunk.get(start..).unwrap_or_default());
    }

    /// The window, or dsh's out-of-range error for an offset past the end.
    pub fn finish(mut self, display_path: &str) -> Result<Window, FsError> {
        if self.pending {
            self.end_line();
        }
        let offset = self.request.offset;
        if !self.truncated_by_bytes
            && offset > self.total_lines
            && !(self.total_lines == 0 && offset == 1)
        {
            return Err(FsError::new(
                FsErrorCode::NotFound,
                format!(
                    "offset {offset} is out of range for {} ({} lines)",
                    quoted(display_path),
                    self.total_lines
                ),
            ));
        }
        Ok(Window {
            lines: self.lines,
            total_lines: self.total_lines,
            truncated_by_bytes: self.truncated_by_bytes,
        })
    }
}

/// The longest prefix of `text` within `units` UTF-16 code units, never splitting a
/// character (dsh may split a surrogate pair; this keeps the text valid).
fn cut_utf16(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (at, ch) in text.char_indices() {
        used += ch.len_utf16();
        if used > units {
            return text.get(..at).unwrap_or(text);
        }
    }
    text
}

#[cfg(test)]
mod tests;
