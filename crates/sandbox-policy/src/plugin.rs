//! The `dsh-sandbox-policy` plugin: provides `sandboxPolicy`.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use dsh_shell::{NetworkPolicy, SANDBOX_POLICY, SandboxMode, SandboxPolicyService};
use serde::Deserialize;

use crate::prompt::PolicyContext;
use crate::service::LocalSandboxPolicy;

/// Row config of `dsh-sandbox-policy`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxPolicyConfig {
    /// The mode sessions start in: `read-only`, `workspace-write` or `danger-full-access`.
    /// Absent: `$DSH_PERMISSION_MODE`, else `workspace-write` (the base bundle passes the
    /// same expression).
    pub mode: Option<String>,
    /// The workspace of calls without a session (default: the current directory).
    pub workspace_root: Option<PathBuf>,
    /// `allow` (default, as dsh) or `deny`: whether confined commands may open sockets other
    /// than Unix sockets.
    #[serde(default)]
    pub network: NetworkPolicy,
}

impl SandboxPolicyConfig {
    /// The default mode, refusing an unknown name.
    pub fn mode(&self) -> Result<SandboxMode, String> {
        let name = self
            .mode
            .clone()
            .or_else(|| std::env::var("DSH_PERMISSION_MODE").ok())
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "workspace-write".to_owned());
        SandboxMode::parse(&name).ok_or_else(|| {
            format!(
                "unknown sandbox mode \"{name}\": use read-only, workspace-write or \
                 danger-full-access"
            )
        })
    }
}

/// The `dsh-sandbox-policy` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct SandboxPolicyPlugin;

impl Plugin for SandboxPolicyPlugin {
    type Config = SandboxPolicyConfig;

    async fn apply(&self, ctx: Context, config: SandboxPolicyConfig) -> Result<(), BoxError> {
        let mode = config.mode()?;
        let root = match &config.workspace_root {
            Some(root) => std::path::absolute(root)?,
            None => std::env::current_dir()?,
        };
        let local = Arc::new(LocalSandboxPolicy::new(
            mode,
            &root,
            config.network,
            Some(ctx.clone()),
        ));
        let service: Arc<dyn SandboxPolicyService> = local.clone();
        ctx.provide(&SANDBOX_POLICY, service)?;
        ctx.plugin(PolicyContext { policy: local }, serde_json::Value::Null)?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use dsh_kernel::Kernel;
    use dsh_session::{CreateOptions, SESSIONS, SessionPlugin, SurfaceIntent};
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_sessions_sandbox_mode_event_sets_its_standing_mode() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(SessionPlugin, json!({})).unwrap();
        ctx.plugin(
            SandboxPolicyPlugin,
            json!({"mode": "read-only", "workspaceRoot": dir.path(), "network": "deny"}),
        )
        .unwrap();
        kernel.settle().await;
        let policy = ctx.get(&SANDBOX_POLICY).unwrap();
        let session = ctx
            .get(&SESSIONS)
            .unwrap()
            .create(CreateOptions {
                cwd: Some("/".into()),
                ..CreateOptions::default()
            })
            .unwrap();
        let id = session.id().to_owned();
        let before = policy.resolve(Some(&id), Some("/"), None);
        assert_eq!(
            (before.mode, before.network),
            (SandboxMode::ReadOnly, NetworkPolicy::Deny)
        );
        session
            .append(
                "sandbox/mode",
                json!({"mode": "workspace-write"}),
                SurfaceIntent::default(),
            )
            .unwrap();
        let after = policy.resolve(Some(&id), Some("/"), None);
        assert_eq!(after.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(after.workspace_root, std::path::PathBuf::from("/"));
        assert_eq!(policy.standing().mode, SandboxMode::ReadOnly);
        kernel.shutdown().await;
    }

    #[test]
    fn an_unknown_mode_is_refused_by_name() {
        let config = SandboxPolicyConfig {
            mode: Some("everything".into()),
            ..SandboxPolicyConfig::default()
        };
        assert_eq!(
            config.mode().unwrap_err(),
            "unknown sandbox mode \"everything\": use read-only, workspace-write or \
             danger-full-access"
        );
    }
}
