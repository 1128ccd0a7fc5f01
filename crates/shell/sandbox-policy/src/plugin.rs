//! The `dsh-sandbox-policy` plugin: provides `sandboxPolicy`.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use dsh_shell::{
    NetworkPolicy, ProtectedPath, SANDBOX_POLICY, SANDBOX_PROTECTION, SandboxMode,
    SandboxPolicyService, SandboxProtection,
};
use serde::Deserialize;

use crate::prompt::PolicyContext;
use crate::service::LocalSandboxPolicy;

/// How a path of the row's `protectedPaths` is named in messages.
pub const CONFIGURED_OWNER: &str = "listed in the sandbox-policy row's protectedPaths";

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
    /// More paths confined commands may read but never write, even inside the workspace
    /// (dsh's own files are protected without being listed here).
    #[serde(default)]
    pub protected_paths: Vec<PathBuf>,
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

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-sandbox-policy";

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
        // The launcher provides the registry on the root before any row mounts; a tree
        // booted without one gets its own here.
        let protection = match ctx.get(&SANDBOX_PROTECTION) {
            Some(protection) => protection,
            None => {
                let own = SandboxProtection::new();
                ctx.provide(&SANDBOX_PROTECTION, Arc::clone(&own))?;
                own
            }
        };
        let mut held = Vec::new();
        for path in &config.protected_paths {
            let path = std::path::absolute(path)?;
            held.push(protection.protect_path(ProtectedPath::new(path, CONFIGURED_OWNER)));
        }
        ctx.effect(move || drop(held))?;
        let local = Arc::new(
            LocalSandboxPolicy::new(mode, &root, config.network, Some(ctx.clone()))
                .with_protection(protection),
        );
        let service: Arc<dyn SandboxPolicyService> = local.clone();
        ctx.provide(&SANDBOX_POLICY, service)?;
        ctx.plugin(PolicyContext { policy: local }, serde_json::Value::Null)?;
        Ok(())
    }
}

#[cfg(test)]
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

    #[tokio::test]
    async fn resolved_policies_carry_the_registry_s_and_the_row_s_protected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        let registry = SandboxProtection::new();
        let home = registry.protect_path(ProtectedPath::new(dir.path().join(".dsh"), "home"));
        ctx.provide(&SANDBOX_PROTECTION, Arc::clone(&registry))
            .unwrap();
        ctx.plugin(
            SandboxPolicyPlugin,
            json!({"workspaceRoot": dir.path(), "protectedPaths": ["/srv/keep"]}),
        )
        .unwrap();
        kernel.settle().await;
        let policy = ctx.get(&SANDBOX_POLICY).unwrap();
        assert_eq!(
            policy.standing().protected_paths,
            vec![
                ProtectedPath::new(dir.path().join(".dsh"), "home"),
                ProtectedPath::new("/srv/keep", CONFIGURED_OWNER),
            ]
        );
        drop(home);
        assert_eq!(policy.standing().protected_paths.len(), 1);
        kernel.shutdown().await;
        assert!(registry.paths().is_empty(), "the row's entries go with it");
    }

    #[tokio::test]
    async fn without_a_launcher_the_row_provides_its_own_registry() {
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(SandboxPolicyPlugin, json!({})).unwrap();
        kernel.settle().await;
        assert!(ctx.get(&SANDBOX_PROTECTION).is_some());
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
