//! Relative paths in patch files.
//!
//! A patch layer read from a file may name files beside it: when the layer is loaded, every
//! string in a row's `config` that starts with `./` or `../` is resolved against the
//! directory of the patch file and normalized, so `session: ./replay/session.jsonl` in
//! `/repo/profiles/examples/replay.patch.yml` becomes
//! `/repo/profiles/examples/replay/session.jsonl` whatever directory dsh runs in. The rule
//! covers the rows of `insert` lists and the `config` of targeting entries, at any depth of
//! the config; a group row's `config` is its child rows, whose configs follow the same rule.
//!
//! Nothing else changes: other strings (`session.jsonl`, `/abs`, `~/x`, `.hidden`), keys,
//! ids, plugin names and every other row key are kept, and `!!js` expressions are not
//! rewritten (so `!!js "'./x'"` keeps a path relative to the working directory). Bundles
//! ship inside the binary and have no directory.

use std::path::Path;

use crate::node::Map;
use crate::node::Node;
use crate::patch::PatchFileError;
use crate::patch::PatchFileKind;
use crate::patch::PatchList;
use crate::patch::is_group;
use crate::profile::join_normalized;

/// Whether `text` is a path relative to the patch file.
fn is_relative(text: &str) -> bool {
    text.starts_with("./") || text.starts_with("../")
}

impl PatchList {
    /// Resolves the relative paths of every entry against `dir`, the directory of the patch
    /// file `file` of `kind` (see the module docs). A directory that is not UTF-8 cannot take
    /// a relative path: an entry with one is refused, naming it.
    pub(crate) fn resolve_relative_paths(
        &mut self,
        dir: &Path,
        file: &str,
        kind: PatchFileKind,
    ) -> Result<(), PatchFileError> {
        for (index, entry) in self.entries_mut().iter_mut().enumerate() {
            resolve_entry(entry, dir).map_err(|reason| PatchFileError::BadEntry {
                kind,
                file: file.to_owned(),
                index: index + 1,
                reason,
            })?;
        }
        Ok(())
    }
}

/// An entry: its own `config` (a targeting entry) and the rows it inserts.
fn resolve_entry(entry: &mut Map, dir: &Path) -> Result<(), String> {
    resolve_row(entry, dir)?;
    if let Some(Node::Seq(rows)) = entry.get_mut("insert") {
        for row in rows {
            if let Node::Map(row) = row {
                resolve_row(row, dir)?;
            }
        }
    }
    Ok(())
}

/// A row's `config`: a group's child rows, else the config's strings.
fn resolve_row(row: &mut Map, dir: &Path) -> Result<(), String> {
    let group = is_group(row);
    match row.get_mut("config") {
        Some(Node::Seq(children)) if group => {
            for child in children {
                if let Node::Map(child) = child {
                    resolve_row(child, dir)?;
                }
            }
            Ok(())
        }
        Some(config) => resolve_value(config, dir),
        None => Ok(()),
    }
}

/// Every relative string in `value`, resolved against `dir`.
fn resolve_value(value: &mut Node, dir: &Path) -> Result<(), String> {
    match value {
        Node::String(text) if is_relative(text) => {
            let resolved = join_normalized(dir, &[text.as_str()]);
            let resolved = resolved.to_str().ok_or_else(|| {
                format!(
                    "the relative path {text:?} cannot be resolved: the patch file's \
                     directory {} is not valid UTF-8",
                    dir.display()
                )
            })?;
            *text = resolved.to_owned();
            Ok(())
        }
        Node::Seq(items) => items
            .iter_mut()
            .try_for_each(|item| resolve_value(item, dir)),
        Node::Map(map) => map
            .values_mut()
            .try_for_each(|item| resolve_value(item, dir)),
        Node::Null | Node::Bool(_) | Node::Number(_) | Node::String(_) | Node::Expr(_) => Ok(()),
    }
}
