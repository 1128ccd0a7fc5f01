//! Finding logs on disk: the log of a session directory in whichever encoding it was written,
//! the unique log of an id under the root, and the check that a log's header names the place
//! it was found in.
//!
//! Nothing here opens a log; the type of what sits at a log's path is read with `lstat`, so a
//! FIFO, a directory or a link in its place is refused before anything tries to read it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use dsh_persistence::BackendError;
use dsh_session::SessionHeader;

use crate::files::{exists, io_error, kind_at, not_a_regular_file};
use crate::layout::{Compression, LayoutError, encode_segment, log_path};

/// A log found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundLog {
    /// Its path.
    pub path: PathBuf,
    /// The encoding its name says (`session.jsonl.zstd` or `session.jsonl`).
    pub compression: Compression,
}

pub(crate) fn layout_error(error: LayoutError) -> BackendError {
    BackendError::Invalid(error.to_string())
}

pub(crate) fn legacy_layout(path: &Path) -> BackendError {
    BackendError::Invalid(format!(
        "session artifact \"{}\" uses the unsupported flat-file layout; use a separate root or \
         move it into a project/session directory before loading",
        path.display()
    ))
}

/// The log in session directory `dir`, in either encoding (a store whose `compression` was
/// changed holds both kinds); `Ok(None)` when the directory holds none.
pub(crate) fn log_in(dir: &Path) -> Result<Option<FoundLog>, BackendError> {
    log_in_naming(dir).map_err(|(_, error)| error)
}

/// [`log_in`], with the path each error is about: the log, or the directory when it holds
/// two.
pub(crate) fn log_in_naming(dir: &Path) -> Result<Option<FoundLog>, (PathBuf, BackendError)> {
    let at = |compression: Compression| -> Result<Option<FoundLog>, (PathBuf, BackendError)> {
        let path = dir.join(compression.transcript_name());
        match kind_at(&path) {
            Err(error) => Err((path, error)),
            Ok(None) => Ok(None),
            Ok(Some(kind)) if kind.is_file() => Ok(Some(FoundLog { path, compression })),
            Ok(Some(kind)) => {
                let error = not_a_regular_file(&path, kind);
                Err((path, error))
            }
        }
    };
    match (at(Compression::Zstd)?, at(Compression::None)?) {
        (Some(_), Some(_)) => Err((
            dir.to_path_buf(),
            BackendError::Invalid(format!(
                "session directory \"{}\" holds both {} and {}, but a session has one log; \
                 move the one that does not belong out of the session store",
                dir.display(),
                Compression::None.transcript_name(),
                Compression::Zstd.transcript_name()
            )),
        )),
        (found @ Some(_), None) | (None, found) => Ok(found),
    }
}

/// The project directories under `root` (real directories only), sorted; none when the root
/// does not exist yet.
pub(crate) fn project_dirs(root: &Path) -> Result<Vec<PathBuf>, BackendError> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io_error("listing", root, error)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("listing", root, e))?;
        if entry
            .file_type()
            .map_err(|e| io_error("listing", root, e))?
            .is_dir()
        {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// The unique log of `id` under `root`, if any.
pub(crate) fn find_log(root: &Path, id: &str) -> Result<Option<FoundLog>, BackendError> {
    let encoded = encode_segment(id).map_err(layout_error)?;
    let mut matches = Vec::new();
    for project in project_dirs(root)? {
        for compression in [Compression::Zstd, Compression::None] {
            let flat = project.join(format!("{encoded}{}", compression.suffix()));
            if exists(&flat)? {
                return Err(legacy_layout(&flat));
            }
        }
        if let Some(found) = log_in(&project.join(&encoded))? {
            matches.push(found);
        }
    }
    if matches.len() > 1 {
        let paths: Vec<String> = matches
            .iter()
            .map(|found| format!("\"{}\"", found.path.display()))
            .collect();
        return Err(BackendError::Corrupt(format!(
            "duplicate JSONL session id \"{id}\" appears in multiple project directories: {}",
            paths.join(", ")
        )));
    }
    Ok(matches.pop())
}

/// The header must name the file it was found in.
pub(crate) fn assert_identity(
    root: &Path,
    found: &FoundLog,
    header: &SessionHeader,
    expected_id: Option<&str>,
) -> Result<(), BackendError> {
    let path = &found.path;
    if let Some(expected) = expected_id
        && header.id != expected
    {
        return Err(BackendError::Corrupt(format!(
            "corrupt session log \"{}\": requested id \"{expected}\" does not match header id \"{}\"",
            path.display(),
            header.id
        )));
    }
    let expected_path = log_path(root, header.cwd.as_deref(), &header.id, found.compression)
        .map_err(|_| {
            BackendError::Corrupt(format!(
                "corrupt session log \"{}\": header id cannot name a storage path",
                path.display()
            ))
        })?;
    let same = *path == expected_path
        || matches!(
            (fs::canonicalize(path), fs::canonicalize(&expected_path)),
            (Ok(a), Ok(b)) if a == b
        );
    if !same {
        return Err(BackendError::Corrupt(format!(
            "corrupt session log \"{}\": header id \"{}\" and cwd identify \"{}\"",
            path.display(),
            header.id,
            expected_path.display()
        )));
    }
    Ok(())
}
