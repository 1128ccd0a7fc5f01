//! The row config both disk providers take (`dsh-fs-local`, `dsh-fs-sandbox`).

use std::path::PathBuf;

use dsh_kernel::BoxError;

use crate::LocalDisk;
use serde::Deserialize;

/// The largest diff bound accepted: the largest string a JavaScript engine holds, as dsh's.
const MAX_DIFF_BASIS_BYTES: u64 = (1 << 29) - 24;

/// dsh's `LocalFileSystem.Config`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LocalDiskConfig {
    /// Where relative paths resolve when the caller gives no directory (default: the
    /// current directory). A resolution default, not a boundary.
    pub cwd: Option<PathBuf>,
    /// Writes diff the previous content only when both sides are under this many bytes
    /// (default 10 MiB).
    pub diff_basis_max_bytes: Option<serde_json::Number>,
}

impl LocalDiskConfig {
    /// The checked diff bound.
    pub fn diff_basis_max_bytes(&self) -> Result<u64, BoxError> {
        let Some(number) = &self.diff_basis_max_bytes else {
            return Ok(crate::DEFAULT_DIFF_BASIS_MAX_BYTES);
        };
        number
            .as_u64()
            .filter(|bytes| (1..=MAX_DIFF_BASIS_BYTES).contains(bytes))
            .ok_or_else(|| {
                format!(
                    "fs-local: diffBasisMaxBytes must be a positive safe integer no greater than \
                     {MAX_DIFF_BASIS_BYTES}"
                )
                .into()
            })
    }
}

impl LocalDiskConfig {
    /// The disk this config describes, or what is wrong with it.
    pub fn disk(&self) -> Result<LocalDisk, BoxError> {
        let max = self.diff_basis_max_bytes()?;
        let cwd = match &self.cwd {
            Some(cwd) => std::path::absolute(cwd)?,
            None => std::env::current_dir()?,
        };
        Ok(LocalDisk::new(cwd, max))
    }
}
