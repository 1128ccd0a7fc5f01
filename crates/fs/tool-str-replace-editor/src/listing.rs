//! `view` of a directory: its visible entries two levels deep, one `<type>\t<path>` row each.

use dsh_fs::{FileSystem, FsDirEntry, FsError, FsKind, FsTarget};
use dsh_tools::CancellationToken;

use crate::clip::clip;
use crate::js::utf16_cmp;

/// How deep the listing goes below the directory itself.
const MAX_DEPTH: usize = 2;

/// Whether a child is left out of listings: hidden names, `node_modules` and `__pycache__`
/// (names merely starting with those are kept).
fn is_skipped(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules" || name == "__pycache__"
}

/// The row type letter: `d`, `f`, or `?` for anything else.
fn type_letter(kind: FsKind) -> char {
    match kind {
        FsKind::Directory => 'd',
        FsKind::File => 'f',
        FsKind::Other => '?',
    }
}

/// Rows of `dir`'s visible children at `depth`, each directory followed by its own rows
/// while under [`MAX_DEPTH`]; `(path, row)` pairs. Cancellation is checked before each
/// directory is read (`list aborted`).
fn visit(
    fs: &dyn FileSystem,
    signal: &CancellationToken,
    dir: &FsTarget,
    depth: usize,
    rows: &mut Vec<(String, String)>,
) -> Result<(), FsError> {
    if signal.is_cancelled() {
        return Err(FsError::aborted("list"));
    }
    let entries: Vec<FsDirEntry> = fs.list_dir(dir)?;
    for entry in entries.iter().filter(|entry| !is_skipped(&entry.name)) {
        let path = entry.target.display_path.clone();
        let row = format!("{}\t{path}", type_letter(entry.kind));
        rows.push((path, row));
        if entry.kind == FsKind::Directory && depth < MAX_DEPTH {
            visit(fs, signal, &entry.target, depth + 1, rows)?;
        }
    }
    Ok(())
}

/// The listing text of the directory `root`: dsh's header, then the rows (the root's own
/// row included) sorted by path as JavaScript compares strings, clipped to `max` UTF-16
/// units, then a final newline.
pub(crate) fn list_directory(
    fs: &dyn FileSystem,
    signal: &CancellationToken,
    root: &FsTarget,
    max: usize,
) -> Result<String, FsError> {
    let root_path = root.display_path.clone();
    let mut rows = vec![(root_path.clone(), format!("d\t{root_path}"))];
    visit(fs, signal, root, 1, &mut rows)?;
    // Stable, as JavaScript's sort: equal paths keep the walk's order.
    rows.sort_by(|(left, _), (right, _)| utf16_cmp(left, right));
    let mut body = rows
        .iter()
        .map(|(_, row)| row.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    body.push('\n');
    Ok(format!(
        "Here're the files and directories up to 2 levels deep in {root_path}, excluding hidden \
         items, node_modules, and Python cache directories:\n{}\n",
        clip(&body, max)
    ))
}
