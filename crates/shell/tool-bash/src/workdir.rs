//! Where a command runs: the session's workspace unless the model names a directory.

use std::path::{Path, PathBuf};

use dsh_shell::canonical_path;

/// The working directory of one call (dsh's `resolveWorkdir`).
///
/// The session's directory is its `cwd` with symbolic links resolved (as dsh's
/// `canonicalPath`; the path as written when it cannot be resolved). No argument: the
/// session's directory; a relative argument: resolved against it; an absolute one: as it is.
/// Without a session, `None` lets the executor use its default, and a relative argument is
/// passed as is.
pub fn resolve_workdir(requested: Option<&str>, session_cwd: Option<&str>) -> Option<PathBuf> {
    let session = session_cwd.map(|cwd| canonical_path(Path::new(cwd)));
    match (requested, session) {
        (None, session) => session,
        (Some(dir), Some(session)) if !Path::new(dir).is_absolute() => Some(session.join(dir)),
        (Some(dir), _) => Some(PathBuf::from(dir)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_directory_is_the_default_and_the_base_of_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let cwd = dir.path().to_str().unwrap();
        assert_eq!(resolve_workdir(None, Some(cwd)), Some(real.clone()));
        assert_eq!(
            resolve_workdir(Some("sub"), Some(cwd)),
            Some(real.join("sub"))
        );
        assert_eq!(
            resolve_workdir(Some("/etc"), Some(cwd)),
            Some("/etc".into())
        );
        assert_eq!(resolve_workdir(None, None), None);
        assert_eq!(resolve_workdir(Some("rel"), None), Some("rel".into()));
        assert_eq!(
            resolve_workdir(None, Some("/no/such/dir")),
            Some("/no/such/dir".into())
        );
    }
}
