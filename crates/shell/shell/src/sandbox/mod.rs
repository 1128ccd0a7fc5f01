//! The sandbox vocabulary every shell provider and consumer shares: modes, the per-call
//! policy, the write plan (writable roots and the protected paths inside them), the
//! registry of protected paths and fenced ports, and dsh's texts for denials and refusals.

mod plan;
mod protect;
mod roots;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use plan::{SandboxRefusal, WritePlan, write_plan};
pub use protect::{ProtectedPath, Protection, SANDBOX_PROTECTION, SandboxProtection};
pub use roots::SHARED_TMP;

/// What a confined command may write. Only file effects are governed by the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No writes anywhere but `/dev/null`.
    ReadOnly,
    /// Writes only under the workspace root, `/tmp` and the OS temp directory.
    WorkspaceWrite,
    /// No file confinement.
    DangerFullAccess,
}

impl SandboxMode {
    /// dsh's name: `read-only`, `workspace-write`, `danger-full-access`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }

    /// The mode named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "read-only" => Some(Self::ReadOnly),
            "workspace-write" => Some(Self::WorkspaceWrite),
            "danger-full-access" => Some(Self::DangerFullAccess),
            _ => None,
        }
    }

    /// How much a mode allows, for "strictly wider" comparisons.
    const fn rank(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::WorkspaceWrite => 1,
            Self::DangerFullAccess => 2,
        }
    }

    /// Whether `self` allows strictly more than `other`.
    pub const fn is_wider_than(self, other: Self) -> bool {
        self.rank() > other.rank()
    }
}

/// Whether a confined command may open network sockets (other than Unix sockets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkPolicy {
    /// Sockets of any family (dsh's behaviour: the network is never restricted).
    #[default]
    Allow,
    /// Only `AF_UNIX` sockets; creating any other socket fails with `EPERM`.
    Deny,
}

/// The confinement of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxExecutionPolicy {
    /// The file mode.
    pub mode: SandboxMode,
    /// The workspace root (absolute, symbolic links resolved).
    pub workspace_root: PathBuf,
    /// The session the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Whether non-Unix sockets may be opened.
    #[serde(default)]
    pub network: NetworkPolicy,
    /// The harness's own files, which no confined command may write even inside a writable
    /// root ([`write_plan`] turns those inside one into carve-outs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<ProtectedPath>,
}

/// The policy service (`ctx.sandboxPolicy`): the deployment's default and each session's
/// standing mode, resolved for one call.
pub trait SandboxPolicyService: Send + Sync {
    /// The policy of a call: `approved` (an escalation) outranks the session's last
    /// `sandbox/mode`, which outranks the deployment default; the workspace root is the
    /// session's `cwd` as recorded (not resolved again), else the configured root.
    fn resolve(
        &self,
        session_id: Option<&str>,
        session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy;

    /// The standing policy of calls that belong to no session.
    fn standing(&self) -> SandboxExecutionPolicy {
        self.resolve(None, None, None)
    }
}

/// The sandbox policy service.
pub const SANDBOX_POLICY: dsh_kernel::ServiceKey<dyn SandboxPolicyService> =
    dsh_kernel::ServiceKey::new("sandboxPolicy");

/// `path` with symbolic links resolved, or as given when it cannot be resolved.
pub fn canonical_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The marker a result carries when the sandbox denied a file access.
pub fn sandbox_denial_marker(mode: SandboxMode) -> String {
    format!("[sandbox: file access denied under {} mode]", mode.as_str())
}

/// The hint that follows the denial marker when escalation is offered.
pub const ESCALATION_HINT_MARKER: &str = "[sandbox: escalation available — retry this exact \
    command once with sandbox_permissions (the narrowest wider mode that suffices) + \
    justification; the approval prompt asks the user]";

/// The error code of a refusal to run unconfined.
pub const SANDBOX_UNAVAILABLE: &str = "SANDBOX_UNAVAILABLE";

/// dsh's refusal when no sandbox backend can confine a command; `detail` is a runner failure.
pub fn sandbox_unavailable_message(mode: SandboxMode, detail: Option<&str>) -> String {
    let runner = detail
        .map(|detail| format!(" Runner failure: {detail}"))
        .unwrap_or_default();
    format!(
        "sandbox mode \"{}\" is requested but no sandbox backend is usable on this host; \
         refusing to run the command unconfined. Install bubblewrap or run a \
         Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure \
         the ACL restricted-token runner can start (Windows) — otherwise switch the consumer \
         to danger-full-access.{runner}",
        mode.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_dshs() {
        assert_eq!(
            sandbox_denial_marker(SandboxMode::WorkspaceWrite),
            "[sandbox: file access denied under workspace-write mode]"
        );
        let message = sandbox_unavailable_message(SandboxMode::ReadOnly, Some("bwrap: boom"));
        assert!(message.starts_with("sandbox mode \"read-only\" is requested but no sandbox backend is usable on this host; refusing to run the command unconfined."));
        assert!(message.ends_with("to danger-full-access. Runner failure: bwrap: boom"));
        assert!(SandboxMode::DangerFullAccess.is_wider_than(SandboxMode::WorkspaceWrite));
        assert!(!SandboxMode::ReadOnly.is_wider_than(SandboxMode::ReadOnly));
        assert_eq!(
            serde_json::to_value(SandboxMode::WorkspaceWrite).unwrap(),
            "workspace-write"
        );
    }
}
