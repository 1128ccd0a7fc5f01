//! [`SandboxedDisk`]: the local disk with the sandbox policy's fence on mutations.

use std::path::Path;
use std::sync::Arc;

use dsh_fs::{
    FileSystem, FsDirEntry, FsEditOutcome, FsEditRequest, FsError, FsErrorCode, FsInfo, FsPathInfo,
    FsTarget, FsVersion, FsWriteIntent, FsWriteOutcome, LocalDisk, is_own_proc_entry, quoted,
};
use dsh_shell::{SandboxExecutionPolicy, SandboxMode, SandboxPolicyService, write_plan};

/// The local disk whose writes and edits are checked against a sandbox policy.
pub struct SandboxedDisk {
    disk: LocalDisk,
    policies: Arc<dyn SandboxPolicyService>,
}

impl std::fmt::Debug for SandboxedDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxedDisk")
            .field("disk", &self.disk)
            .finish_non_exhaustive()
    }
}

impl SandboxedDisk {
    /// `disk` fenced by `policies` (whose standing policy applies when a caller passes none).
    pub fn new(disk: LocalDisk, policies: Arc<dyn SandboxPolicyService>) -> Self {
        Self { disk, policies }
    }

    /// The target to mutate under `policy`: the caller's for `danger-full-access`, else the
    /// path resolved afresh and checked against the writable roots and protected paths.
    fn checked_target(
        &self,
        target: &FsTarget,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsTarget, FsError> {
        let standing;
        let policy = match policy {
            Some(policy) => policy,
            None => {
                standing = self.policies.standing();
                &standing
            }
        };
        let denied = |mode: SandboxMode| {
            FsError::new(
                FsErrorCode::SandboxDenied,
                format!(
                    "cannot write {}: file access denied under {} mode",
                    quoted(&target.display_path),
                    mode.as_str()
                ),
            )
        };
        match policy.mode {
            SandboxMode::DangerFullAccess => Ok(target.clone()),
            SandboxMode::ReadOnly => Err(denied(SandboxMode::ReadOnly)),
            SandboxMode::WorkspaceWrite => {
                let fresh = self.disk.resolve(&target.display_path, None)?;
                let plan = match write_plan(policy) {
                    Ok(Some(plan)) => plan,
                    Ok(None) => return Ok(fresh),
                    Err(refusal) => {
                        return Err(denied(SandboxMode::WorkspaceWrite).with_detail(refusal.0));
                    }
                };
                let key = &fresh.target_key;
                let under_root = plan.roots.iter().any(|root| key.starts_with(root));
                let protected = plan
                    .carve_outs
                    .iter()
                    .any(|carve| key.starts_with(&carve.path));
                if under_root && !protected {
                    Ok(fresh)
                } else {
                    Err(denied(SandboxMode::WorkspaceWrite))
                }
            }
        }
    }

    fn readable(target: &FsTarget) -> Result<(), FsError> {
        readable_path(&target.target_key, &target.display_path)
    }
}

/// Refuses the harness's own `/proc` entries.
fn readable_path(key: &Path, display: &str) -> Result<(), FsError> {
    if is_own_proc_entry(key) {
        return Err(FsError::new(
            FsErrorCode::SandboxDenied,
            format!(
                "cannot read {}: the harness's own /proc entries are never readable",
                quoted(display)
            ),
        ));
    }
    Ok(())
}

impl FileSystem for SandboxedDisk {
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Some(self.policies.standing().mode)
    }

    fn resolve(&self, path: &str, cwd: Option<&str>) -> Result<FsTarget, FsError> {
        self.disk.resolve(path, cwd)
    }

    fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, FsError> {
        self.disk.stat(target)
    }

    fn lstat(&self, path: &str, cwd: Option<&str>) -> Result<Option<FsPathInfo>, FsError> {
        self.disk.lstat(path, cwd)
    }

    fn read_text(&self, target: &FsTarget) -> Result<String, FsError> {
        Self::readable(target)?;
        self.disk.read_text(target)
    }

    fn stream_text(
        &self,
        target: &FsTarget,
        sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        Self::readable(target)?;
        self.disk.stream_text(target, sink)
    }

    fn read_bytes(&self, target: &FsTarget, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        Self::readable(target)?;
        self.disk.read_bytes(target, max_bytes)
    }

    fn list_dir(&self, target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError> {
        Self::readable(target)?;
        self.disk.list_dir(target)
    }

    fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError> {
        let fresh = self.checked_target(target, policy)?;
        self.disk.write_text(&fresh, content, expected, policy)
    }

    fn edit_text(
        &self,
        target: &FsTarget,
        edit: &FsEditRequest,
        expected: Option<&FsVersion>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsEditOutcome, FsError> {
        let fresh = self.checked_target(target, policy)?;
        self.disk.edit_text(&fresh, edit, expected, policy)
    }
}

#[cfg(test)]
mod tests;
