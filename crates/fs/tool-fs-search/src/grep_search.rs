//! The search behind `grep`: ripgrep's default search (`rg --json --regexp=<pattern>`) in
//! process. A parallel walk with ripgrep's filters feeds one searcher per thread; each file's
//! matches are collected together and in line order.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::ToolError;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use crate::error;
use crate::value::{GrepMatch, NOT_UTF8_LINE};
use crate::walk::{SearchRoot, StopFlag, grep_walk, subject_kind};
use crate::workdir::to_workdir_relative;

/// Explicit files up to this size are read whole and searched as one slice, as ripgrep
/// searches them through a memory map (binary data in them is then kept, not converted).
const WHOLE_FILE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The matcher ripgrep builds for a pattern: Rust regex syntax, case-sensitive, `^`/`$` at
/// line boundaries, no match across a line end. A rejected pattern is ripgrep's error text.
pub fn build_matcher(pattern: &str) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_smart(false)
        .case_insensitive(false)
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .dot_matches_new_line(false)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|cause| error::rejected("grep", &cause.to_string()))
}

/// The matches of one file.
struct FileMatches {
    path: String,
    lines: Vec<(u64, String)>,
}

/// What the walk threads share.
struct Shared<'a> {
    root: &'a SearchRoot,
    workdir: &'a Path,
    stop: &'a StopFlag,
    matcher: RegexMatcher,
    /// Bytes of collected paths and lines so far.
    bytes: AtomicUsize,
    cap: usize,
    /// The byte count that went over the cap, once one did.
    overflow: AtomicUsize,
    found: Mutex<Vec<Vec<FileMatches>>>,
}

/// Makes one visitor per walk thread, each with its own copy of the configured searcher.
struct Builder<'a>(&'a Shared<'a>, Searcher);

impl<'s> ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self.0,
            searcher: self.1.clone(),
            matcher: self.0.matcher.clone(),
            explicit_mode: false,
            found: Vec::new(),
        })
    }
}

/// One walk thread: its own searcher, matcher and result buffer.
struct Visitor<'a> {
    shared: &'a Shared<'a>,
    searcher: Searcher,
    matcher: RegexMatcher,
    /// Whether the searcher is set for an explicit path (convert binary data rather than stop).
    explicit_mode: bool,
    found: Vec<FileMatches>,
}

impl Visitor<'_> {
    fn set_explicit(&mut self, explicit: bool) {
        if self.explicit_mode != explicit {
            self.explicit_mode = explicit;
            self.searcher.set_binary_detection(if explicit {
                BinaryDetection::convert(b'\x00')
            } else {
                BinaryDetection::quit(b'\x00')
            });
        }
    }

    /// Searches one file; unreadable files are skipped, as ripgrep skips them.
    fn search(&mut self, entry: &DirEntry, explicit: bool) {
        // An explicit path may be anything: only regular files are opened, since opening a
        // FIFO blocks and a device may never end. (Walked entries are regular files already.)
        let whole = if explicit {
            match std::fs::metadata(entry.path()) {
                Ok(meta) if meta.is_file() => meta.len() <= WHOLE_FILE_MAX_BYTES,
                _ => return,
            }
        } else {
            false
        };
        let Ok(file) = File::open(entry.path()) else {
            return;
        };
        self.set_explicit(explicit);
        let mut sink = Collect {
            shared: self.shared,
            entry_path: entry.path(),
            found: None,
            bytes: 0,
        };
        let mut reader = Interruptible {
            inner: file,
            stop: self.shared.stop,
        };
        // A read error ends this file's search; what it found so far is kept, as ripgrep
        // printed it.
        if whole {
            let mut contents = Vec::new();
            if reader.read_to_end(&mut contents).is_err() {
                return;
            }
            let _ = self
                .searcher
                .search_slice(&self.matcher, &contents, &mut sink);
        } else {
            let _ = self
                .searcher
                .search_reader(&self.matcher, reader, &mut sink);
        }
        self.keep(sink);
    }

    fn keep(&mut self, sink: Collect<'_, '_>) {
        if let Some(found) = sink.found {
            self.shared.bytes.fetch_add(sink.bytes, Ordering::Relaxed);
            self.found.push(found);
        }
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let shared = self.shared;
        if shared.stop.is_raised() || shared.overflow.load(Ordering::Relaxed) > 0 {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if let Some(explicit) = subject_kind(&entry) {
            self.search(&entry, explicit);
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        if self.found.is_empty() {
            return;
        }
        let mut found = self
            .shared
            .found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        found.push(std::mem::take(&mut self.found));
    }
}

/// A reader that fails once the search is asked to stop, so a long file ends promptly.
struct Interruptible<'a, R> {
    inner: R,
    stop: &'a StopFlag,
}

impl<R: Read> Read for Interruptible<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_raised() {
            return Err(std::io::Error::other("the search was stopped"));
        }
        self.inner.read(buf)
    }
}

/// Collects one file's matched lines (as ripgrep's `--json` reports them: the whole line, one
/// trailing `\r?\n` removed, or the not-UTF-8 placeholder).
struct Collect<'a, 'p> {
    shared: &'a Shared<'a>,
    entry_path: &'p Path,
    /// Created on the first match, so files without one cost no allocation.
    found: Option<FileMatches>,
    bytes: usize,
}

impl Sink for Collect<'_, '_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        mat: &SinkMatch<'_>,
    ) -> Result<bool, std::io::Error> {
        let shared = self.shared;
        if shared.stop.is_raised() {
            return Ok(false);
        }
        let line = match std::str::from_utf8(mat.bytes()) {
            Ok(text) => without_terminator(text).to_owned(),
            Err(_) => NOT_UTF8_LINE.to_owned(),
        };
        let found = self.found.get_or_insert_with(|| FileMatches {
            path: to_workdir_relative(&shared.root.display(self.entry_path), shared.workdir),
            lines: Vec::new(),
        });
        self.bytes += found.path.len() + line.len() + 1;
        let total = shared.bytes.load(Ordering::Relaxed) + self.bytes;
        if total > shared.cap {
            shared.overflow.fetch_max(total, Ordering::Relaxed);
            return Ok(false);
        }
        found
            .lines
            .push((mat.line_number().unwrap_or_default(), line));
        Ok(true)
    }
}

/// `line` without one trailing `\n` or `\r\n` (a lone `\r` stays, as dsh's `/\r?\n$/` keeps
/// it).
fn without_terminator(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line,
    }
}

/// Every match of `pattern` under `root` (filtered by `include`), each file's matches together
/// and in line order, files in the order the walk finished them. Fails with
/// `SEARCH_INVALID_PATTERN` for a regex or glob ripgrep rejects and with
/// `SEARCH_RAW_OUTPUT_OVERFLOW` past `cap` bytes of collected paths and lines.
pub fn search_files(
    root: &SearchRoot,
    workdir: &Path,
    pattern: &str,
    include: Option<&str>,
    cap: usize,
    stop: &StopFlag,
) -> Result<Vec<GrepMatch>, ToolError> {
    let matcher = build_matcher(pattern)?;
    let walk = grep_walk(root, workdir, include)
        .map_err(|cause| error::rejected("grep", &cause.to_string()))?;
    let searcher = SearcherBuilder::new()
        .line_number(true)
        .multi_line(false)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    let shared = Shared {
        root,
        workdir,
        stop,
        matcher,
        bytes: AtomicUsize::new(0),
        cap,
        overflow: AtomicUsize::new(0),
        found: Mutex::new(Vec::new()),
    };
    walk.build_parallel().visit(&mut Builder(&shared, searcher));
    let overflow = shared.overflow.load(Ordering::Relaxed);
    if overflow > 0 {
        return Err(error::raw_output_overflow("grep", overflow, cap));
    }
    if stop.is_raised() {
        return Err(error::aborted("grep"));
    }
    let files = shared
        .found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let count = files.iter().flatten().map(|file| file.lines.len()).sum();
    let mut matches = Vec::with_capacity(count);
    for file in files.into_iter().flatten() {
        for (line_number, line) in file.lines {
            matches.push(GrepMatch {
                path: file.path.clone(),
                line_number,
                line,
            });
        }
    }
    Ok(matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_terminator_is_removed() {
        assert_eq!(without_terminator("a\r\n"), "a");
        assert_eq!(without_terminator("a\n"), "a");
        assert_eq!(without_terminator("a\r"), "a\r");
        assert_eq!(without_terminator("a\n\n"), "a\n");
        assert_eq!(without_terminator(""), "");
    }

    #[test]
    fn rejected_patterns_carry_ripgreps_text() {
        let error = build_matcher("(").unwrap_err();
        assert_eq!(error.code(), Some("SEARCH_INVALID_PATTERN"));
        assert!(
            error
                .message()
                .starts_with("grep pattern rejected by ripgrep: regex parse error:")
        );
        assert!(build_matcher(r"\bword\b").is_ok());
    }
}
