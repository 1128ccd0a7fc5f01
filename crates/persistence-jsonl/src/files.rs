//! File mechanics: stable reads, revisions, durable directory creation, atomic publish,
//! append with rollback, truncation.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use dsh_persistence::BackendError;

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

/// The file's revision; `None` when it does not exist.
pub(crate) fn revision(path: &Path) -> Result<Option<String>, BackendError> {
    match fs::metadata(path) {
        Ok(meta) => Ok(Some(revision_of(&meta))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io_error("reading the metadata of", path, error)),
    }
}

/// Reads the whole file, retrying until its revision is the same before and after.
pub(crate) fn read_stable(path: &Path) -> Result<(Vec<u8>, String), BackendError> {
    loop {
        let before =
            fs::metadata(path).map_err(|e| io_error("reading the metadata of", path, e))?;
        let bytes = fs::read(path).map_err(|e| io_error("reading", path, e))?;
        let after = fs::metadata(path).map_err(|e| io_error("reading the metadata of", path, e))?;
        let revision = revision_of(&after);
        if revision_of(&before) == revision {
            return Ok((bytes, revision));
        }
    }
}

/// Reads at most the first `limit` bytes, in 8 KiB chunks until `enough` says to stop.
pub(crate) fn read_prefix_until(
    path: &Path,
    limit: usize,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Result<Vec<u8>, BackendError> {
    let mut file = File::open(path).map_err(|e| io_error("opening", path, e))?;
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
    File::open(dir)
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

/// Appends `bytes` and fsyncs. On failure the file is cut back to its prior size, so a retry
/// writes no duplicate.
pub(crate) fn append_durable(path: &Path, bytes: &[u8]) -> Result<(), BackendError> {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| io_error("opening", path, e))?;
    let prior = file
        .metadata()
        .map_err(|e| io_error("reading the metadata of", path, e))?
        .len();
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    let Err(error) = written else { return Ok(()) };
    drop(file);
    let rollback = OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|file| file.set_len(prior).and_then(|()| file.sync_all()));
    match rollback {
        Ok(()) => Err(io_error("appending to", path, error)),
        Err(rollback) => Err(BackendError::Invalid(format!(
            "failed to roll back append to {}: {error}; rollback: {rollback}",
            path.display()
        ))),
    }
}

/// Cuts the file to `len` bytes and fsyncs.
pub(crate) fn truncate_durable(path: &Path, len: u64) -> Result<(), BackendError> {
    let mut file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io_error("opening", path, e))?;
    file.set_len(len)
        .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("truncating", path, e))
}

/// Whether a file or directory exists at `path` (errors other than not-found surface).
pub(crate) fn exists(path: &Path) -> Result<bool, BackendError> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error("checking", path, error)),
    }
}
