//! Listing the store: every readable log's header, and every artifact that could not be read
//! as a session, each with its path and the reason. One bad log never hides the others.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use dsh_persistence::{BackendError, PersistenceError, UnreadableSession};
use dsh_session::SessionHeader;

use crate::decode::read_header_only;
use crate::files::io_error;
use crate::layout::{Compression, decode_segment};
use crate::lookup::{FoundLog, assert_identity, legacy_layout, log_in_naming, project_dirs};

/// A readable log: its header and where it is.
#[derive(Debug)]
pub(crate) struct Listed {
    /// The header.
    pub header: SessionHeader,
    /// The log file.
    pub path: PathBuf,
}

/// What a scan of the root found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The readable logs.
    pub listed: Vec<Listed>,
    /// The artifacts that could not be read.
    pub unreadable: Vec<UnreadableSession>,
}

impl Scan {
    fn refuse(&mut self, id: Option<String>, path: PathBuf, error: BackendError) {
        let error = match &id {
            Some(id) => PersistenceError::of_session(id, error).to_string(),
            None => error.to_string(),
        };
        self.unreadable.push(UnreadableSession {
            id,
            path: Some(path),
            error,
        });
    }
}

/// Scans every project directory under `root`. Only a root that cannot be listed is an error.
pub(crate) fn scan(root: &Path) -> Result<Scan, BackendError> {
    let mut scan = Scan::default();
    for project in project_dirs(root)? {
        scan_project(root, &project, &mut scan);
    }
    refuse_duplicates(&mut scan);
    Ok(scan)
}

fn scan_project(root: &Path, project: &Path, scan: &mut Scan) {
    let entries = match fs::read_dir(project).and_then(Iterator::collect::<Result<Vec<_>, _>>) {
        Ok(entries) => entries,
        Err(error) => {
            scan.refuse(
                None,
                project.to_path_buf(),
                io_error("listing", project, error),
            );
            return;
        }
    };
    let mut entries: Vec<(PathBuf, Option<fs::FileType>)> = entries
        .into_iter()
        .map(|entry| (entry.path(), entry.file_type().ok()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in entries {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        match kind {
            Some(kind) if kind.is_dir() => {
                let id = decode_segment(&name);
                match read_session_dir(root, &path) {
                    Ok(None) => {}
                    Ok(Some(listed)) => scan.listed.push(listed),
                    Err((at, error)) => scan.refuse(id, at, error),
                }
            }
            Some(kind) if kind.is_file() => {
                let stem = [Compression::Zstd, Compression::None]
                    .iter()
                    .find_map(|compression| name.strip_suffix(compression.suffix()));
                if let Some(stem) = stem {
                    scan.refuse(decode_segment(stem), path.clone(), legacy_layout(&path));
                }
            }
            // Other files (notes, links, sockets) are not session artifacts.
            _ => {}
        }
    }
}

/// The log of one session directory; `Ok(None)` when it holds none. An error carries the
/// path it is about (the log, or the directory when no single log can be named).
fn read_session_dir(root: &Path, dir: &Path) -> Result<Option<Listed>, (PathBuf, BackendError)> {
    let found = log_in_naming(dir)?;
    let Some(found) = found else { return Ok(None) };
    let read = |found: &FoundLog| {
        let header = read_header_only(&found.path, found.compression)?;
        assert_identity(root, found, &header, None)?;
        Ok(header)
    };
    match read(&found) {
        Ok(header) => Ok(Some(Listed {
            header,
            path: found.path,
        })),
        Err(error) => Err((found.path, error)),
    }
}

/// Logs of one id in several project directories: none of them is the session.
fn refuse_duplicates(scan: &mut Scan) {
    let mut paths: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for listed in &scan.listed {
        paths
            .entry(listed.header.id.clone())
            .or_default()
            .push(listed.path.clone());
    }
    paths.retain(|_, paths| paths.len() > 1);
    if paths.is_empty() {
        return;
    }
    let listed = std::mem::take(&mut scan.listed);
    for entry in listed {
        let Some(all) = paths.get(&entry.header.id) else {
            scan.listed.push(entry);
            continue;
        };
        let others: Vec<String> = all
            .iter()
            .filter(|path| **path != entry.path)
            .map(|path| format!("\"{}\"", path.display()))
            .collect();
        let error = BackendError::Corrupt(format!(
            "duplicate JSONL session id \"{}\": the log \"{}\" carries it, and so does {}",
            entry.header.id,
            entry.path.display(),
            others.join(", ")
        ));
        scan.refuse(Some(entry.header.id.clone()), entry.path, error);
    }
}
