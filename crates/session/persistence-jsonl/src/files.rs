//! File mechanics: stable reads, revisions, durable directory creation, atomic publish,
//! append with rollback, truncation.
//!
//! A log is only ever opened as a regular file: every open refuses to follow a symbolic link
//! and cannot block (`O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`), and the opened descriptor is
//! checked with `fstat` before anything is read or written, so a FIFO, a device or a
//! directory swapped in after a check is still refused, never waited on.

use std::fs::{self, DirBuilder, File, FileType, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use dsh_persistence::{BackendError, file_kind};
use nix::fcntl::OFlag;

/// Flags of every open of a log: never follow a link, never block, never take a terminal.
fn log_open_flags() -> i32 {
    (OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits()
}

/// The refusal of a log path that holds something other than a regular file.
pub(crate) fn not_a_regular_file(path: &Path, file_type: FileType) -> BackendError {
    let hint = if file_type.is_symlink() {
        "dsh never reads a session log through a link, so put the log itself there or move the \
         link out of the session store"
    } else {
        "move it out of the session store"
    };
    BackendError::Invalid(format!(
        "session log \"{}\" is {}, not a regular file; {hint}",
        path.display(),
        file_kind(file_type)
    ))
}

/// How a log is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// For reading.
    Read,
    /// For appending.
    Append,
    /// For writing in place (truncation, rollback).
    Write,
}

/// Opens an existing log as a regular file (see the module comment) and returns it with the
/// metadata of the opened descriptor; `Ok(None)` when nothing is at `path`.
pub(crate) fn open_log(
    path: &Path,
    access: Access,
) -> Result<Option<(File, fs::Metadata)>, BackendError> {
    // What is there is looked at first: merely opening a device can act (a watchdog arms,
    // a tape rewinds), so only a regular file is opened; the descriptor is checked again
    // below, so a swap between the two is caught.
    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(not_a_regular_file(path, meta.file_type()));
        }
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error("reading the metadata of", path, error)),
    }
    let mut options = OpenOptions::new();
    match access {
        Access::Read => options.read(true),
        Access::Append => options.append(true),
        Access::Write => options.write(true),
    };
    let file = match options.custom_flags(log_open_flags()).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            // A link (ELOOP), a FIFO without a reader (ENXIO), a directory (EISDIR): say
            // what is there rather than the errno.
            return Err(match fs::symlink_metadata(path) {
                Ok(meta) if !meta.file_type().is_file() => {
                    not_a_regular_file(path, meta.file_type())
                }
                _ => io_error("opening", path, error),
            });
        }
    };
    let meta = file
        .metadata()
        .map_err(|error| io_error("reading the metadata of", path, error))?;
    if !meta.file_type().is_file() {
        return Err(not_a_regular_file(path, meta.file_type()));
    }
    Ok(Some((file, meta)))
}

/// [`open_log`] of a log that must exist.
fn open_existing(path: &Path, access: Access) -> Result<(File, fs::Metadata), BackendError> {
    open_log(path, access)?.ok_or_else(|| {
        io_error(
            "opening",
            path,
            io::Error::new(io::ErrorKind::NotFound, "no such file"),
        )
    })
}

pub(crate) fn io_error(action: &'static str, path: &Path, source: io::Error) -> BackendError {
    BackendError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// `"<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>"`, dsh's JSONL revision.
pub(crate) fn revision_of(meta: &fs::Metadata) -> String {
    let nanos = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
    format!(
        "{}:{}:{}:{}:{}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        nanos(meta.mtime(), meta.mtime_nsec()),
        nanos(meta.ctime(), meta.ctime_nsec())
    )
}

/// The file's revision (of the path itself, never of a link's target); `None` when it does
/// not exist.
pub(crate) fn revision(path: &Path) -> Result<Option<String>, BackendError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(revision_of(&meta))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io_error("reading the metadata of", path, error)),
    }
}

/// Reads the whole log, retrying until the opened file's revision is the same before and
/// after the read.
pub(crate) fn read_stable(path: &Path) -> Result<(Vec<u8>, String), BackendError> {
    loop {
        let (mut file, before) = open_existing(path, Access::Read)?;
        let mut bytes = Vec::with_capacity(usize::try_from(before.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| io_error("reading", path, e))?;
        let after = file
            .metadata()
            .map_err(|e| io_error("reading the metadata of", path, e))?;
        let revision = revision_of(&after);
        if revision_of(&before) == revision {
            return Ok((bytes, revision));
        }
    }
}

/// Reads at most the first `limit` bytes of a log, in 8 KiB chunks until `enough` says to
/// stop.
pub(crate) fn read_prefix_until(
    path: &Path,
    limit: usize,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Result<Vec<u8>, BackendError> {
    let (mut file, _) = open_existing(path, Access::Read)?;
    let mut bytes = Vec::new();
    let mut chunk = [0_u8; 8192];
    while bytes.len() < limit {
        let read = file
            .read(&mut chunk)
            .map_err(|e| io_error("reading", path, e))?;
        if read == 0 {
            break;
        }
        bytes.extend_from_slice(chunk.get(..read).unwrap_or_default());
        if enough(&bytes) {
            break;
        }
    }
    Ok(bytes)
}

fn sync_dir(dir: &Path) -> Result<(), BackendError> {
    OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_DIRECTORY | OFlag::O_NONBLOCK).bits())
        .open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(|e| io_error("syncing the directory", dir, e))
}

/// Creates `dir` (mode 0700) and fsyncs its parent so the entry is durable.
pub(crate) fn make_dir_durable(dir: &Path) -> Result<(), BackendError> {
    match DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) => return Err(io_error("creating the directory", dir, error)),
    }
    if let Some(parent) = dir.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Publishes `content` at `final_path` without ever overwriting: write a synced temp file,
/// hard-link it into place (failing if the name exists), sync the directory, remove the temp.
pub(crate) fn publish_new(final_path: &Path, content: &[u8]) -> Result<(), BackendError> {
    let tmp = temp_path(final_path);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(content)?;
        file.sync_all()
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_error("writing the temporary file", &tmp, error));
    }
    let linked = fs::hard_link(&tmp, final_path);
    if let Err(error) = linked {
        let _ = fs::remove_file(&tmp);
        if error.kind() == io::ErrorKind::AlreadyExists {
            return Err(BackendError::Invalid(format!(
                "refusing to publish {}: a log already exists there (load or resume it instead)",
                final_path.display()
            )));
        }
        return Err(io_error("publishing", final_path, error));
    }
    // Published: from here on a failure must not be reported as "not written", or the caller
    // would retry a first write onto a log that exists.
    if let Some(dir) = final_path.parent()
        && let Err(error) = sync_dir(dir)
    {
        tracing::warn!(
            "the new log {} may not survive a power loss yet: {error}",
            final_path.display()
        );
    }
    if let Err(error) = fs::remove_file(&tmp) {
        tracing::warn!(
            "could not remove the temporary file {}: {error}",
            tmp.display()
        );
    }
    Ok(())
}

fn temp_path(final_path: &Path) -> PathBuf {
    let mut name = final_path.as_os_str().to_owned();
    name.push(format!(
        ".{:012x}.tmp",
        fastrand::u64(..) & 0xffff_ffff_ffff
    ));
    PathBuf::from(name)
}

/// A log opened for appending, with its length at the open.
#[derive(Debug)]
pub(crate) struct AppendTarget {
    file: File,
    prior: u64,
}

/// Opens an existing log for [`append_durable`]; `Ok(None)` when nothing is at `path`.
pub(crate) fn open_for_append(path: &Path) -> Result<Option<AppendTarget>, BackendError> {
    Ok(
        open_log(path, Access::Append)?.map(|(file, meta)| AppendTarget {
            file,
            prior: meta.len(),
        }),
    )
}

/// Appends `bytes` to the log opened at `path` and fsyncs. On failure the file is cut back
/// to its prior size, so a retry writes no duplicate.
pub(crate) fn append_durable(
    target: AppendTarget,
    path: &Path,
    bytes: &[u8],
) -> Result<(), BackendError> {
    let AppendTarget { mut file, prior } = target;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    let Err(error) = written else { return Ok(()) };
    drop(file);
    let rollback = open_existing(path, Access::Write).and_then(|(file, _)| {
        file.set_len(prior)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error("truncating", path, e))
    });
    match rollback {
        Ok(()) => Err(io_error("appending to", path, error)),
        Err(rollback) => Err(BackendError::Invalid(format!(
            "failed to roll back append to {}: {error}; rollback: {rollback}",
            path.display()
        ))),
    }
}

/// Cuts the log to `len` bytes and fsyncs.
pub(crate) fn truncate_durable(path: &Path, len: u64) -> Result<(), BackendError> {
    let (mut file, _) = open_existing(path, Access::Write)?;
    file.set_len(len)
        .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("truncating", path, e))
}

/// Whether anything exists at `path`, links included (errors other than not-found surface).
pub(crate) fn exists(path: &Path) -> Result<bool, BackendError> {
    Ok(kind_at(path)?.is_some())
}

/// The type of what is at `path` itself (a link is not followed); `None` when nothing is.
pub(crate) fn kind_at(path: &Path) -> Result<Option<FileType>, BackendError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta.file_type())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io_error("checking", path, error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `open_log` says of `path`, as an error text (the open itself must not block).
    fn refusal(path: &Path, access: Access) -> String {
        open_log(path, access).unwrap_err().to_string()
    }

    #[test]
    fn an_open_refuses_what_a_check_before_it_would_have_missed() {
        // These paths are opened directly, as if swapped in after the caller's `lstat`.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("session.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for access in [Access::Read, Access::Append, Access::Write] {
            let error = refusal(&fifo, access);
            assert!(
                error.ends_with("is a FIFO, not a regular file; move it out of the session store"),
                "{access:?}: {error}"
            );
        }
        let directory = dir.path().join("session.jsonl.zstd");
        fs::create_dir(&directory).unwrap();
        for access in [Access::Read, Access::Append] {
            assert!(refusal(&directory, access).contains("is a directory"));
        }
        let target = dir.path().join("real.jsonl");
        fs::write(&target, b"{}\n").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(refusal(&link, Access::Read).contains("is a symbolic link"));
        assert!(read_stable(&link).is_err(), "a link is not read through");
        assert!(
            open_log(&dir.path().join("missing"), Access::Read)
                .unwrap()
                .is_none()
        );
        let (_, meta) = open_log(&target, Access::Read).unwrap().unwrap();
        assert_eq!(meta.len(), 3);
    }
}
