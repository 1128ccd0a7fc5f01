//! What a call runs against: its session's directory, its actor, and its sandbox policy
//! (with a one-shot escalation when the user approves one).

use std::sync::Arc;

use dsh_fs::FsActor;
use dsh_kernel::Context;
use dsh_shell::{SandboxExecutionPolicy, SandboxMode, SandboxPolicyService};
use dsh_tools::{
    APPROVAL, EscalationAsk, ToolError, ToolRunContext, approve_escalation, escalation_args,
};
use serde_json::Value;

/// Whether a path has a `..` segment.
fn has_parent_segment(path: &str) -> bool {
    path.split(['/', '\\']).any(|segment| segment == "..")
}

/// The directory relative paths resolve against (dsh's `sessionCwd`): the session's `cwd`
/// as recorded, canonicalized when it or `path` has a `..` segment; `None` outside a
/// session (the provider's default applies).
pub fn session_cwd(run: &ToolRunContext, path: &str) -> Option<String> {
    let cwd = run.caller.as_ref()?.session_header.as_ref()?.cwd.clone()?;
    if has_parent_segment(&cwd) || has_parent_segment(path) {
        return Some(
            std::fs::canonicalize(&cwd).map_or(cwd, |real| real.to_string_lossy().into_owned()),
        );
    }
    Some(cwd)
}

/// The actor of a call, for the `fs/*` events.
pub fn actor(run: &ToolRunContext) -> FsActor {
    FsActor {
        session_id: run
            .caller
            .as_ref()
            .and_then(|caller| caller.session_id.clone()),
        tool_name: run.name.clone(),
        call_id: run.call_id.clone(),
    }
}

/// The sandbox side of `write` and `edit` (dsh's `FsSandboxController`).
#[derive(Clone)]
pub struct FsSandbox {
    ctx: Context,
    /// Present when the filesystem confines.
    policies: Option<Arc<dyn SandboxPolicyService>>,
}

impl FsSandbox {
    /// The controller; `policies` is `Some` exactly when the filesystem confines.
    pub fn new(ctx: Context, policies: Option<Arc<dyn SandboxPolicyService>>) -> Self {
        Self { ctx, policies }
    }

    /// Whether `write` and `edit` offer `sandbox_permissions`.
    pub fn escalation(&self) -> bool {
        self.policies.is_some()
    }

    /// The policy this call runs under: the session's standing one, widened once when the
    /// model asked and the user approved. `None` when the filesystem does not confine.
    pub async fn resolve_policy(
        &self,
        args: &Value,
        run: &ToolRunContext,
    ) -> Result<Option<SandboxExecutionPolicy>, ToolError> {
        let escalation = escalation_args(args)?;
        let caller = run.caller.as_ref();
        let session_id = caller.and_then(|caller| caller.session_id.as_deref());
        let cwd = caller
            .and_then(|caller| caller.session_header.as_ref())
            .and_then(|header| header.cwd.as_deref());
        let mut standing = self
            .policies
            .as_ref()
            .map(|policies| policies.resolve(session_id, cwd, None));
        let Some((requested, justification)) = escalation else {
            return Ok(standing);
        };
        let Some(policy) = standing.as_mut() else {
            return Err(ToolError::new(
                "sandbox_permissions is not available in this composition (no sandboxing \
                 filesystem to escalate)",
            ));
        };
        let mode = SandboxMode::parse(&requested).ok_or_else(|| {
            ToolError::new(format!("invalid sandbox_permissions \"{requested}\""))
        })?;
        let approver = self.ctx.get(&APPROVAL);
        let ask = EscalationAsk {
            requested: mode.as_str(),
            effective: policy.mode.as_str(),
            strictly_wider: mode.is_wider_than(policy.mode),
            justification: &justification,
            subject: "operation",
        };
        approve_escalation(ask, approver.as_deref(), run).await?;
        policy.mode = mode;
        Ok(standing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_segments() {
        assert!(has_parent_segment("../a"));
        assert!(has_parent_segment("a/../b"));
        assert!(has_parent_segment(".."));
        assert!(!has_parent_segment("a..b/c"));
    }
}
