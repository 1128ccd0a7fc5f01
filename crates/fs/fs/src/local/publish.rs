//! Atomic publication: content staged in a private directory next to the target, then
//! renamed over it (or hard-linked, for a create that must not replace anything).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use crate::error::{FsError, FsErrorCode};

use super::resolve::quoted;

/// How the staged file replaces the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Publish {
    /// `rename`: replaces whatever file is there.
    Replace,
    /// `link`: fails when anything is there, so a racing creator is kept.
    CreateOnly,
}

/// Writes `content` to `target` atomically. New files are owner-only (0600); a replaced
/// file keeps `mode`.
pub(crate) fn write_file_atomic(
    target: &Path,
    display: &str,
    content: &[u8],
    mode: Option<u32>,
    publish: Publish,
) -> Result<(), FsError> {
    let dir = target.parent().unwrap_or_else(|| Path::new("/"));
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::create_dir_all(dir).map_err(|error| plain(display, &error))?;
    let staging = dir.join(format!(
        ".{name}.{}.{}.tmpdir",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&staging)
        .and_then(|()| std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o700)))
        .map_err(|error| plain(display, &error))?;
    let result = stage_and_publish(&staging, &name, target, display, content, mode, publish);
    if let Err(error) = std::fs::remove_dir_all(&staging)
        && result.is_err()
    {
        tracing::warn!("fs: cannot remove {}: {error}", staging.display());
    }
    result
}

fn stage_and_publish(
    staging: &Path,
    name: &str,
    target: &Path,
    display: &str,
    content: &[u8],
    mode: Option<u32>,
    publish: Publish,
) -> Result<(), FsError> {
    let temp: PathBuf = staging.join(format!("{name}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(&temp)
        .map_err(|error| plain(display, &error))?;
    file.write_all(content)
        .and_then(|()| file.sync_all())
        .map_err(|error| plain(display, &error))?;
    // Owner-only whatever the umask; a replaced file keeps its permission bits but never
    // setuid, setgid or sticky (content the model wrote must not run with raised rights).
    let mode = mode.map_or(0o600, |mode| mode & 0o777);
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|error| plain(display, &error))?;
    drop(file);
    match publish {
        Publish::Replace => std::fs::rename(&temp, target).map_err(|error| plain(display, &error)),
        Publish::CreateOnly => std::fs::hard_link(&temp, target).map_err(|error| {
            match std::fs::symlink_metadata(target) {
                Ok(meta) if !meta.is_file() => FsError::new(
                    FsErrorCode::NotRegularFile,
                    format!("cannot write {}: not a regular file", quoted(display)),
                ),
                Ok(_) => not_observed(display),
                Err(_) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    not_observed(display)
                }
                Err(_) => FsError::new(
                    FsErrorCode::IoError,
                    format!("cannot write {}: {error}", quoted(display)),
                ),
            }
        }),
    }
}

/// `cannot overwrite existing "<p>" without reading it first` (`FS_NOT_OBSERVED`).
pub(crate) fn not_observed(display: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotObserved,
        format!(
            "cannot overwrite existing {} without reading it first",
            quoted(display)
        ),
    )
}

/// An operating-system failure while writing: dsh passes these through without a code.
fn plain(display: &str, error: &std::io::Error) -> FsError {
    FsError::plain(
        format!("cannot write {}: {error}", quoted(display)),
        std::io::Error::new(error.kind(), error.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    #[test]
    fn new_files_are_owner_only_and_replacements_keep_their_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/f.txt");
        write_file_atomic(&path, "/f", b"one", None, Publish::CreateOnly).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        write_file_atomic(&path, "/f", b"two", Some(0o644), Publish::Replace).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o644);
        write_file_atomic(&path, "/f", b"three", Some(0o4755), Publish::Replace).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().mode() & 0o7777,
            0o755,
            "no setuid"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"three");
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "the staging directory is removed");
    }

    #[test]
    fn a_create_only_publication_keeps_a_competitor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "theirs").unwrap();
        let error = write_file_atomic(&path, "/f", b"ours", None, Publish::CreateOnly).unwrap_err();
        assert_eq!(error.code(), Some(FsErrorCode::NotObserved));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let error = write_file_atomic(&path, "/f", b"ours", None, Publish::CreateOnly).unwrap_err();
        assert_eq!(error.message(), "cannot write \"/f\": not a regular file");
    }
}
