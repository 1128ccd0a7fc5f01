//! ripgrep's standard error as dsh reads it. ripgrep 15 (the binary dsh ships) prints an
//! `rg: `-prefixed message for a rejected pattern or glob, a path it cannot reach, an entry it
//! cannot read, and a search with no path argument that searched no file; any of them makes it
//! exit 2, and dsh then fails the call with the trimmed stderr. dsh's subprocess seam keeps the
//! last `stderrMaxBytes` bytes, so a long stderr is quoted from its tail with
//! ` [stderr truncated]` appended.

use std::path::Path;
use std::sync::Mutex;

use dsh_tools::ToolError;

use crate::error;
use crate::walk::SearchRoot;

/// What ripgrep prints when a search without a path argument searched no file
/// (`eprint_nothing_searched`).
pub const NOTHING_SEARCHED: &str = "No files were searched, which means ripgrep probably applied a \
                                    filter you didn't expect.\nRunning with --debug will show \
                                    why files are being skipped.";

/// The standard error of one search, shared by its walk threads.
#[derive(Debug)]
pub struct Stderr {
    /// Bytes kept (dsh's `stderrMaxBytes`).
    cap: usize,
    tail: Mutex<Tail>,
}

/// The written bytes: at least the last `cap` of them.
#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    total: usize,
}

impl Stderr {
    /// An empty stderr keeping the last `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            tail: Mutex::new(Tail::default()),
        }
    }

    fn tail(&self) -> std::sync::MutexGuard<'_, Tail> {
        dsh_kernel::sync::lock(&self.tail)
    }

    /// Prints `rg: <message>` and a newline, as ripgrep's `err_message!` does (which also sets
    /// the flag that makes ripgrep exit 2).
    pub fn message(&self, message: &str) {
        let line = format!("rg: {message}\n");
        let mut tail = self.tail();
        tail.total += line.len();
        tail.bytes.extend_from_slice(line.as_bytes());
        // Bounded memory: drop the head once twice the cap is held.
        let keep = self.cap.max(1);
        if tail.bytes.len() > keep.saturating_mul(2) {
            let cut = tail.bytes.len() - keep;
            tail.bytes.drain(..cut);
        }
    }

    /// Whether anything was printed (ripgrep then exits 2).
    pub fn errored(&self) -> bool {
        self.tail().total > 0
    }

    /// dsh's `stderrExcerpt`: the retained text trimmed, with ` [stderr truncated]` appended
    /// when bytes were dropped (an empty text stays empty).
    pub fn excerpt(&self) -> String {
        let tail = self.tail();
        let start = tail.bytes.len().saturating_sub(self.cap);
        let kept = tail.bytes.get(start..).unwrap_or_default();
        let text = String::from_utf8_lossy(kept);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else if tail.total > kept.len() {
            format!("{text} [stderr truncated]")
        } else {
            text.to_owned()
        }
    }

    /// The failure dsh derives from ripgrep's exit 2 with this stderr, when anything was
    /// printed.
    pub fn failure(&self, tool: &str) -> Option<ToolError> {
        self.errored()
            .then(|| error::exit_failure(tool, &self.excerpt()))
    }

    /// A fatal error: ripgrep prints `message` and exits 2 at once.
    pub fn fatal(&self, tool: &str, message: &str) -> ToolError {
        self.message(message);
        error::exit_failure(tool, &self.excerpt())
    }
}

/// Which of ripgrep's walks a path error comes from, which decides its wording. The sequential
/// walk (ripgrep's when it sorts, as `glob` does, or searches one file) reports through
/// `walkdir`: `<path>: IO error for operation on <path>: <cause>`. The parallel walk (`grep`
/// over a directory) reports `<path>: <cause>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkStyle {
    /// ripgrep's single-threaded walk.
    Sequential,
    /// ripgrep's parallel walk.
    Parallel,
}

/// How ripgrep prints `err`, an error of the walk under `root`, with its paths as ripgrep
/// shows them (under the path argument as written, or under `./` without one).
pub fn walk_error(err: &ignore::Error, root: &SearchRoot, style: WalkStyle) -> String {
    use ignore::Error as E;
    match err {
        E::Partial(errors) => errors
            .iter()
            .map(|err| walk_error(err, root, style))
            .collect::<Vec<_>>()
            .join("\n"),
        E::WithLineNumber { line, err } => format!("line {line}: {}", walk_error(err, root, style)),
        E::WithPath { path, err } => {
            let shown = root.error_display(path);
            match (style, io_cause(err)) {
                (WalkStyle::Sequential, Some(cause)) => {
                    format!("{shown}: IO error for operation on {shown}: {cause}")
                }
                _ => format!("{shown}: {}", walk_error(err, root, style)),
            }
        }
        E::WithDepth { err, .. } => walk_error(err, root, style),
        E::Loop { ancestor, child } => format!(
            "File system loop found: {} points to an ancestor {}",
            root.error_display(child),
            root.error_display(ancestor)
        ),
        other => other.to_string(),
    }
}

/// The I/O error `err` wraps, through any depth annotations.
fn io_cause(err: &ignore::Error) -> Option<&std::io::Error> {
    match err {
        ignore::Error::Io(cause) => Some(cause),
        ignore::Error::WithDepth { err, .. } => io_cause(err),
        _ => None,
    }
}

/// How ripgrep reports a file it could not open or read: `<path>: <cause>`, the path as its
/// results show it.
pub fn file_error(root: &SearchRoot, path: &Path, cause: &std::io::Error) -> String {
    format!("{}: {cause}", root.display(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_prefixed_and_the_tail_is_kept() {
        let stderr = Stderr::new(100);
        assert!(!stderr.errored());
        assert!(stderr.failure("grep").is_none());
        stderr.message("a: Permission denied (os error 13)");
        stderr.message("b: Permission denied (os error 13)");
        assert_eq!(
            stderr.failure("grep").unwrap().message(),
            "grep search failed (exit 2): rg: a: Permission denied (os error 13)\nrg: b: \
             Permission denied (os error 13)"
        );
        let small = Stderr::new(10);
        for _ in 0..100 {
            small.message("0123456789");
        }
        // The last ten bytes: the tail of a message and its newline.
        assert_eq!(small.excerpt(), "123456789 [stderr truncated]");
        let glob = Stderr::new(65536).fatal("glob", "error parsing glob '[': x");
        assert_eq!(glob.code(), Some(error::codes::SEARCH_INVALID_PATTERN));
        assert_eq!(
            glob.message(),
            "glob pattern rejected by ripgrep: rg: error parsing glob '[': x"
        );
    }

    #[test]
    fn walk_errors_are_worded_as_ripgreps_walks_word_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let stderr = Stderr::new(100);
        let implicit = SearchRoot::resolve("grep", dir.path(), None, &stderr).unwrap();
        let explicit = SearchRoot::resolve("grep", dir.path(), Some("sub"), &stderr).unwrap();
        let denied = || ignore::Error::WithDepth {
            depth: 2,
            err: Box::new(ignore::Error::WithPath {
                path: dir.path().join("sub/locked"),
                err: Box::new(ignore::Error::Io(std::io::Error::from_raw_os_error(13))),
            }),
        };
        assert_eq!(
            walk_error(&denied(), &implicit, WalkStyle::Parallel),
            "./sub/locked: Permission denied (os error 13)"
        );
        assert_eq!(
            walk_error(&denied(), &explicit, WalkStyle::Sequential),
            "sub/locked: IO error for operation on sub/locked: Permission denied (os error 13)"
        );
        let cause = std::io::Error::from_raw_os_error(13);
        assert_eq!(
            file_error(&implicit, &dir.path().join("sub/a.txt"), &cause),
            "sub/a.txt: Permission denied (os error 13)"
        );
    }
}
