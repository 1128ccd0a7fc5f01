//! The writable roots of `workspace-write` and the checks that keep them narrow: a workspace
//! that would open the whole machine is refused, and a temp directory that would widen the
//! roots (`TMPDIR=/`, `TMPDIR=$HOME`, a missing directory) is left out with a warning.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dsh_kernel::sync::lock;

use super::canonical_path;

/// The temp directory every `workspace-write` command may write, as dsh grants it.
pub const SHARED_TMP: &str = "/tmp";

/// Why a workspace is too broad to be a writable root.
pub(crate) fn broad_workspace(root: &Path, home: Option<&Path>) -> Option<&'static str> {
    if root.parent().is_none() {
        return Some("every file on this machine");
    }
    let home = home.map(canonical_path)?;
    if home == root {
        return Some(
            "every file in your home directory (shell start-up files and SSH keys among them)",
        );
    }
    home.starts_with(root)
        .then_some("every home directory under it")
}

/// Why `candidate` (a resolved temp directory) cannot be a writable root next to the
/// workspace `workspace`: `None` when it can.
pub(crate) fn temp_root_problem(
    candidate: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Option<String> {
    if !candidate.is_absolute() {
        return Some("it is not an absolute path".to_owned());
    }
    match std::fs::metadata(candidate) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Some("it is not a directory".to_owned()),
        Err(error) => return Some(format!("it cannot be used ({error})")),
    }
    if candidate.parent().is_none() {
        return Some("it is the root directory, which would make every file writable".to_owned());
    }
    if candidate != workspace && workspace.starts_with(candidate) {
        return Some(format!(
            "it contains the workspace {}, which would widen the writable area",
            workspace.display()
        ));
    }
    if let Some(home) = home.map(canonical_path)
        && home.starts_with(candidate)
    {
        return Some(format!(
            "it contains the home directory {}, which would make it writable",
            home.display()
        ));
    }
    None
}

/// The temp roots of a `workspace-write` call in `workspace`: `/tmp` (dsh's fixed one, as
/// it resolves, unless that is `/` or no directory) and the OS temp directory (`$TMPDIR`),
/// which adds a root only when it lies outside `/tmp`, resolves to itself (no symbolic link
/// on its way: a command able to write a directory above it could have put one there, in
/// this run or an earlier one) and [`temp_root_problem`] finds nothing; a rejected one is
/// logged once per value and left out.
pub(crate) fn temp_roots(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let shared = canonical_path(Path::new(SHARED_TMP));
    if shared.parent().is_some() && shared.is_dir() {
        roots.push(shared);
    } else {
        warn_once(
            "/tmp",
            Path::new(SHARED_TMP),
            "it is not a directory below the root",
        );
    }
    let raw = std::env::temp_dir();
    if roots.iter().any(|root| raw.starts_with(root)) || raw == Path::new(SHARED_TMP) {
        return roots;
    }
    let resolved = canonical_path(&raw);
    let problem = if resolved != raw && raw.is_absolute() {
        Some(format!(
            "it resolves to {} through a symbolic link",
            resolved.display()
        ))
    } else {
        temp_root_problem(&resolved, workspace, home)
    };
    match problem {
        None if !roots.contains(&resolved) => roots.push(resolved),
        None => {}
        Some(problem) => warn_once("TMPDIR", &raw, &problem),
    }
    roots
}

/// Logs a rejected temp root once per process and value.
fn warn_once(name: &str, raw: &Path, problem: &str) {
    static WARNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let fresh = lock(&WARNED).insert(raw.to_path_buf());
    if fresh {
        tracing::warn!(
            "sandbox: {name} {} is not a writable root for commands because {problem}; \
             commands may write the workspace and the other temp directories only",
            raw.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_and_ancestors_of_home_are_broad_workspaces() {
        let home = Path::new("/home/me");
        assert_eq!(
            broad_workspace(Path::new("/"), Some(home)),
            Some("every file on this machine")
        );
        assert_eq!(
            broad_workspace(Path::new("/home"), Some(home)),
            Some("every home directory under it")
        );
        assert!(broad_workspace(home, Some(home)).is_some_and(|what| what.contains("SSH keys")));
        assert_eq!(broad_workspace(Path::new("/home/me/p"), Some(home)), None);
        assert_eq!(broad_workspace(Path::new("/srv"), None), None);
    }

    #[test]
    fn temp_roots_that_widen_or_do_not_exist_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let base = canonical_path(dir.path());
        let workspace = base.join("work");
        let home = base.join("home");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let file = base.join("file");
        std::fs::write(&file, "x").unwrap();
        let problem = |candidate: &Path| temp_root_problem(candidate, &workspace, Some(&home));
        assert!(problem(Path::new("/")).unwrap().contains("root directory"));
        assert!(problem(&base).unwrap().contains("contains the workspace"));
        assert!(
            problem(&home)
                .unwrap()
                .contains("contains the home directory")
        );
        assert!(problem(&file).unwrap().contains("not a directory"));
        assert!(
            problem(&base.join("missing"))
                .unwrap()
                .contains("cannot be used")
        );
        assert!(problem(Path::new("relative")).unwrap().contains("absolute"));
        let fine = base.join("tmp");
        std::fs::create_dir_all(&fine).unwrap();
        assert_eq!(problem(&fine), None);
        assert_eq!(
            problem(&workspace),
            None,
            "the workspace itself adds nothing"
        );
    }
}
