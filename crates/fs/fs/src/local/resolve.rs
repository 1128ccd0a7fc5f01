//! Paths to targets, and probes that turn metadata into versions.

use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use crate::error::{FsError, FsErrorCode};
use crate::types::{FsInfo, FsKind, FsPathInfo, FsPathKind, FsTarget, FsVersion};

/// `path` joined to `cwd` and normalized lexically (`.` dropped, `..` pops), as Node's
/// `path.resolve` does; links are not resolved.
pub(crate) fn lexical_absolute(cwd: &Path, path: &str) -> PathBuf {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Refuses a blank path and one with a NUL, as `resolve` does.
pub(crate) fn check_path(path: &str) -> Result<(), FsError> {
    if path.trim().is_empty() {
        return Err(FsError::new(
            FsErrorCode::NotFound,
            "file_path must be a non-empty string",
        ));
    }
    if path.contains('\0') {
        return Err(FsError::new(
            FsErrorCode::NotFound,
            format!(
                "cannot resolve {}: a path cannot contain a NUL character",
                quoted(path)
            ),
        ));
    }
    Ok(())
}

/// The target of `path` seen from `cwd`: the real path of the nearest existing ancestor with
/// the missing rest appended, so the key stays the same once the file is created.
pub(crate) fn resolve_target(cwd: &Path, path: &str) -> Result<FsTarget, FsError> {
    check_path(path)?;
    let display = lexical_absolute(cwd, path);
    let display_path = display.to_string_lossy().into_owned();
    let mut existing = display.as_path();
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(real) => {
                let mut key = real;
                for part in missing.iter().rev() {
                    key.push(part);
                }
                return Ok(FsTarget {
                    target_key: key,
                    display_path,
                });
            }
            Err(error) if error.kind() == ErrorKind::NotADirectory => {
                return Err(FsError::new(
                    FsErrorCode::NotFound,
                    format!(
                        "cannot resolve {}: a parent path segment is not a directory",
                        quoted(&display_path)
                    ),
                ));
            }
            Err(error) if error.kind() != ErrorKind::NotFound => {
                return Err(FsError::new(
                    FsErrorCode::IoError,
                    format!("cannot resolve {}: {error}", quoted(&display_path)),
                )
                .caused_by(error));
            }
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    missing.push(name);
                    existing = parent;
                }
                _ => {
                    return Ok(FsTarget {
                        target_key: display.clone(),
                        display_path,
                    });
                }
            },
        }
    }
}

/// `"<path>"` as dsh puts paths in messages: the path between double quotes, as it is.
pub fn quoted(path: &str) -> String {
    format!("\"{path}\"")
}

/// The version token of `meta`: `<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>`.
pub(crate) fn version_of(meta: &std::fs::Metadata) -> FsVersion {
    let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    let ctime = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
    FsVersion(format!(
        "{}:{}:{}:{mtime}:{ctime}",
        meta.dev(),
        meta.ino(),
        meta.size()
    ))
}

/// `stat` of `path` (links followed); `None` when missing or a broken link.
pub(crate) fn probe(path: &Path) -> Result<Option<FsInfo>, std::io::Error> {
    match std::fs::metadata(path) {
        Ok(meta) => {
            let kind = if meta.is_file() {
                FsKind::File
            } else if meta.is_dir() {
                FsKind::Directory
            } else {
                FsKind::Other
            };
            Ok(Some(FsInfo {
                version: version_of(&meta),
                kind,
                size: meta.is_file().then_some(meta.len()),
            }))
        }
        Err(error) if is_missing(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// `lstat` of `path`; `None` when missing.
pub(crate) fn probe_no_follow(path: &Path) -> Result<Option<FsPathInfo>, std::io::Error> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let file_type = meta.file_type();
            let kind = if file_type.is_symlink() {
                FsPathKind::Symlink
            } else if file_type.is_file() {
                FsPathKind::File
            } else if file_type.is_dir() {
                FsPathKind::Directory
            } else {
                FsPathKind::Other
            };
            Ok(Some(FsPathInfo {
                version: version_of(&meta),
                kind,
                size: file_type.is_file().then_some(meta.len()),
            }))
        }
        Err(error) if is_missing(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Whether an I/O error means "nothing there" (`ENOENT`, `ENOTDIR`).
pub(crate) fn is_missing(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolution_matches_node() {
        let cwd = Path::new("/ws/sub");
        assert_eq!(lexical_absolute(cwd, "a/./b"), PathBuf::from("/ws/sub/a/b"));
        assert_eq!(lexical_absolute(cwd, "../x"), PathBuf::from("/ws/x"));
        assert_eq!(lexical_absolute(cwd, "/etc/../tmp"), PathBuf::from("/tmp"));
        assert_eq!(lexical_absolute(cwd, "../../../.."), PathBuf::from("/"));
    }

    #[test]
    fn paths_are_quoted_as_they_are() {
        assert_eq!(quoted("/a \"b\""), r#""/a "b"""#);
    }
}
