//! Where the executor's standing policy comes from: the `sandboxPolicy` service
//! ([`dsh_shell::SANDBOX_POLICY`]) or a fixed policy.

use std::sync::Arc;

use dsh_shell::{SandboxExecutionPolicy, SandboxMode, SandboxPolicyService, canonical_path};

/// The deployment's standing sandbox policy: what a call without its own policy runs under.
pub trait StandingPolicy: Send + Sync {
    /// The policy in force now (its mode, workspace root and network choice).
    fn standing(&self) -> SandboxExecutionPolicy;
}

/// The `sandboxPolicy` service as the executor's standing policy (its policy for calls that
/// belong to no session, as dsh's `ctx.sandboxPolicy.resolve()`).
#[derive(Clone)]
pub struct PolicyService(pub Arc<dyn SandboxPolicyService>);

impl StandingPolicy for PolicyService {
    fn standing(&self) -> SandboxExecutionPolicy {
        self.0.standing()
    }
}

impl std::fmt::Debug for PolicyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PolicyService").finish_non_exhaustive()
    }
}

/// A policy that never changes (for tests and embedders). As a [`SandboxPolicyService`] it
/// resolves a call to the approved mode, else its own, with the session's `cwd` (resolved)
/// as the root when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedPolicy(pub SandboxExecutionPolicy);

impl StandingPolicy for FixedPolicy {
    fn standing(&self) -> SandboxExecutionPolicy {
        self.0.clone()
    }
}

impl SandboxPolicyService for FixedPolicy {
    fn resolve(
        &self,
        session_id: Option<&str>,
        session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy {
        SandboxExecutionPolicy {
            mode: approved.unwrap_or(self.0.mode),
            workspace_root: session_cwd.map_or_else(
                || self.0.workspace_root.clone(),
                |cwd| canonical_path(std::path::Path::new(cwd)),
            ),
            session_id: session_id.map(str::to_owned),
            network: self.0.network,
            protected_paths: self.0.protected_paths.clone(),
        }
    }

    fn standing(&self) -> SandboxExecutionPolicy {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use dsh_shell::NetworkPolicy;

    use super::*;

    #[test]
    fn a_fixed_policy_resolves_like_the_service() {
        let fixed = FixedPolicy(SandboxExecutionPolicy {
            mode: SandboxMode::ReadOnly,
            workspace_root: PathBuf::from("/w"),
            session_id: None,
            network: NetworkPolicy::Deny,
            protected_paths: Vec::new(),
        });
        assert_eq!(StandingPolicy::standing(&fixed), fixed.0);
        let service: Arc<dyn SandboxPolicyService> = Arc::new(fixed.clone());
        assert_eq!(PolicyService(Arc::clone(&service)).standing(), fixed.0);
        let call = service.resolve(Some("s"), Some("/"), Some(SandboxMode::WorkspaceWrite));
        assert_eq!(call.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(call.workspace_root, PathBuf::from("/"));
        assert_eq!(call.session_id.as_deref(), Some("s"));
        assert_eq!(call.network, NetworkPolicy::Deny);
    }
}
