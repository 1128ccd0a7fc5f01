//! [`LocalDisk`]: the host disk as dsh's `fs-local` sees it.

mod edit;
mod list;
mod publish;
mod read;
mod resolve;

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_shell::SandboxExecutionPolicy;

use crate::error::{FsError, FsErrorCode};
use crate::service::FileSystem;
use crate::types::{
    FsDirEntry, FsEditOutcome, FsEditRequest, FsInfo, FsKind, FsPathInfo, FsTarget, FsVersion,
    FsWriteIntent, FsWriteOperation, FsWriteOutcome,
};

use publish::{Publish, not_observed, write_file_atomic};
pub use read::{BINARY_SNIFF_BYTES, MAX_WHOLE_TEXT_BYTES};
pub use resolve::quoted;

/// dsh's default bound on the diff basis of a write (10 MiB).
pub const DEFAULT_DIFF_BASIS_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// The host disk: realpath identity, strict UTF-8 reads, atomic writes (new files 0600,
/// replaced files keep their mode), literal edits, and one lock per target so mutations of
/// one file never interleave. It confines nothing: `policy` arguments are ignored.
pub struct LocalDisk {
    cwd: PathBuf,
    diff_basis_max_bytes: u64,
    locks: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
}

impl std::fmt::Debug for LocalDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalDisk")
            .field("cwd", &self.cwd)
            .field("diff_basis_max_bytes", &self.diff_basis_max_bytes)
            .finish_non_exhaustive()
    }
}

impl LocalDisk {
    /// A disk resolving relative paths against `cwd`, diffing writes under
    /// `diff_basis_max_bytes`.
    pub fn new(cwd: impl Into<PathBuf>, diff_basis_max_bytes: u64) -> Self {
        Self {
            cwd: cwd.into(),
            diff_basis_max_bytes,
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// The default directory of relative paths.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Runs `body` holding the lock of `key`.
    fn locked<T>(&self, key: &Path, body: impl FnOnce() -> T) -> T {
        let lock = {
            let mut locks = dsh_kernel::sync::lock(&self.locks);
            Arc::clone(locks.entry(key.to_path_buf()).or_default())
        };
        let result = {
            let _held = dsh_kernel::sync::lock(&lock);
            body()
        };
        let mut locks = dsh_kernel::sync::lock(&self.locks);
        if Arc::strong_count(&lock) == 2 {
            locks.remove(key);
        }
        result
    }

    fn probe(&self, target: &FsTarget, verb: &str) -> Result<Option<FsInfo>, FsError> {
        resolve::probe(&target.target_key)
            .map_err(|error| read::io_error(&error, &target.display_path, verb).caused_by(error))
    }

    fn mode_of(target: &FsTarget) -> Option<u32> {
        std::fs::metadata(&target.target_key)
            .ok()
            .map(|meta| meta.mode())
    }

    fn write_locked(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
    ) -> Result<FsWriteOutcome, FsError> {
        let display = &target.display_path;
        let existing = self.probe(target, "write")?;
        if let Some(info) = &existing
            && info.kind != FsKind::File
        {
            return Err(FsError::new(
                FsErrorCode::NotRegularFile,
                format!("cannot write {}: not a regular file", quoted(display)),
            ));
        }
        match (expected, &existing) {
            (Some(FsWriteIntent::ReplaceIfVersion(_)), None) => {
                return Err(FsError::new(
                    FsErrorCode::StaleVersion,
                    format!("cannot write {}: file no longer exists", quoted(display)),
                ));
            }
            (Some(FsWriteIntent::ReplaceIfVersion(version)), Some(info))
                if &info.version != version =>
            {
                return Err(FsError::new(
                    FsErrorCode::StaleVersion,
                    format!(
                        "cannot write {}: file changed since it was read",
                        quoted(display)
                    ),
                ));
            }
            (Some(FsWriteIntent::CreateIfAbsent), Some(_)) => return Err(not_observed(display)),
            _ => {}
        }
        let before = (existing.is_some() && (content.len() as u64) < self.diff_basis_max_bytes)
            .then(|| read::read_text_for_diff(&target.target_key, self.diff_basis_max_bytes))
            .flatten();
        let publish = if existing.is_some() || expected != Some(&FsWriteIntent::CreateIfAbsent) {
            Publish::Replace
        } else {
            Publish::CreateOnly
        };
        let mode = existing.as_ref().and_then(|_| Self::mode_of(target));
        write_file_atomic(
            &target.target_key,
            display,
            content.as_bytes(),
            mode,
            publish,
        )?;
        Ok(FsWriteOutcome {
            operation: if existing.is_some() {
                FsWriteOperation::Update
            } else {
                FsWriteOperation::Create
            },
            version: self.version_after(target),
            before,
            after: edit::to_lf(content),
        })
    }

    fn edit_locked(
        &self,
        target: &FsTarget,
        request: &FsEditRequest,
        expected: Option<&FsVersion>,
    ) -> Result<FsEditOutcome, FsError> {
        let display = &target.display_path;
        let stale = || {
            FsError::new(
                FsErrorCode::StaleVersion,
                format!(
                    "cannot edit {}: file changed since it was read",
                    quoted(display)
                ),
            )
        };
        let Some(info) = self.probe(target, "edit")? else {
            return Err(stale());
        };
        if info.kind != FsKind::File {
            return Err(FsError::new(
                FsErrorCode::NotRegularFile,
                format!("cannot edit {}: not a regular file", quoted(display)),
            ));
        }
        if expected.is_some_and(|version| version != &info.version) {
            return Err(stale());
        }
        let raw = read::read_whole_text(&target.target_key, display, "edit", true)?;
        let crlf = edit::is_crlf(&raw);
        let before = edit::to_lf(&raw);
        let after = edit::apply_literal_edit(
            &before,
            &edit::to_lf(&request.old_string),
            &edit::to_lf(&request.new_string),
            request.replace_all,
            display,
        )?;
        let written = if crlf {
            edit::to_crlf(&edit::to_lf(&after))
        } else {
            after.clone()
        };
        let mode = Self::mode_of(target);
        write_file_atomic(
            &target.target_key,
            display,
            written.as_bytes(),
            mode,
            Publish::Replace,
        )?;
        Ok(FsEditOutcome {
            version: self.version_after(target),
            before,
            after,
        })
    }

    fn version_after(&self, target: &FsTarget) -> FsVersion {
        match resolve::probe(&target.target_key) {
            Ok(Some(info)) => info.version,
            _ => FsVersion(format!("missing:{}", target.target_key.display())),
        }
    }
}

impl FileSystem for LocalDisk {
    fn resolve(&self, path: &str, cwd: Option<&str>) -> Result<FsTarget, FsError> {
        let base = cwd.map_or_else(|| self.cwd.clone(), PathBuf::from);
        resolve::resolve_target(&base, path)
    }

    fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, FsError> {
        self.probe(target, "stat")
    }

    fn lstat(&self, path: &str, cwd: Option<&str>) -> Result<Option<FsPathInfo>, FsError> {
        let base = cwd.map_or_else(|| self.cwd.clone(), PathBuf::from);
        resolve::check_path(path)?;
        let absolute = resolve::lexical_absolute(&base, path);
        resolve::probe_no_follow(&absolute).map_err(|error| {
            read::io_error(&error, &absolute.to_string_lossy(), "stat").caused_by(error)
        })
    }

    fn read_text(&self, target: &FsTarget) -> Result<String, FsError> {
        read::read_whole_text(&target.target_key, &target.display_path, "read", false)
    }

    fn stream_text(
        &self,
        target: &FsTarget,
        sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        read::stream_text(&target.target_key, &target.display_path, sink)
    }

    fn read_bytes(&self, target: &FsTarget, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        read::read_bytes(&target.target_key, &target.display_path, max_bytes)
    }

    fn list_dir(&self, target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError> {
        list::list_directory(target)
    }

    fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
        _policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError> {
        self.locked(&target.target_key, || {
            self.write_locked(target, content, expected)
        })
    }

    fn edit_text(
        &self,
        target: &FsTarget,
        edit: &FsEditRequest,
        expected: Option<&FsVersion>,
        _policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsEditOutcome, FsError> {
        self.locked(&target.target_key, || {
            self.edit_locked(target, edit, expected)
        })
    }
}
