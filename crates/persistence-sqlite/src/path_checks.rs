//! Where the database may live: a private directory and a private regular file.
//!
//! Session logs hold everything a model saw, so the database gets dsh's checks: its directory
//! is a real directory owned by the current user and not writable by group or others, and the
//! file is a regular file (never a symbolic link) owned by the current user. We create both
//! private (`0700`, `0600`).
//!
//! Two deliberate differences from dsh 0.1. A database file that group or others may *read*
//! (a backup restored with `cp`, say) is opened instead of refused, since refusing does not
//! make it private (writing into it logs a warning to `chmod 600` it); group or other *write* permission is refused, as dsh
//! does, since another user could then rewrite history. And a file its owner made read-only is
//! read without taking a lock or leaving lock files behind (see `Database::open_read_only`),
//! instead of failing, or worse, leaving a read-only `-shm` that breaks the next writer.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use dsh_persistence::BackendError;

/// What the backend is pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabasePath {
    /// A database in this process's memory (`:memory:`), gone when the backend closes.
    Memory,
    /// A database file (absolute).
    File(PathBuf),
}

impl DatabasePath {
    /// Reads a configured path: `:memory:`, or a file path resolved against the current
    /// directory.
    pub fn resolve(configured: &Path) -> Result<Self, BackendError> {
        if configured.as_os_str() == ":memory:" {
            return Ok(Self::Memory);
        }
        if configured.as_os_str().is_empty() {
            return Err(BackendError::Invalid(
                "the SQLite session database path is empty; set the row's `path`".into(),
            ));
        }
        let absolute = std::path::absolute(configured).map_err(|source| BackendError::Io {
            action: "resolving",
            path: configured.to_path_buf(),
            source,
        })?;
        Ok(Self::File(absolute))
    }

    /// The path as messages show it.
    pub fn display(&self) -> String {
        match self {
            Self::Memory => ":memory:".into(),
            Self::File(path) => path.display().to_string(),
        }
    }
}

fn io(action: &'static str, path: &Path, source: io::Error) -> BackendError {
    BackendError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn current_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Checks the parent directory if it exists, and the file if it exists; creates nothing.
pub(crate) fn check_existing(path: &Path) -> Result<(), BackendError> {
    if let Some(parent) = path.parent() {
        match fs::symlink_metadata(parent) {
            Ok(_) => check_parent(parent)?,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(io("inspecting", parent, error)),
        }
    }
    match fs::symlink_metadata(path) {
        Ok(_) => check_file(path),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io("inspecting", path, error)),
    }
}

/// Whether the database file exists (as anything, so a dangling link is still refused).
pub(crate) fn exists(path: &Path) -> Result<bool, BackendError> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io("inspecting", path, error)),
    }
}

/// Creates the parent (`0700`) and the file (`0600`, exclusively) when missing, then checks
/// both.
pub(crate) fn prepare_for_write(path: &Path) -> Result<(), BackendError> {
    if let Some(parent) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| io("creating", parent, error))?;
        check_parent(parent)?;
    }
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io("creating", path, error)),
    }
    check_file(path)
}

fn check_parent(parent: &Path) -> Result<(), BackendError> {
    let meta = fs::symlink_metadata(parent).map_err(|error| io("inspecting", parent, error))?;
    if !meta.file_type().is_dir() {
        return Err(BackendError::Invalid(format!(
            "session database parent \"{}\" must be a real directory",
            parent.display()
        )));
    }
    if meta.uid() != current_uid() || meta.mode() & 0o022 != 0 {
        return Err(BackendError::Invalid(format!(
            "session database parent \"{}\" must be owned by the current user and not \
             group/world-writable (fix it with `chmod go-w`, or choose another path)",
            parent.display()
        )));
    }
    Ok(())
}

fn check_file(path: &Path) -> Result<(), BackendError> {
    let meta = fs::symlink_metadata(path).map_err(|error| io("inspecting", path, error))?;
    if !meta.file_type().is_file() {
        return Err(BackendError::Invalid(format!(
            "session database \"{}\" must be a regular file, not a symbolic link",
            path.display()
        )));
    }
    if meta.uid() != current_uid() || meta.mode() & 0o022 != 0 {
        return Err(BackendError::Invalid(format!(
            "session database \"{}\" must be owned by the current user and writable only by \
             that user (fix it with `chmod 600`)",
            path.display()
        )));
    }
    Ok(())
}

/// Warns (once per open) when other users may read the database.
pub(crate) fn warn_if_shared(path: &Path) {
    if fs::metadata(path).is_ok_and(|meta| meta.mode() & 0o044 != 0) {
        tracing::warn!(
            "session database {} is readable by other users; `chmod 600` it to keep sessions \
             private",
            path.display()
        );
    }
}

/// Whether this process may write the file (its owner may have made it read-only).
pub(crate) fn writable(path: &Path) -> bool {
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// The `-wal` file beside `path`, when it holds anything.
pub(crate) fn pending_wal(path: &Path) -> Option<PathBuf> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = PathBuf::from(wal);
    fs::metadata(&wal)
        .is_ok_and(|meta| meta.len() > 0)
        .then_some(wal)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn memory_and_relative_paths_resolve() {
        assert_eq!(
            DatabasePath::resolve(Path::new(":memory:")).unwrap(),
            DatabasePath::Memory
        );
        let DatabasePath::File(path) = DatabasePath::resolve(Path::new("x/db.sqlite")).unwrap()
        else {
            unreachable!("a file path")
        };
        assert!(path.is_absolute() && path.ends_with("x/db.sqlite"));
        assert!(DatabasePath::resolve(Path::new("")).is_err());
    }

    #[test]
    fn a_new_database_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/sessions.sqlite");
        prepare_for_write(&path).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }

    #[test]
    fn links_shared_directories_and_writable_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.sqlite");
        fs::write(&target, b"").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.sqlite");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = check_existing(&link).unwrap_err().to_string();
        assert!(error.contains("not a symbolic link"), "{error}");

        fs::set_permissions(&target, fs::Permissions::from_mode(0o620)).unwrap();
        let error = check_existing(&target).unwrap_err().to_string();
        assert!(error.contains("chmod 600"), "{error}");

        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        check_existing(&target).unwrap();

        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        let error = check_existing(&shared.join("db.sqlite"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("group/world-writable"), "{error}");
    }
}
