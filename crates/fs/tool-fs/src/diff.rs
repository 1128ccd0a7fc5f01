//! Diff metadata of `write` and `edit` (dsh's `computeHunkDiffs`): one entry per hunk with
//! three lines of context, the old side `null` when it has no lines.
//!
//! The hunks are jsdiff's (`structuredPatch` over `diffLines`), which dsh persists in
//! `tool/result` metadata: the same forward Myers search, preferring a removal over an
//! addition on ties, the same line tokens (a line ends at `\n`; a lone `\r` stays inside it),
//! and the same rule for merging changes at most six equal lines apart. So a log written here
//! carries the hunks dsh's would.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;
/// How long the search may run before the diff settles for "all old lines replaced by all new
/// ones" (a pathological pair of large files; dsh has no such bound and would keep going).
const DIFF_BUDGET: Duration = Duration::from_millis(500);

/// What a run of lines is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Added,
    Removed,
}

/// A node of the search's persistent list of runs (newest first through `previous`).
#[derive(Debug, Clone, Copy)]
struct Run {
    count: usize,
    kind: Kind,
    previous: Option<usize>,
}

/// A furthest-reaching path on one diagonal: the last old line consumed and its runs.
#[derive(Debug, Clone, Copy)]
struct Path {
    old_pos: isize,
    last: Option<usize>,
}

/// The search state: the runs, shared between paths.
struct Search<'a> {
    old: &'a [&'a str],
    new: &'a [&'a str],
    runs: Vec<Run>,
}

impl Search<'_> {
    /// `path` extended by one added or removed line (jsdiff's `addToPath`).
    fn step(&mut self, path: Path, kind: Kind) -> Path {
        let old_pos = path.old_pos + isize::from(kind == Kind::Removed);
        let run = match path.last.and_then(|last| self.runs.get(last).copied()) {
            Some(last) if last.kind == kind => Run {
                count: last.count + 1,
                kind,
                previous: last.previous,
            },
            _ => Run {
                count: 1,
                kind,
                previous: path.last,
            },
        };
        self.runs.push(run);
        Path {
            old_pos,
            last: Some(self.runs.len() - 1),
        }
    }

    /// Follows the diagonal while lines agree (jsdiff's `extractCommon`); returns the new
    /// position.
    fn follow(&mut self, path: &mut Path, diagonal: isize) -> isize {
        let (old_len, new_len) = (self.old.len() as isize, self.new.len() as isize);
        let mut old_pos = path.old_pos;
        let mut new_pos = old_pos - diagonal;
        let mut common = 0;
        while new_pos + 1 < new_len
            && old_pos + 1 < old_len
            && self.old.get((old_pos + 1) as usize) == self.new.get((new_pos + 1) as usize)
        {
            old_pos += 1;
            new_pos += 1;
            common += 1;
        }
        if common > 0 {
            self.runs.push(Run {
                count: common,
                kind: Kind::Same,
                previous: path.last,
            });
            path.last = Some(self.runs.len() - 1);
        }
        path.old_pos = old_pos;
        new_pos
    }

    /// The runs of `path`, oldest first.
    fn runs_of(&self, mut last: Option<usize>) -> Vec<(Kind, usize)> {
        let mut out = Vec::new();
        while let Some(run) = last.and_then(|at| self.runs.get(at)) {
            out.push((run.kind, run.count));
            last = run.previous;
        }
        out.reverse();
        out
    }
}

/// jsdiff's `diffLines` over tokens: the runs from `old` to `new`, or `None` past the budget.
fn line_runs(old: &[&str], new: &[&str]) -> Option<Vec<(Kind, usize)>> {
    let (old_len, new_len) = (old.len() as isize, new.len() as isize);
    let mut search = Search {
        old,
        new,
        runs: Vec::new(),
    };
    let max_edit = old_len + new_len;
    let offset = max_edit + 1;
    let slot = |diagonal: isize| (diagonal + offset) as usize;
    let mut best: Vec<Option<Path>> = vec![None; (2 * offset + 1) as usize];
    let mut start = Path {
        old_pos: -1,
        last: None,
    };
    let new_pos = search.follow(&mut start, 0);
    if start.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
        return Some(search.runs_of(start.last));
    }
    *best.get_mut(slot(0))? = Some(start);
    let deadline = Instant::now() + DIFF_BUDGET;
    let (mut min_diagonal, mut max_diagonal) = (isize::MIN, isize::MAX);
    for edit_length in 1..=max_edit {
        if Instant::now() > deadline {
            return None;
        }
        let mut diagonal = min_diagonal.max(-edit_length);
        while diagonal <= max_diagonal.min(edit_length) {
            let remove_path = best.get_mut(slot(diagonal - 1))?.take();
            let add_path = *best.get(slot(diagonal + 1))?;
            let can_add =
                add_path.is_some_and(|path| (0..new_len).contains(&(path.old_pos - diagonal)));
            let can_remove = remove_path.is_some_and(|path| path.old_pos + 1 < old_len);
            let base = match (remove_path, add_path) {
                (Some(remove), Some(add))
                    if can_add && (!can_remove || remove.old_pos < add.old_pos) =>
                {
                    search.step(add, Kind::Added)
                }
                (_, Some(add)) if can_add && !can_remove => search.step(add, Kind::Added),
                (Some(remove), _) if can_remove => search.step(remove, Kind::Removed),
                _ => {
                    *best.get_mut(slot(diagonal))? = None;
                    diagonal += 2;
                    continue;
                }
            };
            let mut base = base;
            let new_pos = search.follow(&mut base, diagonal);
            if base.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
                return Some(search.runs_of(base.last));
            }
            *best.get_mut(slot(diagonal))? = Some(base);
            if base.old_pos + 1 >= old_len {
                max_diagonal = max_diagonal.min(diagonal - 1);
            }
            if new_pos + 1 >= new_len {
                min_diagonal = min_diagonal.max(diagonal + 1);
            }
            diagonal += 2;
        }
    }
    None
}

/// One hunk as dsh stores it.
fn hunk(path: &str, old: &[&str], new: &[&str]) -> Value {
    let old_text = if old.is_empty() {
        Value::Null
    } else {
        Value::String(old.join("\n"))
    };
    json!({"path": path, "oldText": old_text, "newText": new.join("\n")})
}

/// A line without its `\n`.
fn bare(token: &str) -> &str {
    token.strip_suffix('\n').unwrap_or(token)
}

/// The hunks between `before` and `after` (both LF), each `{path, oldText, newText}`
/// (jsdiff's `structuredPatch` with three lines of context, as dsh's `computeHunkDiffs`).
pub fn hunk_diffs(path: &str, before: &str, after: &str) -> Vec<Value> {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let runs = line_runs(&old, &new).unwrap_or_else(|| {
        let mut runs = Vec::new();
        if !old.is_empty() {
            runs.push((Kind::Removed, old.len()));
        }
        if !new.is_empty() {
            runs.push((Kind::Added, new.len()));
        }
        runs
    });
    // The lines of each run, in order.
    let (mut at_old, mut at_new) = (0, 0);
    let mut blocks: Vec<(Kind, &[&str])> = Vec::with_capacity(runs.len());
    for (kind, count) in runs {
        let lines = match kind {
            Kind::Removed => {
                at_old += count;
                old.get(at_old - count..at_old).unwrap_or_default()
            }
            Kind::Added => {
                at_new += count;
                new.get(at_new - count..at_new).unwrap_or_default()
            }
            Kind::Same => {
                at_old += count;
                at_new += count;
                new.get(at_new - count..at_new).unwrap_or_default()
            }
        };
        blocks.push((kind, lines));
    }
    let mut hunks = Vec::new();
    let (mut old_side, mut new_side): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let mut open = false;
    let last_index = blocks.len();
    for (index, &(kind, lines)) in blocks.iter().enumerate() {
        match kind {
            Kind::Added | Kind::Removed => {
                if !open {
                    open = true;
                    if let Some((Kind::Same, previous)) =
                        index.checked_sub(1).and_then(|i| blocks.get(i))
                    {
                        let tail = previous
                            .get(previous.len().saturating_sub(CONTEXT_LINES)..)
                            .unwrap_or_default();
                        old_side.extend(tail.iter().map(|line| bare(line)));
                        new_side.extend(tail.iter().map(|line| bare(line)));
                    }
                }
                let side = if kind == Kind::Added {
                    &mut new_side
                } else {
                    &mut old_side
                };
                side.extend(lines.iter().map(|line| bare(line)));
            }
            Kind::Same if open => {
                // jsdiff's list ends with an empty sentinel, so "not among the last two" is
                // "not the last run" here.
                if lines.len() <= CONTEXT_LINES * 2 && index + 1 < last_index {
                    old_side.extend(lines.iter().map(|line| bare(line)));
                    new_side.extend(lines.iter().map(|line| bare(line)));
                } else {
                    let head = lines
                        .get(..lines.len().min(CONTEXT_LINES))
                        .unwrap_or_default();
                    old_side.extend(head.iter().map(|line| bare(line)));
                    new_side.extend(head.iter().map(|line| bare(line)));
                    hunks.push(hunk(path, &old_side, &new_side));
                    old_side.clear();
                    new_side.clear();
                    open = false;
                }
            }
            Kind::Same => {}
        }
    }
    if open {
        hunks.push(hunk(path, &old_side, &new_side));
    }
    hunks
}

#[cfg(test)]
mod tests;
