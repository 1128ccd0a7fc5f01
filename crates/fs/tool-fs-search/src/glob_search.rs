//! The search behind `glob`: ripgrep's `--files --no-ignore --hidden --sort=modified` listing,
//! walked in parallel and then sorted by modification time, oldest first.

use crate::batch::{Batch, Batches, into_batches};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::SystemTime;

use dsh_tools::ToolError;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use crate::config::SearchCaps;
use crate::error;
use crate::stderr::{Stderr, WalkStyle, walk_error};
use crate::walk::{SearchRoot, StopFlag, glob_override, glob_walk, subject_kind};
use crate::workdir::to_workdir_relative;

/// One listed file: its modification time (`None` when it could not be read) and its path as
/// ripgrep prints it.
type Listed = (Option<SystemTime>, String);

/// What the walk threads share.
struct Shared<'a> {
    root: &'a SearchRoot,
    stop: &'a StopFlag,
    /// ripgrep's stderr: unreachable directories.
    stderr: &'a Stderr,
    /// Bytes of output so far (each path and its newline, as ripgrep's stdout counts them).
    bytes: AtomicUsize,
    cap: usize,
    /// Whether the listing went over the cap.
    overflowed: AtomicBool,
    found: Batches<Listed>,
}

struct Builder<'a>(&'a Shared<'a>);

impl<'s> ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self.0,
            found: Batch::new(&self.0.found),
        })
    }
}

/// One walk thread: lists into its own buffer, handed over when the thread ends.
struct Visitor<'a> {
    shared: &'a Shared<'a>,
    found: Batch<'a, Listed>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let shared = self.shared;
        if shared.stop.is_raised() || shared.overflowed.load(Ordering::Relaxed) {
            return WalkState::Quit;
        }
        // ripgrep sorts, so its single-threaded walk words the errors.
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let message = walk_error(&err, shared.root, WalkStyle::Sequential);
                shared.stderr.message(&message);
                return WalkState::Continue;
            }
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
            shared.overflowed.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        self.found.push((modified.ok(), shown));
        WalkState::Continue
    }
}

/// Every file under `path` (relative to `workdir`, a usable directory; the workdir itself
/// without one) matching `pattern`, as shown to the model (workdir-relative where possible),
/// oldest modification first; equal times (and unreadable ones, which go last) are ordered by
/// path. ripgrep's errors fail the listing as its exit 2 does, in its order: a rejected glob
/// (`SEARCH_INVALID_PATTERN`), an unreachable path, then (after the walk) unreadable
/// directories. Past `rawOutputMaxBytes` of listing it fails with `SEARCH_RAW_OUTPUT_OVERFLOW`.
pub fn list_files(
    workdir: &Path,
    (pattern, path): (&str, Option<&str>),
    caps: &SearchCaps,
    stop: &StopFlag,
) -> Result<Vec<String>, ToolError> {
    let stderr = Stderr::new(caps.stderr_max_bytes);
    let overrides =
        glob_override(workdir, pattern).map_err(|err| stderr.fatal("glob", &err.to_string()))?;
    let root = SearchRoot::resolve("glob", workdir, path, &stderr)?;
    let shared = Shared {
        root: &root,
        stop,
        stderr: &stderr,
        bytes: AtomicUsize::new(0),
        cap: caps.raw_output_max_bytes,
        overflowed: AtomicBool::new(false),
        found: Batches::default(),
    };
    glob_walk(&root, workdir, overrides)
        .build_parallel()
        .visit(&mut Builder(&shared));
    if stop.is_raised() {
        return Err(error::aborted("glob"));
    }
    if let Some(failure) = stderr.failure("glob") {
        return Err(failure);
    }
    if shared.overflowed.load(Ordering::Relaxed) {
        return Err(error::raw_output_overflow(
            "glob",
            caps.raw_output_max_bytes,
        ));
    }
    let mut listed: Vec<Listed> = into_batches(shared.found)
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
