//! `cargo xtask layers`: the workspace's layering rules, checked against `cargo metadata`,
//! `docs/architecture.md` and the sources.
//!
//! Every workspace crate declares where it sits in its `Cargo.toml`:
//!
//! ```toml
//! [package.metadata.dsh]
//! family = "shell"     # the folder under crates/ it lives in
//! floor = 3            # above every crate it depends on
//! role = "provider"    # definition | provider | consumer | app | support
//! ```
//!
//! The check fails, naming the crates, when a normal or build dependency does not sit on a
//! lower floor than its dependent, when a dev dependency reaches the same or a higher floor for
//! anything but a provider or a support crate, when any dependency (dev ones too) goes from a
//! provider to another provider, when a crate under `crates/<family>/` declares another family,
//! when the crate table of `docs/architecture.md` misses a crate or disagrees with it, when a
//! source file outside the tests is over [`sources::MAX_LINES`] lines, when the sources hold
//! more than [`sources::MAX_ALLOWS`] `#[allow(...)]` attributes, and when an `allow` or
//! `expect` attribute gives no reason.

mod graph;
mod sources;
mod table;
#[cfg(test)]
mod tests;

use std::path::Path;

use crate::{cargo_command, report, workspace_root};

/// The architecture page whose crate table is checked.
const ARCHITECTURE: &str = "docs/architecture.md";

/// Runs every check over the workspace and reports each problem found.
pub fn run() -> Result<(), String> {
    report("==> cargo xtask layers");
    let root = workspace_root();
    let metadata = metadata(&root)?;
    let mut problems = Vec::new();
    let workspace = graph::Workspace::from_metadata(&metadata, &root, &mut problems);
    problems.extend(workspace.check());
    let page = std::fs::read_to_string(root.join(ARCHITECTURE))
        .map_err(|error| format!("{ARCHITECTURE}: {error}"))?;
    match table::parse(&page) {
        Ok(rows) => problems.extend(table::check(&workspace.crates, &rows)),
        Err(problem) => problems.push(format!("{ARCHITECTURE}: {problem}")),
    }
    let files = sources::read(&root)?;
    problems.extend(sources::long_files(&files));
    problems.extend(sources::too_many_allows(&files));
    problems.extend(sources::unexplained_lint_attributes(&files));
    if problems.is_empty() {
        report(&format!(
            "    {} crates: floors, roles, families, the crate table and the sources are in order",
            workspace.crates.len()
        ));
        return Ok(());
    }
    for problem in &problems {
        report(&format!("    {problem}"));
    }
    Err(format!("layers: {} problem(s)", problems.len()))
}

/// `cargo metadata` of the workspace members, without resolving dependencies.
fn metadata(root: &Path) -> Result<serde_json::Value, String> {
    let output = cargo_command()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .map_err(|error| format!("cannot run cargo metadata: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|error| format!("cargo metadata printed something that is not JSON: {error}"))
}
