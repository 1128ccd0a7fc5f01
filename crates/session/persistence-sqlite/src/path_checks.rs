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

use dsh_persistence::{BackendError, file_kind};
use nix::fcntl::OFlag;
use nix::unistd::{AccessFlags, access};

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

/// Flags of every open of the database file here: never follow a link, never block (a FIFO),
/// never take a terminal.
fn inspect_flags() -> i32 {
    (OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits()
}

/// The database file as found: what the opened descriptor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    /// Its size in bytes (0 for a file that is no database yet).
    pub len: u64,
}

/// Checks the parent directory if it exists, and the file if it exists; creates nothing.
/// `Ok(None)` when there is no file.
pub(crate) fn check_existing(path: &Path) -> Result<Option<Found>, BackendError> {
    if let Some(parent) = path.parent() {
        match fs::symlink_metadata(parent) {
            Ok(meta) => check_parent(parent, &meta)?,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(io("inspecting", parent, error)),
        }
    }
    let Some(meta) = open_regular(path)? else {
        return Ok(None);
    };
    check_file(path, &meta)?;
    Ok(Some(Found { len: meta.len() }))
}

/// Opens the file as a regular file (see [`inspect_flags`]) and returns the metadata of the
/// opened descriptor, so nothing swapped in after a check is taken for the database.
fn open_regular(path: &Path) -> Result<Option<fs::Metadata>, BackendError> {
    // Looked at before it is opened: opening a device can act on it.
    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => return Err(not_a_file(path, meta.file_type())),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io("inspecting", path, error)),
    }
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(inspect_flags())
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            // A link (ELOOP) or anything else that is not a file: say what is there.
            return Err(match fs::symlink_metadata(path) {
                Ok(meta) if !meta.file_type().is_file() => not_a_file(path, meta.file_type()),
                _ => io("inspecting", path, error),
            });
        }
    };
    let meta = file
        .metadata()
        .map_err(|error| io("inspecting", path, error))?;
    if !meta.file_type().is_file() {
        return Err(not_a_file(path, meta.file_type()));
    }
    Ok(Some(meta))
}

fn not_a_file(path: &Path, file_type: fs::FileType) -> BackendError {
    let hint = if file_type.is_symlink() {
        "dsh never opens the database through a link, so point the row's `path` at the file \
         itself"
    } else {
        "move it away, or point the row's `path` at a database file"
    };
    BackendError::Invalid(format!(
        "session database \"{}\" is {}, not a regular file; {hint}",
        path.display(),
        file_kind(file_type)
    ))
}

/// Creates the parent (`0700`) and the file (`0600`, exclusively) when missing, then checks
/// both. Call [`write_refusal`] first: creating either is a write.
pub(crate) fn prepare_for_write(path: &Path) -> Result<(), BackendError> {
    if let Some(parent) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| io("creating", parent, error))?;
        let meta = fs::symlink_metadata(parent).map_err(|error| io("inspecting", parent, error))?;
        check_parent(parent, &meta)?;
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
    let meta = open_regular(path)?.ok_or_else(|| {
        io(
            "opening",
            path,
            io::Error::new(io::ErrorKind::NotFound, "the database file vanished"),
        )
    })?;
    check_file(path, &meta)
}

fn check_parent(parent: &Path, meta: &fs::Metadata) -> Result<(), BackendError> {
    if !meta.file_type().is_dir() {
        return Err(BackendError::Invalid(format!(
            "session database parent \"{}\" is {}, not a real directory; point the row's \
             `path` into a directory",
            parent.display(),
            file_kind(meta.file_type())
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

fn check_file(path: &Path, meta: &fs::Metadata) -> Result<(), BackendError> {
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
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.mode() & 0o044 != 0) {
        tracing::warn!(
            "session database {} is readable by other users; `chmod 600` it to keep sessions \
             private",
            path.display()
        );
    }
}

/// Why this process must not write the database at `path`, if it must not. The owner's
/// write bit of the file and of its directory decide, not only `access()`: root passes
/// `access()` for any file, but a database (or directory) its owner made read-only is not
/// written, whoever runs. `access()` still catches what the bits do not (a read-only mount).
/// A file or directory that does not exist yet refuses nothing (the write creates it).
pub(crate) fn write_refusal(path: &Path) -> Result<Option<String>, BackendError> {
    let writable = |target: &Path| access(target, AccessFlags::W_OK).is_ok();
    if let Some(parent) = path.parent() {
        match fs::symlink_metadata(parent) {
            Ok(meta) if meta.mode() & 0o200 == 0 || !writable(parent) => {
                return Ok(Some(format!(
                    "the directory \"{}\" of the session database is read-only (mode {:04o}), \
                     and SQLite keeps its journal beside the database; make the directory \
                     writable (`chmod u+w`) to write sessions",
                    parent.display(),
                    meta.mode() & 0o7777
                )));
            }
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(io("inspecting", parent, error)),
        }
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.mode() & 0o200 == 0 || !writable(path) => Ok(Some(format!(
            "session database at \"{}\" is read-only (mode {:04o}), and dsh does not write to \
             a database its owner made read-only, even as root; make it writable (`chmod u+w`) \
             to write sessions to it",
            path.display(),
            meta.mode() & 0o7777
        ))),
        Ok(_) => Ok(None),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io("inspecting", path, error)),
    }
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
        assert!(
            error.contains("is a symbolic link, not a regular file"),
            "{error}"
        );

        fs::set_permissions(&target, fs::Permissions::from_mode(0o620)).unwrap();
        let error = check_existing(&target).unwrap_err().to_string();
        assert!(error.contains("chmod 600"), "{error}");

        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(check_existing(&target).unwrap(), Some(Found { len: 0 }));

        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        let error = check_existing(&shared.join("db.sqlite"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("group/world-writable"), "{error}");
    }

    #[test]
    fn a_fifo_or_a_directory_is_named_for_what_it_is_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.sqlite");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            check_existing(&fifo).unwrap_err().to_string(),
            format!(
                "session database \"{}\" is a FIFO, not a regular file; move it away, or point \
                 the row's `path` at a database file",
                fifo.display()
            )
        );
        // Opened directly, as a FIFO swapped in after a check would be: no wait either.
        assert!(
            open_regular(&fifo)
                .unwrap_err()
                .to_string()
                .contains("is a FIFO")
        );
        let directory = dir.path().join("dir.sqlite");
        fs::create_dir(&directory).unwrap();
        let error = check_existing(&directory).unwrap_err().to_string();
        assert!(
            error.contains("is a directory, not a regular file"),
            "{error}"
        );
        let error = check_existing(&fifo.join("db.sqlite"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("parent") && error.contains("is a FIFO, not a real directory"),
            "{error}"
        );
    }

    #[test]
    fn the_owners_write_bits_decide_even_for_root() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        fs::create_dir(&home).unwrap();
        let file = home.join("sessions.sqlite");
        assert_eq!(
            write_refusal(&file).unwrap(),
            None,
            "a missing file refuses nothing"
        );
        fs::write(&file, b"").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(write_refusal(&file).unwrap(), None);

        fs::set_permissions(&file, fs::Permissions::from_mode(0o400)).unwrap();
        let refusal = write_refusal(&file).unwrap().unwrap();
        assert!(
            refusal.contains("is read-only (mode 0400)") && refusal.contains("chmod u+w"),
            "{refusal}"
        );

        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&home, fs::Permissions::from_mode(0o500)).unwrap();
        let refusal = write_refusal(&file).unwrap().unwrap();
        fs::set_permissions(&home, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(
            refusal.contains(&format!("the directory \"{}\"", home.display()))
                && refusal.contains("(mode 0500)"),
            "{refusal}"
        );
    }
}
