//! Where one confined call may write: its writable roots, and the protected paths inside
//! them that must stay read-only (carve-outs, which a backend keeps read-only with a mount
//! namespace, or refuses when it cannot).

use std::path::{Path, PathBuf};

use super::protect::ProtectedPath;
use super::roots::{broad_workspace, temp_roots};
use super::{SandboxExecutionPolicy, SandboxMode, canonical_path};

/// The writes of one confined call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritePlan {
    /// Where the command may write, resolved and without duplicates: nothing for
    /// `read-only`; the workspace root and the usable temp roots for `workspace-write`.
    pub roots: Vec<PathBuf>,
    /// Protected paths inside a writable root, resolved: they stay read-only.
    pub carve_outs: Vec<ProtectedPath>,
}

/// Why a call cannot be confined as its policy asks; its text says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxRefusal(pub String);

/// The plan of `policy`: `None` for `danger-full-access` (nothing is confined).
///
/// `workspace-write` is refused when the workspace is `/` or an ancestor of the home
/// directory, and when it lies inside a protected path; a temp root inside a protected path
/// is left out. Protected paths inside a writable root become carve-outs.
pub fn write_plan(policy: &SandboxExecutionPolicy) -> Result<Option<WritePlan>, SandboxRefusal> {
    let home = std::env::home_dir();
    plan_with_home(policy, home.as_deref())
}

pub(crate) fn plan_with_home(
    policy: &SandboxExecutionPolicy,
    home: Option<&Path>,
) -> Result<Option<WritePlan>, SandboxRefusal> {
    match policy.mode {
        SandboxMode::DangerFullAccess => Ok(None),
        SandboxMode::ReadOnly => Ok(Some(WritePlan {
            roots: Vec::new(),
            carve_outs: Vec::new(),
        })),
        SandboxMode::WorkspaceWrite => workspace_plan(policy, home).map(Some),
    }
}

fn workspace_plan(
    policy: &SandboxExecutionPolicy,
    home: Option<&Path>,
) -> Result<WritePlan, SandboxRefusal> {
    let workspace = policy.workspace_root.clone();
    if canonical_path(&workspace) != workspace {
        return Err(SandboxRefusal(format!(
            "workspace-write refused: the workspace {} resolves to {} through a symbolic \
             link; writes are confined only to a workspace reached without links (one may \
             have been put in its place), so start dsh in {} itself",
            workspace.display(),
            canonical_path(&workspace).display(),
            canonical_path(&workspace).display()
        )));
    }
    if !workspace.is_dir() {
        return Err(SandboxRefusal(format!(
            "workspace-write refused: the workspace {} is not an existing directory",
            workspace.display()
        )));
    }
    if let Some(what) = broad_workspace(&workspace, home) {
        return Err(SandboxRefusal(format!(
            "workspace-write refused: the workspace {} would make {what} writable to the \
             model's commands; start dsh in a project directory, or choose read-only or \
             danger-full-access explicitly",
            workspace.display()
        )));
    }
    // Named as given, but absolute (a relative entry is taken from the current directory).
    let named: Vec<ProtectedPath> = policy
        .protected_paths
        .iter()
        .map(|entry| {
            let path = std::path::absolute(&entry.path).unwrap_or_else(|_| entry.path.clone());
            ProtectedPath::new(path, entry.owner.clone())
        })
        .collect();
    let protected: Vec<ProtectedPath> = named
        .iter()
        .map(|entry| ProtectedPath::new(canonical_path(&entry.path), entry.owner.clone()))
        .filter(|entry| std::fs::symlink_metadata(&entry.path).is_ok())
        .collect();
    if let Some(holder) = protected.iter().find(|entry| workspace == entry.path) {
        return Err(SandboxRefusal(format!(
            "workspace-write refused: the workspace {} is itself {}, which the model's \
             commands may never write; move that out of the workspace, or start dsh in another \
             directory",
            workspace.display(),
            holder.owner
        )));
    }
    if let Some(holder) = protected
        .iter()
        .find(|entry| workspace.starts_with(&entry.path))
    {
        return Err(SandboxRefusal(format!(
            "workspace-write refused: the workspace {} lies inside {} ({}), which the \
             model's commands may never write; start dsh in a project directory outside it",
            workspace.display(),
            holder.path.display(),
            holder.owner
        )));
    }
    let mut roots = vec![workspace.clone()];
    for root in temp_roots(&workspace, home) {
        let inside = protected.iter().find(|entry| root.starts_with(&entry.path));
        if let Some(holder) = inside {
            tracing::warn!(
                "sandbox: the temp directory {} lies inside {} ({}); commands may not write it",
                root.display(),
                holder.path.display(),
                holder.owner
            );
        } else if !roots.contains(&root) {
            roots.push(root);
        }
    }
    for entry in &named {
        refuse_a_link_on_the_way(entry, &roots)?;
    }
    let mut carve_outs: Vec<ProtectedPath> = Vec::new();
    for entry in protected {
        let inside = roots.iter().any(|root| entry.path.starts_with(root));
        let covered = carve_outs
            .iter()
            .any(|kept| entry.path.starts_with(&kept.path));
        if inside && !covered {
            carve_outs.retain(|kept| !kept.path.starts_with(&entry.path));
            carve_outs.push(entry);
        }
    }
    for entry in &named {
        refuse_a_missing_path_inside(entry, &roots, &carve_outs)?;
    }
    Ok(WritePlan { roots, carve_outs })
}

/// Refuses a protected path named through a symbolic link that lies inside a writable root:
/// a command could replace the link, and the next `dsh` would take files of the command's
/// own for its control files (`DSH_HOME=ws/link-to-home`).
fn refuse_a_link_on_the_way(
    entry: &ProtectedPath,
    roots: &[PathBuf],
) -> Result<(), SandboxRefusal> {
    for link in links_on_the_way(&entry.path) {
        if let Some(root) = roots.iter().find(|root| link.starts_with(root)) {
            return Err(SandboxRefusal(format!(
                "workspace-write refused: the protected path {} ({}) passes through the \
                 symbolic link {} inside the writable {}; a command could replace the link \
                 and hand dsh files of its own. Name it by its real path, {}, or move it out \
                 of the workspace",
                entry.path.display(),
                entry.owner,
                link.display(),
                root.display(),
                canonical_path(&entry.path).display()
            )));
        }
    }
    Ok(())
}

/// Where each symbolic link on the way to `path` lies (resolved up to the link itself),
/// outermost first.
fn links_on_the_way(path: &Path) -> Vec<PathBuf> {
    let mut links = Vec::new();
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        let is_link =
            std::fs::symlink_metadata(&prefix).is_ok_and(|meta| meta.file_type().is_symlink());
        if is_link && let (Some(parent), Some(name)) = (prefix.parent(), prefix.file_name()) {
            links.push(canonical_path(parent).join(name));
        }
    }
    links
}

/// Refuses a protected path that does not exist inside a writable root (or is a link to
/// such a path), unless a carve-out already covers it: a command could create it, and its
/// owner would then read what the command put there.
fn refuse_a_missing_path_inside(
    entry: &ProtectedPath,
    roots: &[PathBuf],
    carve_outs: &[ProtectedPath],
) -> Result<(), SandboxRefusal> {
    if std::fs::metadata(&entry.path).is_ok() {
        return Ok(());
    }
    let location = resolved_location(&link_target(&entry.path));
    let covered = carve_outs
        .iter()
        .any(|kept| location.starts_with(&kept.path));
    match roots.iter().find(|root| location.starts_with(root)) {
        Some(root) if !covered => Err(SandboxRefusal(format!(
            "workspace-write refused: the protected path {} ({}) does not exist, and it lies \
             inside the writable {}, where a command could create it; create it (or stop \
             protecting it) before commands run",
            entry.path.display(),
            entry.owner,
            root.display()
        ))),
        _ => Ok(()),
    }
}

/// Where the chain of symbolic links at `path` ends (`path` itself when it is none; at most
/// 40 links are followed, as the kernel does).
fn link_target(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        current = match current.parent() {
            Some(parent) if target.is_relative() => parent.join(target),
            _ => target,
        };
    }
    current
}

/// `path` with its longest existing ancestor resolved and the rest appended.
fn resolved_location(path: &Path) -> PathBuf {
    for ancestor in path.ancestors().skip(1) {
        if ancestor.exists() {
            let rest = path.strip_prefix(ancestor).unwrap_or(path);
            return canonical_path(ancestor).join(rest);
        }
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::super::NetworkPolicy;
    use super::*;

    fn policy(
        mode: SandboxMode,
        root: &Path,
        protected: &[(&Path, &str)],
    ) -> SandboxExecutionPolicy {
        SandboxExecutionPolicy {
            mode,
            workspace_root: root.to_path_buf(),
            session_id: None,
            network: NetworkPolicy::Allow,
            protected_paths: protected
                .iter()
                .map(|(path, owner)| ProtectedPath::new(*path, *owner))
                .collect(),
        }
    }

    #[test]
    fn modes_decide_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let home = PathBuf::from("/nonexistent-dsh-test-home");
        let plan = |mode| plan_with_home(&policy(mode, &root, &[]), Some(&home)).unwrap();
        assert_eq!(plan(SandboxMode::DangerFullAccess), None);
        assert_eq!(
            plan(SandboxMode::ReadOnly).unwrap().roots,
            Vec::<PathBuf>::new()
        );
        let roots = plan(SandboxMode::WorkspaceWrite).unwrap().roots;
        assert_eq!(roots.first(), Some(&root));
        assert!(roots.contains(&canonical_path(Path::new("/tmp"))));
    }

    #[test]
    fn protected_paths_inside_a_root_become_carve_outs() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let dsh_home = root.join(".dsh");
        let sessions = dsh_home.join("sessions");
        let patch = root.join("extra.patch.yml");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(&patch, "[]\n").unwrap();
        let elsewhere = Path::new("/nonexistent-dsh-test/store");
        let not_yet = dsh_home.join("not-created-yet");
        let plan = plan_with_home(
            &policy(
                SandboxMode::WorkspaceWrite,
                &root,
                &[
                    (&sessions, "the session store"),
                    (&dsh_home, "dsh's home ($DSH_HOME)"),
                    (&patch, "a patch layer"),
                    (elsewhere, "a store outside every root"),
                    (&not_yet, "inside a carve-out"),
                ],
            ),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            plan.carve_outs,
            vec![
                ProtectedPath::new(&dsh_home, "dsh's home ($DSH_HOME)"),
                ProtectedPath::new(&patch, "a patch layer"),
            ],
            "the store inside the home is covered by it; the outside one and the missing one \
             the home covers need nothing"
        );
        let read_only = plan_with_home(
            &policy(SandboxMode::ReadOnly, &root, &[(&dsh_home, "home")]),
            None,
        )
        .unwrap()
        .unwrap();
        assert!(read_only.carve_outs.is_empty());
    }

    #[test]
    fn a_missing_protected_path_inside_a_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let missing = root.join("later/settings");
        let refusal = plan_with_home(
            &policy(SandboxMode::WorkspaceWrite, &root, &[(&missing, "kept")]),
            None,
        )
        .unwrap_err();
        assert_eq!(
            refusal.0,
            format!(
                "workspace-write refused: the protected path {} (kept) does not exist, and it \
                 lies inside the writable {}, where a command could create it; create it (or \
                 stop protecting it) before commands run",
                missing.display(),
                root.display()
            )
        );
    }

    #[test]
    fn a_link_outside_the_roots_to_a_missing_path_inside_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let link = outside.path().join("settings");
        std::os::unix::fs::symlink(root.join("later"), &link).unwrap();
        let refusal = plan_with_home(
            &policy(SandboxMode::WorkspaceWrite, &root, &[(&link, "kept")]),
            None,
        )
        .unwrap_err();
        assert!(
            refusal.0.contains(&format!(
                "the protected path {} (kept) does not exist, and it lies inside the writable {}",
                link.display(),
                root.display()
            )),
            "{refusal}"
        );
    }

    #[test]
    fn a_protected_path_named_through_a_link_inside_a_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::os::unix::fs::symlink(&home, root.join("link")).unwrap();
        let named = root.join("link");
        let refusal = plan_with_home(
            &policy(
                SandboxMode::WorkspaceWrite,
                &root,
                &[(&named, "dsh's home")],
            ),
            None,
        )
        .unwrap_err();
        assert!(
            refusal.0.contains(&format!(
                "the protected path {} (dsh's home) passes through the symbolic link {} inside \
                 the writable {}",
                named.display(),
                named.display(),
                root.display()
            )) && refusal
                .0
                .contains(&format!("Name it by its real path, {}", home.display())),
            "{refusal}"
        );
        // A link outside every root (not under /tmp) cannot be replaced by a command: the
        // path is kept.
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let link = outside.path().join("link");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let plan = plan_with_home(
            &policy(SandboxMode::WorkspaceWrite, &root, &[(&link, "dsh's home")]),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            plan.carve_outs,
            vec![ProtectedPath::new(&home, "dsh's home")]
        );
    }

    #[test]
    fn broad_or_protected_workspaces_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_path(dir.path());
        let refused = |workspace: &Path, protected: &[(&Path, &str)], home: Option<&Path>| {
            plan_with_home(
                &policy(SandboxMode::WorkspaceWrite, workspace, protected),
                home,
            )
            .unwrap_err()
            .0
        };
        assert!(refused(Path::new("/"), &[], None).contains("every file on this machine"));
        assert!(refused(&root.join("gone"), &[], None).contains("is not an existing directory"));
        let home = root.join("me");
        std::fs::create_dir_all(&home).unwrap();
        assert!(refused(&root, &[], Some(&home)).contains("every home directory under it"));
        let inner = root.join(".dsh/skills");
        std::fs::create_dir_all(&inner).unwrap();
        let message = refused(
            &inner,
            &[(&root.join(".dsh"), "dsh's home ($DSH_HOME)")],
            None,
        );
        assert!(
            message.contains("lies inside") && message.contains("dsh's home ($DSH_HOME)"),
            "{message}"
        );
    }
}
