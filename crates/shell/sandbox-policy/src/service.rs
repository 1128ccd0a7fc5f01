//! Resolving one call's policy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_kernel::Context;
use dsh_persistence::SESSION_PERSISTENCE;
use dsh_protocol::kinds;
use dsh_session::{SESSIONS, SessionEvent};
use dsh_shell::{
    NetworkPolicy, ProtectedPath, SandboxExecutionPolicy, SandboxMode, SandboxPolicyService,
    SandboxProtection, canonical_path,
};

/// The mode of the last `sandbox/mode` event in `events`, if any. Only the last event
/// counts; a mode this harness does not know reads as `read-only`, the narrowest, rather than
/// falling back to an earlier (possibly wider) one.
pub fn last_sandbox_mode(events: &[Arc<SessionEvent>]) -> Option<SandboxMode> {
    let last = events
        .iter()
        .rev()
        .find(|event| event.kind == kinds::SANDBOX_MODE)?;
    Some(
        last.data
            .get("mode")
            .and_then(|mode| mode.as_str())
            .and_then(SandboxMode::parse)
            .unwrap_or(SandboxMode::ReadOnly),
    )
}

/// dsh's system-prompt context line (`sandbox:policy`, order 110) for `policy`.
pub fn policy_context(policy: &SandboxExecutionPolicy) -> String {
    match policy.mode {
        SandboxMode::ReadOnly => "Current DSH file policy: read-only. Any available operation \
            enforced by the DSH file sandbox cannot modify files in the standing mode. Do not \
            refuse a required modification from this policy alone: try an available tool \
            normally and follow any denial and escalation guidance it returns."
            .to_owned(),
        SandboxMode::WorkspaceWrite => format!(
            "Current DSH file policy: workspace-write. Any available operation enforced by the \
             DSH file sandbox may modify files under the session workspace: {}. Some platform \
             temporary areas may also be writable.",
            serde_json::Value::String(policy.workspace_root.display().to_string())
        ),
        SandboxMode::DangerFullAccess => "Current DSH file policy: danger-full-access. The DSH \
            file sandbox does not restrict file modifications by available operations."
            .to_owned(),
    }
}

/// Creates a session store's directory (mode 0700) before any command runs: one that does
/// not exist yet could be made by a command, with logs or links of its own planted in it.
fn ensure_store_directory(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok() {
        return;
    }
    use std::os::unix::fs::DirBuilderExt as _;
    if let Err(error) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
    {
        tracing::warn!(
            "sandbox: cannot create the session store {} before commands run: {error}",
            path.display()
        );
    }
}

/// The service: the configured default, fallback root and network policy, and the context
/// whose session store (`sessions`, looked up at each call) holds the standing modes.
pub struct LocalSandboxPolicy {
    default_mode: SandboxMode,
    workspace_root: PathBuf,
    network: NetworkPolicy,
    ctx: Option<Context>,
    protection: Option<Arc<SandboxProtection>>,
}

impl LocalSandboxPolicy {
    /// A policy service; `ctx`'s session store supplies each live session's `sandbox/mode`
    /// events.
    pub fn new(
        default_mode: SandboxMode,
        workspace_root: &Path,
        network: NetworkPolicy,
        ctx: Option<Context>,
    ) -> Self {
        Self {
            default_mode,
            workspace_root: canonical_path(workspace_root),
            network,
            ctx,
            protection: None,
        }
    }

    /// Also puts the paths of `protection` in every policy it resolves.
    #[must_use]
    pub fn with_protection(mut self, protection: Arc<SandboxProtection>) -> Self {
        self.protection = Some(protection);
        self
    }

    /// The deployment default mode.
    pub fn default_mode(&self) -> SandboxMode {
        self.default_mode
    }

    /// The registry's paths, then the session store's.
    fn protected_paths(&self) -> Vec<ProtectedPath> {
        let mut paths = self
            .protection
            .as_ref()
            .map(|protection| protection.paths())
            .unwrap_or_default();
        if let Some(persistence) = self
            .ctx
            .as_ref()
            .and_then(|ctx| ctx.get(&SESSION_PERSISTENCE))
        {
            for (path, owner) in persistence.storage_paths() {
                ensure_store_directory(&path);
                paths.push(ProtectedPath::new(path, owner));
            }
        }
        paths
    }

    fn session_mode(&self, session_id: &str) -> Option<SandboxMode> {
        let live = self.ctx.as_ref()?.get(&SESSIONS)?.get(session_id)?;
        // Read under the session's lock: copying a long log's event list per call would cost
        // more than the scan.
        live.with(|log| last_sandbox_mode(log.events()))
    }
}

impl SandboxPolicyService for LocalSandboxPolicy {
    fn resolve(
        &self,
        session_id: Option<&str>,
        session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy {
        let mode = approved
            .or_else(|| session_id.and_then(|id| self.session_mode(id)))
            .unwrap_or(self.default_mode);
        // The session's cwd as recorded (the directory dsh ran in, already resolved), not
        // resolved again: a link put in its place since must not move the workspace, and
        // the write plan refuses a workspace that no longer resolves to itself.
        let workspace_root = session_cwd.map_or_else(
            || self.workspace_root.clone(),
            |cwd| std::path::absolute(cwd).unwrap_or_else(|_| PathBuf::from(cwd)),
        );
        SandboxExecutionPolicy {
            mode,
            workspace_root,
            session_id: session_id.map(str::to_owned),
            network: self.network,
            protected_paths: self.protected_paths(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_approved_mode_outranks_the_session_which_outranks_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let policy = LocalSandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            dir.path(),
            NetworkPolicy::Deny,
            None,
        );
        let standing = policy.standing();
        assert_eq!(standing.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(standing.workspace_root, canonical_path(dir.path()));
        assert_eq!(standing.network, NetworkPolicy::Deny);
        let call = policy.resolve(Some("s1"), Some("/"), Some(SandboxMode::DangerFullAccess));
        assert_eq!(
            (call.mode, call.workspace_root, call.session_id.as_deref()),
            (
                SandboxMode::DangerFullAccess,
                PathBuf::from("/"),
                Some("s1")
            )
        );
        let events = vec![
            Arc::new(SessionEvent::new(
                "sandbox/mode",
                0,
                1,
                json!({"mode": "danger-full-access"}),
            )),
            Arc::new(SessionEvent::new(
                "sandbox/mode",
                1,
                1,
                json!({"mode": "read-only"}),
            )),
            Arc::new(SessionEvent::new("goal/change", 2, 1, json!({}))),
        ];
        assert_eq!(last_sandbox_mode(&events), Some(SandboxMode::ReadOnly));
        assert_eq!(last_sandbox_mode(&[]), None);
        let unknown = vec![
            Arc::new(SessionEvent::new(
                "sandbox/mode",
                0,
                1,
                json!({"mode": "danger-full-access"}),
            )),
            Arc::new(SessionEvent::new(
                "sandbox/mode",
                1,
                1,
                json!({"mode": "future-mode"}),
            )),
        ];
        assert_eq!(
            last_sandbox_mode(&unknown),
            Some(SandboxMode::ReadOnly),
            "never wider"
        );
    }

    #[test]
    fn the_context_lines_are_dshs() {
        let policy = SandboxExecutionPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: PathBuf::from("/srv/w"),
            session_id: None,
            network: NetworkPolicy::Allow,
            protected_paths: Vec::new(),
        };
        assert_eq!(
            policy_context(&policy),
            "Current DSH file policy: workspace-write. Any available operation enforced by the \
             DSH file sandbox may modify files under the session workspace: \"/srv/w\". Some \
             platform temporary areas may also be writable."
        );
    }
}
