//! The crate table of `docs/architecture.md`:
//!
//! ```text
//! | crate | family | floor | job |
//! |---|---|---|---|
//! | `dsh-shell` (`crates/shell/shell`) | shell | 2 | the `ShellExecutor` seam, ... |
//! ```
//!
//! One row per workspace crate, the crate cell naming the package and its folder. A row for a
//! crate that is planned but not written yet starts its job with [`COMING`].

use super::graph::Crate;

/// The header row of the table.
pub const HEADER: &str = "| crate | family | floor | job |";

/// How the job of a crate that does not exist yet begins.
pub const COMING: &str = "(coming)";

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The package name.
    pub name: String,
    /// Its folder.
    pub dir: String,
    /// The family column.
    pub family: String,
    /// The floor column, as written.
    pub floor: String,
    /// Whether the job marks the crate as planned.
    pub coming: bool,
}

/// The rows of the crate table in `page`; an error when the page has no such table or a row
/// does not read.
pub fn parse(page: &str) -> Result<Vec<Row>, String> {
    let mut lines = page.lines().map(str::trim);
    if !lines.any(|line| line == HEADER) {
        return Err(format!("no crate table (a table headed `{HEADER}`)"));
    }
    let mut rows = Vec::new();
    for line in lines
        .skip_while(|line| line.starts_with("|--") || line.starts_with("| --"))
        .take_while(|line| line.starts_with('|'))
    {
        rows.push(parse_row(line).ok_or_else(|| {
            format!(
                "the crate table row {line:?} does not read as \
                 | `name` (`folder`) | family | floor | job |"
            )
        })?);
    }
    Ok(rows)
}

fn parse_row(line: &str) -> Option<Row> {
    let mut cells = line.strip_prefix('|')?.splitn(4, '|').map(str::trim);
    let (crate_cell, family, floor, job) =
        (cells.next()?, cells.next()?, cells.next()?, cells.next()?);
    let (name, dir) = crate_cell.strip_prefix('`')?.split_once("` (`")?;
    let dir = dir.strip_suffix("`)")?;
    Some(Row {
        name: name.to_owned(),
        dir: dir.to_owned(),
        family: family.to_owned(),
        floor: floor.to_owned(),
        coming: job.starts_with(COMING),
    })
}

/// The disagreements between the table and the crates.
pub fn check(crates: &[Crate], rows: &[Row]) -> Vec<String> {
    let mut problems = Vec::new();
    for krate in crates {
        let Some(row) = rows.iter().find(|row| row.name == krate.name) else {
            problems.push(format!(
                "docs/architecture.md: the crate table has no row for {} (| `{}` (`{}`) | {} | {} | ... |)",
                krate.name, krate.name, krate.dir, krate.family, krate.floor
            ));
            continue;
        };
        let floor = krate.floor.to_string();
        for (what, table, declared) in [
            ("folder", &row.dir, &krate.dir),
            ("family", &row.family, &krate.family),
            ("floor", &row.floor, &floor),
        ] {
            if table != declared {
                problems.push(format!(
                    "docs/architecture.md: the crate table gives {} the {what} {table:?}; its \
                     Cargo.toml says {declared:?}",
                    krate.name
                ));
            }
        }
    }
    for row in rows {
        if !row.coming && !crates.iter().any(|krate| krate.name == row.name) {
            problems.push(format!(
                "docs/architecture.md: the crate table lists {}, which is not a workspace crate \
                 (a planned one starts its job with {COMING})",
                row.name
            ));
        }
    }
    problems
}
