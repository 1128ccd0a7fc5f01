//! The crates, their declared place and the dependency edges between them, and the rules the
//! edges must keep.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;

/// What a crate is for, as far as the layering goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A seam or shared vocabulary that others implement or use.
    Definition,
    /// Implements a seam defined elsewhere (a shell, a store, a model client).
    Provider,
    /// Uses seams without implementing one of another crate.
    Consumer,
    /// A program, or the library of one.
    App,
    /// Test and project tooling.
    Support,
}

impl Role {
    /// The role named `name` in `Cargo.toml`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "definition" => Self::Definition,
            "provider" => Self::Provider,
            "consumer" => Self::Consumer,
            "app" => Self::App,
            "support" => Self::Support,
            _ => return None,
        })
    }
}

/// How a crate depends on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[dependencies]`.
    Normal,
    /// `[build-dependencies]`.
    Build,
    /// `[dev-dependencies]`.
    Dev,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Normal => "a normal",
            Self::Build => "a build",
            Self::Dev => "a dev",
        })
    }
}

/// A workspace crate and the place it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    /// The package name.
    pub name: String,
    /// Its folder, relative to the workspace root, with `/` separators.
    pub dir: String,
    /// `package.metadata.dsh.family`.
    pub family: String,
    /// `package.metadata.dsh.floor`.
    pub floor: u64,
    /// `package.metadata.dsh.role`.
    pub role: Role,
}

/// One crate depending on another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The dependent.
    pub from: String,
    /// The dependency.
    pub to: String,
    /// The section it is declared in.
    pub kind: Kind,
}

/// The workspace crates and the edges between them.
#[derive(Debug, Default)]
pub struct Workspace {
    /// The crates that declare their place, by name order.
    pub crates: Vec<Crate>,
    /// The edges between workspace crates.
    pub edges: Vec<Edge>,
}

impl Workspace {
    /// Reads `cargo metadata --no-deps` output; a crate whose place is missing or malformed is
    /// left out, with a problem saying so.
    pub fn from_metadata(metadata: &Value, root: &Path, problems: &mut Vec<String>) -> Self {
        let packages = metadata["packages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let names: Vec<&str> = packages
            .iter()
            .filter_map(|package| package["name"].as_str())
            .collect();
        let mut workspace = Self::default();
        for package in packages {
            let name = package["name"].as_str().unwrap_or("?");
            let manifest = Path::new(package["manifest_path"].as_str().unwrap_or(""));
            let dir = manifest
                .parent()
                .and_then(|dir| dir.strip_prefix(root).ok())
                .map(|dir| dir.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            match place(
                package
                    .get("metadata")
                    .and_then(|metadata| metadata.get("dsh")),
            ) {
                Ok((family, floor, role)) => workspace.crates.push(Crate {
                    name: name.to_owned(),
                    dir,
                    family,
                    floor,
                    role,
                }),
                Err(why) => problems.push(format!(
                    "{name} ({dir}/Cargo.toml): {why}; declare [package.metadata.dsh] family = \
                     \"...\", floor = N, role = \"definition|provider|consumer|app|support\""
                )),
            }
            let dependencies = package["dependencies"].as_array();
            for dependency in dependencies.map_or(&[][..], Vec::as_slice) {
                let Some(to) = dependency["name"].as_str() else {
                    continue;
                };
                if dependency["path"].is_null() || !names.contains(&to) {
                    continue;
                }
                let kind = match dependency["kind"].as_str() {
                    Some("dev") => Kind::Dev,
                    Some("build") => Kind::Build,
                    _ => Kind::Normal,
                };
                let edge = Edge {
                    from: name.to_owned(),
                    to: to.to_owned(),
                    kind,
                };
                // A crate may name another twice (for another target, or as both normal and
                // dev dependency with other features); one edge of each kind is enough.
                if !workspace.edges.contains(&edge) {
                    workspace.edges.push(edge);
                }
            }
        }
        workspace.crates.sort_by(|a, b| a.name.cmp(&b.name));
        workspace
    }

    /// The problems of the graph: floors, provider edges and families.
    pub fn check(&self) -> Vec<String> {
        let by_name: BTreeMap<&str, &Crate> = self
            .crates
            .iter()
            .map(|krate| (krate.name.as_str(), krate))
            .collect();
        let mut problems = Vec::new();
        for edge in &self.edges {
            let (Some(from), Some(to)) = (
                by_name.get(edge.from.as_str()),
                by_name.get(edge.to.as_str()),
            ) else {
                continue;
            };
            if edge.kind != Kind::Dev && to.floor >= from.floor {
                problems.push(format!(
                    "{} (floor {}) has {} dependency on {} (floor {}): a crate may depend only \
                     on lower floors",
                    from.name, from.floor, edge.kind, to.name, to.floor
                ));
            }
            // Tests may run a real provider or use the test support, but reaching up or
            // sideways to anything else would bring back the edges the floors rule out.
            let test_reaches_up = edge.kind == Kind::Dev
                && to.floor >= from.floor
                && !matches!(to.role, Role::Provider | Role::Support);
            if test_reaches_up {
                problems.push(format!(
                    "{} (floor {}) has a dev dependency on {} (floor {}): tests may reach the \
                     same or a higher floor only for a provider or a support crate",
                    from.name, from.floor, to.name, to.floor
                ));
            }
            if from.role == Role::Provider && to.role == Role::Provider {
                problems.push(format!(
                    "{} has {} dependency on {}: both are providers, and no provider may depend \
                     on another",
                    from.name, edge.kind, to.name
                ));
            }
        }
        for krate in &self.crates {
            if let Some(family) = family_of_dir(&krate.dir)
                && family != krate.family
            {
                problems.push(format!(
                    "{} lives in {} but declares family {:?} (expected {family:?})",
                    krate.name, krate.dir, krate.family
                ));
            }
        }
        problems
    }
}

/// The family a crate's folder puts it in: `crates/<family>/<crate>`, or `crates/<family>` for a
/// crate that is a family of its own; `None` outside `crates/`.
pub fn family_of_dir(dir: &str) -> Option<&str> {
    let mut parts = dir.strip_prefix("crates/")?.split('/');
    parts.next().filter(|family| !family.is_empty())
}

/// The family, floor and role of a `package.metadata.dsh` table.
fn place(table: Option<&Value>) -> Result<(String, u64, Role), String> {
    let Some(table) = table.filter(|table| table.is_object()) else {
        return Err("no [package.metadata.dsh]".to_owned());
    };
    let family = table["family"]
        .as_str()
        .filter(|family| !family.is_empty())
        .ok_or("[package.metadata.dsh] has no family")?;
    let floor = table["floor"]
        .as_u64()
        .ok_or("[package.metadata.dsh] has no floor (a whole number from 0)")?;
    let role = table["role"].as_str().unwrap_or("");
    let role = Role::parse(role).ok_or_else(|| {
        format!("[package.metadata.dsh] has role {role:?}, not one of definition, provider, consumer, app, support")
    })?;
    Ok((family.to_owned(), floor, role))
}
