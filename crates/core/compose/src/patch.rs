//! Patch lists (`cordis.patch.yml`, `--patch` files, bundle patches) and how one applies.
//!
//! A patch list is a top-level YAML array. Each entry either targets a row by `id` and
//! replaces whole keys of it (`config` wholesale, no deep merge), or `insert`s rows at the
//! top level (without `id`) or into a group row (with `id`). A `name` in a targeting entry is
//! a guard: when it differs from the row's plugin the entry is skipped with a warning.
//!
//! A patch list read from a file resolves the `./` and `../` strings of its rows' configs
//! against the file's directory when it is loaded ([`crate::Layer::file`]; the rule is in
//! `relative.rs`).

use std::collections::HashMap;
use std::fmt;

use crate::node::Map;
use crate::node::Node;
use crate::yaml::parse_document;

/// A parsed patch list.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchList {
    entries: Vec<Map>,
}

/// What kind of file a patch list came from, as messages call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchFileKind {
    /// A bundle's patch list.
    Bundle,
    /// An optional user layer (`cordis.patch.yml`).
    Patches,
    /// A `--patch` file.
    Overlay,
}

impl fmt::Display for PatchFileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bundle => "bundle",
            Self::Patches => "patches",
            Self::Overlay => "overlay",
        })
    }
}

/// A patch file that cannot be applied at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchFileError {
    /// The file could not be read.
    #[error("failed to read {kind} {file}: {reason}")]
    Read {
        /// Which kind of file.
        kind: PatchFileKind,
        /// Its path or label.
        file: String,
        /// The I/O error.
        reason: String,
    },
    /// The text is not YAML.
    #[error("failed to parse {kind} {file}: {reason}")]
    Parse {
        /// Which kind of file.
        kind: PatchFileKind,
        /// Its path or label.
        file: String,
        /// The YAML error with its line.
        reason: String,
    },
    /// The document is not a sequence.
    #[error(
        "{kind} {file} must be a top-level YAML array of loader patch entries{}",
        if *.empty { " (it is empty; write [] for a layer that changes nothing)" } else { "" }
    )]
    NotArray {
        /// Which kind of file.
        kind: PatchFileKind,
        /// Its path or label.
        file: String,
        /// Whether the file held no document at all.
        empty: bool,
    },
    /// An entry is not a mapping.
    #[error("{kind} entry {index} in {file} must be a mapping (a loader patch entry)")]
    NotMapping {
        /// Which kind of file.
        kind: PatchFileKind,
        /// Its path or label.
        file: String,
        /// 1-based entry number.
        index: usize,
    },
    /// An entry has a key of the wrong shape.
    #[error("{kind} entry {index} in {file}: {reason}")]
    BadEntry {
        /// Which kind of file.
        kind: PatchFileKind,
        /// Its path or label.
        file: String,
        /// 1-based entry number.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

impl PatchList {
    /// Parses the text of a patch file; `file` names it in errors.
    pub fn parse(text: &str, file: &str, kind: PatchFileKind) -> Result<Self, PatchFileError> {
        let document = parse_document(text).map_err(|error| PatchFileError::Parse {
            kind,
            file: file.to_owned(),
            reason: error.to_string(),
        })?;
        let items = match document {
            Some(Node::Seq(items)) => items,
            other => {
                return Err(PatchFileError::NotArray {
                    kind,
                    file: file.to_owned(),
                    empty: other.is_none(),
                });
            }
        };
        let mut entries = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let index = index + 1;
            let Node::Map(entry) = item else {
                return Err(PatchFileError::NotMapping {
                    kind,
                    file: file.to_owned(),
                    index,
                });
            };
            check_entry(&entry).map_err(|reason| PatchFileError::BadEntry {
                kind,
                file: file.to_owned(),
                index,
                reason,
            })?;
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    /// The entries in order.
    pub fn entries(&self) -> &[Map] {
        &self.entries
    }

    /// The entries in order, mutably.
    pub(crate) fn entries_mut(&mut self) -> &mut [Map] {
        &mut self.entries
    }
}

fn check_entry(entry: &Map) -> Result<(), String> {
    for key in ["id", "name"] {
        match entry.get(key) {
            None | Some(Node::String(_)) => {}
            Some(_) => return Err(format!("`{key}` must be a string")),
        }
    }
    match entry.get("insert") {
        None => Ok(()),
        Some(Node::Seq(rows)) => {
            for (index, row) in rows.iter().enumerate() {
                if !matches!(row, Node::Map(_)) {
                    return Err(format!(
                        "`insert` item {} must be a mapping (a row with id and name)",
                        index + 1
                    ));
                }
            }
            Ok(())
        }
        Some(_) => Err("`insert` must be a list of rows".to_owned()),
    }
}

/// Where a row sits: its index at the top level, then in each enclosing group's `config`.
pub(crate) type RowPath = Vec<usize>;

/// The row tree being patched and the id index patches target rows through.
pub(crate) struct Tree {
    pub(crate) rows: Vec<Node>,
    index: HashMap<String, RowPath>,
}

impl Tree {
    pub(crate) fn new(rows: Vec<Node>) -> Self {
        let mut tree = Self {
            rows,
            index: HashMap::new(),
        };
        let paths: Vec<RowPath> = (0..tree.rows.len()).map(|at| vec![at]).collect();
        for path in paths {
            tree.index_row(path);
        }
        tree
    }

    /// Indexes the row at `path` and, for a group, its children.
    fn index_row(&mut self, path: RowPath) {
        let Some(row) = row_at(&self.rows, &path) else {
            return;
        };
        let id = row.get("id").and_then(Node::as_str).map(str::to_owned);
        let children = group_children(row).map_or(0, <[Node]>::len);
        if let Some(id) = id {
            self.index.insert(id, path.clone());
        }
        for child in 0..children {
            let mut child_path = path.clone();
            child_path.push(child);
            self.index_row(child_path);
        }
    }

    /// Applies one patch list; each skipped entry is reported through `warn`.
    pub(crate) fn apply(&mut self, patches: &PatchList, warn: &mut dyn FnMut(String)) {
        for entry in patches.entries() {
            self.apply_entry(entry, warn);
        }
    }

    fn apply_entry(&mut self, entry: &Map, warn: &mut dyn FnMut(String)) {
        let id = entry.get("id").and_then(Node::as_str);
        if let Some(Node::Seq(rows)) = entry.get("insert") {
            self.insert(id, rows, warn);
            return;
        }
        let Some(id) = id else {
            warn("patch: id is required for non-insert patches".to_owned());
            return;
        };
        let Some(path) = self.index.get(id).cloned() else {
            warn(format!("patch: entry {} not found", quoted(id)));
            return;
        };
        let Some(target) = row_at_mut(&mut self.rows, &path) else {
            return;
        };
        if let Some(guard) = entry.get("name").and_then(Node::as_str) {
            let actual = target
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or_default();
            if guard != actual {
                warn(format!(
                    "patch: name mismatch for {} (expected {}, got {}), skipping",
                    quoted(id),
                    quoted(actual),
                    quoted(guard)
                ));
                return;
            }
        }
        let mut replaced_children = false;
        for (key, value) in entry.iter() {
            if matches!(key, "id" | "insert" | "name") {
                continue;
            }
            replaced_children |= key == "config" && group_children(target).is_some();
            target.insert(key, value.clone());
        }
        if replaced_children {
            // The old children are gone; like dsh, rows a replaced `config` brings in are not
            // indexed, so later patches naming them warn instead of changing a detached copy.
            self.index
                .retain(|_, child| !(child.len() > path.len() && child.starts_with(&path)));
        }
    }

    fn insert(&mut self, id: Option<&str>, rows: &[Node], warn: &mut dyn FnMut(String)) {
        let (parent, start) = match id {
            None => {
                let start = self.rows.len();
                self.rows.extend(rows.iter().cloned());
                (Vec::new(), start)
            }
            Some(id) => {
                let Some(path) = self.index.get(id).cloned() else {
                    warn(format!("patch insert: entry {} not found", quoted(id)));
                    return;
                };
                let Some(target) = row_at_mut(&mut self.rows, &path) else {
                    return;
                };
                if !is_group(target) {
                    warn(format!("patch insert: entry {} is not a group", quoted(id)));
                    return;
                }
                if !matches!(target.get("config"), Some(Node::Seq(_))) {
                    target.insert("config", Node::Seq(Vec::new()));
                }
                let Some(Node::Seq(children)) = target.get_mut("config") else {
                    return;
                };
                let start = children.len();
                children.extend(rows.iter().cloned());
                (path, start)
            }
        };
        for offset in 0..rows.len() {
            let mut path = parent.clone();
            path.push(start + offset);
            self.index_row(path);
        }
    }
}

/// Whether `row` is a group (`group` truthy): its `config` is its child rows.
pub(crate) fn is_group(row: &Map) -> bool {
    row.get("group").is_some_and(Node::is_truthy)
}

/// The children of a group row (`group` truthy and `config` a sequence).
pub(crate) fn group_children(row: &Map) -> Option<&[Node]> {
    if !is_group(row) {
        return None;
    }
    match row.get("config") {
        Some(Node::Seq(children)) => Some(children),
        _ => None,
    }
}

fn row_at<'a>(rows: &'a [Node], path: &[usize]) -> Option<&'a Map> {
    let (first, rest) = path.split_first()?;
    let mut row = rows.get(*first)?.as_map()?;
    for step in rest {
        row = group_children(row)?.get(*step)?.as_map()?;
    }
    Some(row)
}

fn row_at_mut<'a>(rows: &'a mut [Node], path: &[usize]) -> Option<&'a mut Map> {
    let (first, rest) = path.split_first()?;
    let mut row = rows.get_mut(*first)?.as_map_mut()?;
    for step in rest {
        row = match row.get_mut("config") {
            Some(Node::Seq(children)) => children.get_mut(*step)?.as_map_mut()?,
            _ => return None,
        };
    }
    Some(row)
}

/// A string as `JSON.stringify` writes it, as dsh's warnings quote ids.
pub(crate) fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}
