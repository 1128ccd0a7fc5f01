//! Listing a directory's direct children.

use std::path::Path;

use crate::error::{FsError, FsErrorCode};
use crate::types::{FsDirEntry, FsKind, FsTarget};

use super::resolve::{is_missing, probe, quoted};

/// The children of `target`, sorted by name (code-point order), each probed with links
/// followed; no content is read.
pub(crate) fn list_directory(target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError> {
    let display = &target.display_path;
    let fail = |error: &std::io::Error| {
        let (code, detail) = if is_missing(error) {
            (FsErrorCode::NotFound, "not found".to_owned())
        } else if error.kind() == std::io::ErrorKind::PermissionDenied {
            (
                FsErrorCode::PermissionDenied,
                "permission denied".to_owned(),
            )
        } else {
            (FsErrorCode::IoError, error.to_string())
        };
        FsError::new(code, format!("cannot list {}: {detail}", quoted(display)))
    };
    match std::fs::metadata(&target.target_key) {
        Ok(meta) if !meta.is_dir() => {
            return Err(FsError::new(
                FsErrorCode::NotDirectory,
                format!("cannot list {}: not a directory", quoted(display)),
            ));
        }
        Ok(_) => {}
        Err(error) => return Err(fail(&error)),
    }
    let reader = std::fs::read_dir(&target.target_key).map_err(|error| fail(&error))?;
    let mut entries = Vec::new();
    for entry in reader {
        let entry = entry.map_err(|error| fail(&error))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child_key = target.target_key.join(entry.file_name());
        let child = FsTarget {
            target_key: std::fs::canonicalize(&child_key).unwrap_or(child_key),
            display_path: Path::new(display)
                .join(&name)
                .to_string_lossy()
                .into_owned(),
        };
        let info = probe(&child.target_key).ok().flatten();
        let (kind, version, size) = match info {
            Some(info) => (info.kind, Some(info.version), info.size),
            None => (FsKind::Other, None, None),
        };
        entries.push(FsDirEntry {
            name,
            kind,
            target: child,
            version,
            size: if kind == FsKind::File { size } else { None },
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}
