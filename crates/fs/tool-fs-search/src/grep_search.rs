//! The search behind `grep`: ripgrep's default search (`rg --json --regexp=<pattern>`) in
//! process. A parallel walk with ripgrep's filters feeds one searcher per thread; each file's
//! matches are collected together and in line order.

use crate::batch::{Batch, Batches, into_batches};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use dsh_tools::ToolError;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use crate::config::SearchCaps;
use crate::error;
use crate::stderr::{NOTHING_SEARCHED, Stderr, WalkStyle, file_error, walk_error};
use crate::value::{GrepMatch, NOT_UTF8_LINE};
use crate::walk::{SearchRoot, StopFlag, grep_walk, include_override, subject_kind};
use crate::workdir::to_workdir_relative;

/// Explicit files up to this size are read whole and searched as one slice, as ripgrep
/// searches them through a memory map (binary data in them is then kept, not converted).
const WHOLE_FILE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The matcher ripgrep 15 builds for a pattern: Rust regex syntax, case-sensitive, `^`/`$` at
/// line boundaries, no match across a line end, and a NUL byte banned (binary detection makes
/// it unmatchable). A rejected pattern is the message ripgrep prints, with its hints.
pub fn build_matcher(pattern: &str) -> Result<RegexMatcher, String> {
    RegexMatcherBuilder::new()
        .case_smart(false)
        .case_insensitive(false)
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .dot_matches_new_line(false)
        .line_terminator(Some(b'\n'))
        .ban_byte(Some(b'\x00'))
        .build(pattern)
        .map_err(|cause| with_hints(cause.to_string()))
}

/// ripgrep 15's hints after a rejected pattern (`suggest_multiline`, `suggest_text`, then
/// `suggest_pcre2`: the binary dsh ships is built with PCRE2).
fn with_hints(message: String) -> String {
    let mut message = message;
    if message.contains("the literal") && message.contains("not allowed") {
        message.push_str(
            "\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\n\
             When multiline mode is enabled, new line characters can be matched.",
        );
    }
    if message.contains("pattern contains \"\\0\"") {
        message.push_str(
            "\n\nConsider enabling text mode with the --text flag (or -a for short). Otherwise,\n\
             binary detection is enabled and matching a NUL byte is impossible.",
        );
    }
    if message.contains("backreferences") || message.contains("look-around") {
        message.push_str(
            "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\n\
             and look-around.",
        );
    }
    message
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
    /// ripgrep's stderr: unreachable directories, unreadable files.
    stderr: &'a Stderr,
    /// How the walk's errors are worded.
    style: WalkStyle,
    /// Whether any file passed the filters (ripgrep's `searched`).
    searched: AtomicBool,
    /// Bytes of collected paths and lines so far.
    bytes: AtomicUsize,
    cap: usize,
    /// Whether the collected bytes went over the cap.
    overflowed: AtomicBool,
    found: Batches<FileMatches>,
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
            found: Batch::new(&self.0.found),
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
    found: Batch<'a, FileMatches>,
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

    /// Searches one file. A file that cannot be opened or read is reported as ripgrep reports
    /// it (which fails the search once it has finished).
    fn search(&mut self, entry: &DirEntry, explicit: bool) {
        let shared = self.shared;
        let report = |cause: &std::io::Error| {
            if !shared.stop.is_raised() {
                shared
                    .stderr
                    .message(&file_error(shared.root, entry.path(), cause));
            }
        };
        // An explicit path may be anything: only regular files are opened, since opening a
        // FIFO blocks and a device may never end. (Walked entries are regular files already.)
        let whole = if explicit {
            match std::fs::metadata(entry.path()) {
                Ok(meta) if meta.is_file() => meta.len() <= WHOLE_FILE_MAX_BYTES,
                Ok(_) => return,
                Err(cause) => return report(&cause),
            }
        } else {
            false
        };
        let file = match File::open(entry.path()) {
            Ok(file) => file,
            Err(cause) => return report(&cause),
        };
        self.set_explicit(explicit);
        let mut sink = Collect {
            shared,
            entry_path: entry.path(),
            found: None,
            bytes: 0,
        };
        let mut reader = Interruptible {
            inner: file,
            stop: shared.stop,
        };
        let searched = if whole {
            let mut contents = Vec::new();
            match reader.read_to_end(&mut contents) {
                Ok(_) => self
                    .searcher
                    .search_slice(&self.matcher, &contents, &mut sink),
                Err(cause) => Err(cause),
            }
        } else {
            self.searcher
                .search_reader(&self.matcher, reader, &mut sink)
        };
        if let Err(cause) = searched {
            report(&cause);
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
        if shared.stop.is_raised() || shared.overflowed.load(Ordering::Relaxed) {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let message = walk_error(&err, shared.root, shared.style);
                shared.stderr.message(&message);
                return WalkState::Continue;
            }
        };
        if let Some(explicit) = subject_kind(&entry) {
            shared.searched.store(true, Ordering::Relaxed);
            self.search(&entry, explicit);
        }
        WalkState::Continue
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
            shared.overflowed.store(true, Ordering::Relaxed);
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

/// Every match of `pattern` under `path` (relative to `workdir`, a usable directory; the
/// workdir itself without one) among the files `include` admits, each file's matches together
/// and in line order; the order of files follows the parallel walk's threads and is not
/// deterministic (as ripgrep's). ripgrep's errors fail the
/// search as its exit 2 does, in its order: a rejected `include`, then a rejected pattern
/// (`SEARCH_INVALID_PATTERN` or `SEARCH_FAILED`), then an unreachable path, then (after the
/// walk) unreadable entries and, without `path`, no file searched at all. Past
/// `rawOutputMaxBytes` of collected paths and lines it fails with `SEARCH_RAW_OUTPUT_OVERFLOW`.
pub fn search_files(
    workdir: &Path,
    (pattern, path, include): (&str, Option<&str>, Option<&str>),
    caps: &SearchCaps,
    stop: &StopFlag,
) -> Result<Vec<GrepMatch>, ToolError> {
    let stderr = Stderr::new(caps.stderr_max_bytes);
    let include =
        include_override(workdir, include).map_err(|err| stderr.fatal("grep", &err.to_string()))?;
    let matcher = build_matcher(pattern).map_err(|message| stderr.fatal("grep", &message))?;
    let root = SearchRoot::resolve("grep", workdir, path, &stderr)?;
    // ripgrep walks a directory in parallel and anything else with its single-threaded walk.
    let style = if root.path().is_dir() {
        WalkStyle::Parallel
    } else {
        WalkStyle::Sequential
    };
    let searcher = SearcherBuilder::new()
        .line_number(true)
        .multi_line(false)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    let shared = Shared {
        root: &root,
        workdir,
        stop,
        matcher,
        stderr: &stderr,
        style,
        searched: AtomicBool::new(false),
        bytes: AtomicUsize::new(0),
        cap: caps.raw_output_max_bytes,
        overflowed: AtomicBool::new(false),
        found: Batches::default(),
    };
    grep_walk(&root, workdir, include)
        .build_parallel()
        .visit(&mut Builder(&shared, searcher));
    if stop.is_raised() {
        return Err(error::aborted("grep"));
    }
    if root.is_implicit() && !shared.searched.load(Ordering::Relaxed) {
        stderr.message(NOTHING_SEARCHED);
    }
    if let Some(failure) = stderr.failure("grep") {
        return Err(failure);
    }
    if shared.overflowed.load(Ordering::Relaxed) {
        return Err(error::raw_output_overflow(
            "grep",
            caps.raw_output_max_bytes,
        ));
    }
    let files = into_batches(shared.found);
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
        assert_eq!(
            build_matcher("(").unwrap_err(),
            "regex parse error:\n    (?:()\n    ^\nerror: unclosed group"
        );
        assert!(build_matcher(r"\bword\b").is_ok());
        // ripgrep 15's hints (ripgrep 13 quoted the literal as '"\n"').
        assert_eq!(
            build_matcher("a\nb").unwrap_err(),
            "the literal \"\\n\" is not allowed in a regex\n\nConsider enabling multiline mode \
             with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new \
             line characters can be matched."
        );
        assert_eq!(
            build_matcher("a\\nb").unwrap_err(),
            build_matcher("a\nb").unwrap_err()
        );
        // ripgrep 15 bans a NUL (ripgrep 13 searched for it and found nothing).
        assert_eq!(
            build_matcher(r"\x00").unwrap_err(),
            "pattern contains \"\\0\" but it is impossible to match\n\nConsider enabling text \
             mode with the --text flag (or -a for short). Otherwise,\nbinary detection is \
             enabled and matching a NUL byte is impossible."
        );
        let backreference = build_matcher(r"(a)\1").unwrap_err();
        assert!(
            backreference.ends_with(
                "error: backreferences are not supported\n\nConsider enabling PCRE2 with the \
                 --pcre2 flag, which can handle backreferences\nand look-around."
            ),
            "{backreference}"
        );
    }
}
