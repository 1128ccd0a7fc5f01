//! The tail-keeping output collector (dsh's `OutputCollector`).
//!
//! Memory holds at most the last `max_bytes` of a stream, byte-exact whatever the chunking.
//! On the first overflow a spill file receives everything so far and every later chunk, so
//! the complete stream stays on disk, until it grows past `max_spill_bytes`: then the file
//! is closed and removed and only the tail is kept.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::os::fd::IntoRawFd;
use std::path::{Path, PathBuf};

use crate::spill::create_spill_file;
use crate::types::CollectedOutput;

/// One incremental read, in whole-stream byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputRead {
    /// The bytes since the requested offset (the whole window when `lossy`), as lossy UTF-8.
    pub text: String,
    /// The offset to pass to the next read: the stream's total length so far.
    pub next_offset: u64,
    /// Whether the requested offset had already slid out of the window.
    pub lossy: bool,
    /// The file holding the complete stream, when one is kept.
    pub spill_path: Option<PathBuf>,
}

/// Collects one stream. See the module docs.
#[derive(Debug)]
pub struct OutputCollector {
    label: &'static str,
    max_bytes: usize,
    max_spill_bytes: Option<u64>,
    spill_dir: Option<PathBuf>,
    window: VecDeque<u8>,
    total: u64,
    dropped: bool,
    spill_disabled: bool,
    spill_path: Option<PathBuf>,
    spill_file: Option<File>,
}

impl OutputCollector {
    /// A collector keeping `max_bytes` in memory. `max_spill_bytes: None` never spills.
    /// `label` (`stdout` or `stderr`) names spill files, created in `spill_dir` or else the
    /// process's private spill directory.
    pub fn new(
        label: &'static str,
        max_bytes: usize,
        max_spill_bytes: Option<u64>,
        spill_dir: Option<PathBuf>,
    ) -> Self {
        Self {
            label,
            max_bytes,
            max_spill_bytes,
            spill_dir,
            window: VecDeque::new(),
            total: 0,
            dropped: false,
            spill_disabled: max_spill_bytes.is_none(),
            spill_path: None,
            spill_file: None,
        }
    }

    /// Takes one chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let overflows = self.window.len() + chunk.len() > self.max_bytes;
        if !self.spill_disabled && (overflows || self.spill_file.is_some()) {
            self.spill(chunk);
        }
        let excess = (self.window.len() + chunk.len()).saturating_sub(self.max_bytes);
        if excess == 0 {
            self.window.extend(chunk);
            return;
        }
        self.dropped = true;
        if excess >= self.window.len() {
            let skip = excess - self.window.len();
            self.window.clear();
            self.window.extend(chunk.get(skip..).unwrap_or_default());
        } else {
            self.window.drain(..excess);
            self.window.extend(chunk);
        }
    }

    fn spill(&mut self, chunk: &[u8]) {
        if self.max_spill_bytes.is_some_and(|cap| self.total > cap) {
            self.discard_spill();
            return;
        }
        if let Err(error) = self.write_spill(chunk) {
            tracing::warn!(stream = self.label, %error, "cannot write the spill file; keeping the tail only");
            self.discard_spill();
        }
    }

    fn write_spill(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        let file = match self.spill_file.as_mut() {
            Some(file) => file,
            None => {
                let (path, mut file) = create_spill_file(self.spill_dir.as_deref(), self.label)?;
                self.spill_path = Some(path);
                let (head, tail) = self.window.as_slices();
                file.write_all(head)?;
                file.write_all(tail)?;
                self.spill_file.insert(file)
            }
        };
        file.write_all(chunk)
    }

    /// Stops spilling and removes the file: it can no longer hold the complete stream.
    fn discard_spill(&mut self) {
        self.spill_disabled = true;
        self.spill_file = None;
        if let Some(path) = self.spill_path.take()
            && let Err(error) = std::fs::remove_file(&path)
        {
            tracing::debug!(path = %path.display(), %error, "cannot remove a discarded spill file");
        }
    }

    /// Everything pushed since `offset` (a previous read's `next_offset`; 0 at first).
    pub fn read_from(&self, offset: u64) -> OutputRead {
        let window_start = self.total - self.window.len() as u64;
        let lossy = offset < window_start;
        let skip = if lossy {
            0
        } else {
            usize::try_from(offset - window_start).unwrap_or(usize::MAX)
        };
        OutputRead {
            text: String::from_utf8_lossy(&self.bytes_from(skip)).into_owned(),
            next_offset: self.total,
            lossy,
            spill_path: self.spill_path.clone(),
        }
    }

    fn bytes_from(&self, skip: usize) -> Vec<u8> {
        let (head, tail) = self.window.as_slices();
        let mut out = Vec::with_capacity(self.window.len().saturating_sub(skip));
        if let Some(rest) = head.get(skip..) {
            out.extend_from_slice(rest);
            out.extend_from_slice(tail);
        } else {
            out.extend_from_slice(tail.get(skip - head.len()..).unwrap_or_default());
        }
        out
    }

    /// Closes the spill file once the stream ended. A failed close stops reporting the file
    /// (it may miss its end). Idempotent.
    pub fn seal(&mut self) {
        if let Some(file) = self.spill_file.take()
            && let Err(error) = nix::unistd::close(file.into_raw_fd())
        {
            tracing::warn!(stream = self.label, %error, "closing the spill file failed; not reporting it");
            self.spill_path = None;
        }
    }

    /// Seals the spill file and returns the collected output.
    pub fn finalize(&mut self) -> CollectedOutput {
        self.seal();
        CollectedOutput {
            text: String::from_utf8_lossy(&self.bytes_from(0)).into_owned(),
            truncated: self.dropped,
            spill_path: self.spill_path.clone(),
        }
    }

    /// The total bytes pushed so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The spill file, when one is kept.
    pub fn spill_path(&self) -> Option<&Path> {
        self.spill_path.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collector(max: usize, spill: Option<u64>, dir: &Path) -> OutputCollector {
        OutputCollector::new("stdout", max, spill, Some(dir.to_path_buf()))
    }

    #[test]
    fn keeps_everything_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(10, Some(100), dir.path());
        c.push(b"hello");
        c.push(b"world");
        let out = c.finalize();
        assert_eq!(out.text, "helloworld");
        assert!(!out.truncated);
        assert_eq!(out.spill_path, None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn keeps_a_byte_exact_tail_across_uneven_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for sizes in [[1usize, 7, 64], [3, 333, 5], [999, 1, 2]] {
            let mut c = collector(50, None, dir.path());
            let mut at = 0;
            let mut i = 0;
            while at < data.len() {
                let end = (at + sizes[i % 3]).min(data.len());
                c.push(&data[at..end]);
                at = end;
                i += 1;
            }
            let out = c.finalize();
            assert_eq!(out.text.as_bytes(), &data[data.len() - 50..]);
            assert!(out.truncated);
            assert_eq!(out.spill_path, None);
        }
    }

    #[test]
    fn keeps_the_tail_of_one_oversized_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(4, None, dir.path());
        c.push(b"0123456789");
        assert_eq!(c.finalize().text, "6789");
    }

    #[test]
    fn exactly_at_the_budget_is_not_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(4, Some(100), dir.path());
        c.push(b"ab");
        c.push(b"cd");
        let out = c.finalize();
        assert_eq!((out.text.as_str(), out.truncated), ("abcd", false));
        assert_eq!(out.spill_path, None);
    }

    #[test]
    fn spills_the_whole_stream_on_overflow() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(4, Some(100), dir.path());
        c.push(b"abc");
        c.push(b"def");
        c.push(b"gh");
        let out = c.finalize();
        assert_eq!(out.text, "efgh");
        assert!(out.truncated);
        let path = out.spill_path.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdefgh");
    }

    #[test]
    fn reads_are_incremental_and_flag_lost_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(6, Some(100), dir.path());
        c.push(b"abc");
        let first = c.read_from(0);
        assert_eq!(
            (first.text.as_str(), first.next_offset, first.lossy),
            ("abc", 3, false)
        );
        c.push(b"de");
        let second = c.read_from(first.next_offset);
        assert_eq!((second.text.as_str(), second.lossy), ("de", false));
        c.push(b"fghij");
        let within = c.read_from(second.next_offset);
        assert_eq!((within.text.as_str(), within.lossy), ("fghij", false));
        c.push(b"klmnopq");
        let third = c.read_from(within.next_offset);
        assert_eq!((third.text.as_str(), third.lossy), ("lmnopq", true));
        assert!(third.spill_path.is_some());
        let fourth = c.read_from(third.next_offset);
        assert_eq!((fourth.text.as_str(), fourth.lossy), ("", false));
    }

    #[test]
    fn discards_a_spill_past_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(4, Some(10), dir.path());
        c.push(b"abcdef");
        let path = c.spill_path().unwrap().to_path_buf();
        assert!(path.exists());
        c.push(b"ghijk");
        assert_eq!(c.spill_path(), None);
        assert!(!path.exists());
        c.push(b"lm");
        let out = c.finalize();
        assert_eq!((out.text.as_str(), out.truncated), ("jklm", true));
        assert_eq!(out.spill_path, None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn no_spill_when_the_first_overflow_is_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(4, Some(10), dir.path());
        c.push(b"0123456789abc");
        let out = c.finalize();
        assert_eq!((out.text.as_str(), out.spill_path), ("9abc", None));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_unusable_spill_dir_keeps_the_tail() {
        let mut c = OutputCollector::new(
            "stderr",
            2,
            Some(100),
            Some(PathBuf::from("/nonexistent-dsh-spill-dir")),
        );
        c.push(b"abcd");
        let out = c.finalize();
        assert_eq!(
            (out.text.as_str(), out.truncated, out.spill_path),
            ("cd", true, None)
        );
    }

    #[test]
    fn split_utf8_at_the_head_is_lossy_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = collector(3, None, dir.path());
        c.push("aé€".as_bytes());
        assert_eq!(c.finalize().text, "€");
        let mut c = collector(4, None, dir.path());
        c.push("é€".as_bytes());
        assert_eq!(c.finalize().text, "\u{fffd}€");
    }
}
