//! Composing patch layers into the row tree, with each row's provenance.

use std::collections::HashMap;
use std::path::Path;

use crate::node::Node;
use crate::patch::PatchFileError;
use crate::patch::PatchFileKind;
use crate::patch::PatchList;
use crate::patch::Tree;
use crate::patch::group_children;
use crate::patch::quoted;

/// One patch layer: a bundle, a user patch file or a `--patch` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// How the dump and warnings name it: the bundle name, or the file's absolute path.
    pub label: String,
    /// Its patches.
    pub patches: PatchList,
}

impl Layer {
    /// A bundle layer parsed from its YAML patch list, named `label` (how a program that
    /// embeds dsh brings its own rows: one bundle layer, optionally followed by user layers).
    pub fn bundle(label: impl Into<String>, text: &str) -> Result<Self, PatchFileError> {
        let label = label.into();
        Ok(Self {
            patches: PatchList::parse(text, &label, PatchFileKind::Bundle)?,
            label,
        })
    }

    /// A layer parsed from `text`, the contents of the patch file at `path` (absolute), and
    /// labelled with that path. Every string in a row's `config` that starts with `./` or
    /// `../` is resolved against the file's directory, so the file can name files beside it
    /// wherever dsh runs; other strings and `!!js` expressions are kept as written.
    pub fn file(path: &Path, text: &str, kind: PatchFileKind) -> Result<Self, PatchFileError> {
        let label = path.display().to_string();
        let mut patches = PatchList::parse(text, &label, kind)?;
        if let Some(dir) = path.parent() {
            patches.resolve_relative_paths(dir, &label, kind)?;
        }
        Ok(Self { label, patches })
    }
}

/// The composed row tree: what boots, and what `--dump-config` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Composition {
    rows: Vec<Node>,
    provenance: Vec<Provenance>,
    warnings: Vec<LayerWarning>,
}

/// Where a top-level row came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The layer that inserted the row.
    pub origin: String,
    /// Later layers that changed the row, in order.
    pub patched_by: Vec<String>,
}

/// A patch entry that was skipped (unknown id, name mismatch, ...), with its layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerWarning {
    /// The layer's label.
    pub layer: String,
    /// What was skipped, in dsh's words (`patch: entry "x" not found`).
    pub message: String,
}

/// The layers compose into a tree two rows of which share an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ComposeError(pub Vec<DuplicateId>);

/// Two rows with one id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "duplicate row id {}: a row from {first} and a row from {second} share it; \
     give the second row another id, or patch the first one instead",
    quoted(.id)
)]
pub struct DuplicateId {
    /// The id.
    pub id: String,
    /// The layer of the first row with it.
    pub first: String,
    /// The layer of the second row with it.
    pub second: String,
}

/// Applies `layers` in order to an empty tree, recording which layer inserted each row and
/// which later layers changed it. Boot and the dump both compose with this one function.
pub fn compose(layers: &[Layer]) -> Result<Composition, ComposeError> {
    let mut tree = Tree::new(Vec::new());
    let mut provenance: Vec<Provenance> = Vec::new();
    let mut warnings = Vec::new();
    for layer in layers {
        let before = tree.rows.clone();
        tree.apply(&layer.patches, &mut |message| {
            warnings.push(LayerWarning {
                layer: layer.label.clone(),
                message,
            });
        });
        for (index, row) in tree.rows.iter().enumerate() {
            match before.get(index) {
                None => provenance.push(Provenance {
                    origin: layer.label.clone(),
                    patched_by: Vec::new(),
                }),
                Some(previous) if previous != row => {
                    if let Some(record) = provenance.get_mut(index) {
                        record.patched_by.push(layer.label.clone());
                    }
                }
                Some(_) => {}
            }
        }
    }
    let composition = Composition {
        rows: tree.rows,
        provenance,
        warnings,
    };
    composition.check_unique_ids()?;
    Ok(composition)
}

impl Composition {
    /// The top-level rows in order.
    pub fn rows(&self) -> &[Node] {
        &self.rows
    }

    /// The provenance of each top-level row, index-aligned with [`Composition::rows`].
    pub fn provenance(&self) -> &[Provenance] {
        &self.provenance
    }

    /// Keeps only the top-level rows `keep` accepts, with their provenance (for commands that
    /// boot part of a profile, such as `dsh sessions`).
    pub fn retain_rows(&mut self, mut keep: impl FnMut(&Node) -> bool) {
        let rows = std::mem::take(&mut self.rows);
        let provenance = std::mem::take(&mut self.provenance);
        for (row, origin) in rows.into_iter().zip(provenance) {
            if keep(&row) {
                self.rows.push(row);
                self.provenance.push(origin);
            }
        }
    }

    /// Patch entries that were skipped, in the order they were met.
    pub fn warnings(&self) -> &[LayerWarning] {
        &self.warnings
    }

    fn check_unique_ids(&self) -> Result<(), ComposeError> {
        let mut seen: HashMap<&str, &str> = HashMap::new();
        let mut duplicates = Vec::new();
        for (row, provenance) in self.rows.iter().zip(&self.provenance) {
            let mut ids = Vec::new();
            collect_ids(row, &mut ids);
            for id in ids {
                match seen.get(id) {
                    Some(first) => duplicates.push(DuplicateId {
                        id: id.to_owned(),
                        first: (*first).to_owned(),
                        second: provenance.origin.clone(),
                    }),
                    None => {
                        seen.insert(id, &provenance.origin);
                    }
                }
            }
        }
        if duplicates.is_empty() {
            Ok(())
        } else {
            Err(ComposeError(duplicates))
        }
    }
}

fn collect_ids<'a>(row: &'a Node, ids: &mut Vec<&'a str>) {
    let Some(map) = row.as_map() else {
        return;
    };
    if let Some(id) = map.get("id").and_then(Node::as_str) {
        ids.push(id);
    }
    for child in group_children(map).unwrap_or_default() {
        collect_ids(child, ids);
    }
}
