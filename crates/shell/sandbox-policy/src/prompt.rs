//! The `sandbox:policy` runtime context: each step tells the model the file policy of its
//! session. Registered once `systemPrompt` exists (a child fiber waits for it).

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::SandboxPolicyService;
use dsh_system_prompt::{PromptContext, PromptText, SYSTEM_PROMPT};

use crate::service::{LocalSandboxPolicy, policy_context};

/// The context's name.
pub const POLICY_CONTEXT_NAME: &str = "sandbox:policy";
/// The context's order (dsh's 110).
pub const POLICY_CONTEXT_ORDER: f64 = 110.0;

/// Registers the context with `systemPrompt` for as long as the policy is loaded.
pub(crate) struct PolicyContext {
    pub(crate) policy: Arc<LocalSandboxPolicy>,
}

impl Plugin for PolicyContext {
    type Config = ();

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SYSTEM_PROMPT.name()] }
    }

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        let prompt = ctx.require(&SYSTEM_PROMPT)?;
        let policy = Arc::clone(&self.policy);
        let text = PromptText::dynamic(move |context| match &context.session_id {
            // Only an agent's step has a session; other assemblies get no policy line.
            None => String::new(),
            Some(id) => policy_context(&policy.resolve(Some(id), context.cwd.as_deref(), None)),
        });
        prompt.context(
            &ctx,
            PromptContext::new(POLICY_CONTEXT_NAME, POLICY_CONTEXT_ORDER, text),
        )?;
        Ok(())
    }
}
