//! The sandbox policy each mutation runs under, and how a denial reads.
//!
//! A confining filesystem checks the policy the tool passes; `str_replace_editor` offers no
//! escalation, so a denial is reported as the bare marker
//! `[sandbox: file access denied under <mode> mode]` (dsh's `MutationPolicy`).

use std::sync::Arc;

use dsh_fs::{FsError, FsErrorCode};
use dsh_shell::{SandboxExecutionPolicy, SandboxPolicyService, sandbox_denial_marker};
use dsh_tools::{ToolError, ToolRunContext};

use crate::error::from_fs;

/// The policy service, present exactly when the mounted filesystem confines.
#[derive(Clone)]
pub(crate) struct MutationPolicy {
    service: Option<Arc<dyn SandboxPolicyService>>,
}

impl MutationPolicy {
    /// Mutations under `service`'s policies (`None`: the filesystem does not confine).
    pub fn new(service: Option<Arc<dyn SandboxPolicyService>>) -> Self {
        Self { service }
    }

    /// The policy of this call: its session's standing mode and workspace root. `None`
    /// under a filesystem that does not confine.
    pub fn resolve(&self, run: &ToolRunContext) -> Option<SandboxExecutionPolicy> {
        let service = self.service.as_ref()?;
        let caller = run.caller.as_ref();
        let session_id = caller.and_then(|caller| caller.session_id.as_deref());
        let cwd = caller
            .and_then(|caller| caller.session_header.as_ref())
            .and_then(|header| header.cwd.as_deref());
        Some(service.resolve(session_id, cwd, None))
    }

    /// A failed mutation as the model reads it: a sandbox denial becomes the marker of the
    /// call's mode (code kept); anything else passes through. A denial from a call that had
    /// no policy (a filesystem that denies without confining) keeps its own message.
    pub fn map_error(error: FsError, policy: Option<&SandboxExecutionPolicy>) -> ToolError {
        match (error.code(), policy) {
            (Some(FsErrorCode::SandboxDenied), Some(policy)) => {
                from_fs(&error.with_message(sandbox_denial_marker(policy.mode)))
            }
            _ => from_fs(&error),
        }
    }
}

#[cfg(test)]
mod tests {
    use dsh_shell::{NetworkPolicy, SandboxMode};

    use super::*;

    #[test]
    fn a_denial_reads_as_the_bare_marker() {
        let policy = SandboxExecutionPolicy {
            mode: SandboxMode::ReadOnly,
            workspace_root: "/ws".into(),
            session_id: None,
            network: NetworkPolicy::Allow,
            protected_paths: Vec::new(),
        };
        let denied = FsError::new(
            FsErrorCode::SandboxDenied,
            "cannot write \"/ws/a\": file access denied under read-only mode",
        );
        let mapped = MutationPolicy::map_error(denied, Some(&policy));
        assert_eq!(
            mapped.message(),
            "[sandbox: file access denied under read-only mode]"
        );
        assert_eq!(mapped.code(), Some("FS_SANDBOX_DENIED"));
        let stale = FsError::new(FsErrorCode::StaleVersion, "changed");
        assert_eq!(
            MutationPolicy::map_error(stale, Some(&policy)).message(),
            "changed"
        );
    }
}
