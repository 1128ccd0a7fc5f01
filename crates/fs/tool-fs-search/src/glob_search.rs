//! The search behind `glob`: ripgrep's `--files --no-ignore --hidden --sort=modified` listing,
//! walked in parallel and then sorted by modification time, oldest first.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use dsh_tools::ToolError;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use crate::error;
use crate::walk::{SearchRoot, StopFlag, glob_walk, subject_kind};
use crate::workdir::to_workdir_relative;

/// One listed file: its modification time (`None` when it could not be read) and its path as
/// ripgrep prints it.
type Listed = (Option<SystemTime>, String);

/// What the walk threads share.
struct Shared<'a> {
    root: &'a SearchRoot,
    stop: &'a StopFlag,
    /// Bytes of output so far (each path and its newline, as ripgrep's stdout counts them).
    bytes: AtomicUsize,
    cap: usize,
    /// The byte count that went over the cap, once one did.
    overflow: AtomicUsize,
    found: Mutex<Vec<Vec<Listed>>>,
}

struct Builder<'a>(&'a Shared<'a>);

impl<'s> ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self.0,
            found: Vec::new(),
        })
    }
}

/// One walk thread: lists into its own buffer, handed over when the thread ends.
struct Visitor<'a> {
    shared: &'a Shared<'a>,
    found: Vec<Listed>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let shared = self.shared;
        if shared.stop.is_raised() || shared.overflow.load(Ordering::Relaxed) > 0 {
            return WalkState::Quit;
        }
        // Unreadable entries are skipped, as ripgrep skips them.
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        let Some(explicit) = subject_kind(&entry) else {
            return WalkState::Continue;
        };
        let modified = if explicit {
            std::fs::metadata(entry.path()).and_then(|meta| meta.modified())
        } else {
            entry
                .metadata()
                .map_err(std::io::Error::other)
                .and_then(|meta| meta.modified())
        };
        let shown = shared.root.display(entry.path());
        let total = shared.bytes.fetch_add(shown.len() + 1, Ordering::Relaxed) + shown.len() + 1;
        if total > shared.cap {
            shared.overflow.store(total, Ordering::Relaxed);
            return WalkState::Quit;
        }
        self.found.push((modified.ok(), shown));
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

/// Every file under `root` matching `pattern`, as shown to the model (workdir-relative where
/// possible), oldest modification first; equal times (and unreadable ones, which go last) are
/// ordered by path. Fails with `SEARCH_INVALID_PATTERN` for a glob ripgrep rejects and with
/// `SEARCH_RAW_OUTPUT_OVERFLOW` past `cap` bytes of listing.
pub fn list_files(
    root: &SearchRoot,
    workdir: &Path,
    pattern: &str,
    cap: usize,
    stop: &StopFlag,
) -> Result<Vec<String>, ToolError> {
    let walk = glob_walk(root, workdir, pattern)
        .map_err(|cause| error::rejected("glob", &cause.to_string()))?;
    let shared = Shared {
        root,
        stop,
        bytes: AtomicUsize::new(0),
        cap,
        overflow: AtomicUsize::new(0),
        found: Mutex::new(Vec::new()),
    };
    walk.build_parallel().visit(&mut Builder(&shared));
    let overflow = shared.overflow.load(Ordering::Relaxed);
    if overflow > 0 {
        return Err(error::raw_output_overflow("glob", overflow, cap));
    }
    if stop.is_raised() {
        return Err(error::aborted("glob"));
    }
    let mut listed: Vec<Listed> = shared
        .found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .flatten()
        .map(|(modified, shown)| (modified, to_workdir_relative(&shown, workdir)))
        .collect();
    listed.sort_unstable_by(
        |(a_time, a_path), (b_time, b_path)| match (a_time, b_time) {
            (Some(a), Some(b)) => a.cmp(b).then_with(|| a_path.cmp(b_path)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a_path.cmp(b_path),
        },
    );
    Ok(listed.into_iter().map(|(_, path)| path).collect())
}
