//! Before a step opens: claim its messages from the inbox, assemble the system prompt,
//! project the runtime-context snapshot, and let `agent/pre-step` rewrite or reject the step.

use std::sync::Arc;

use dsh_kernel::error_chain;
use dsh_system_prompt::{AssembleContext, PromptAssembly, render_context_sections};

use crate::error::TurnError;
use crate::events::{AgentPreStep, PreStep, PreStepDecision};
use crate::options::InboxTarget;
use crate::step_ctx::StepCtx;

/// What `agent/pre-step` decided about the step, with the prompt assembled for it.
pub(crate) struct Prepared {
    /// Enter (with these messages) or reject.
    pub(crate) decision: PreStepDecision,
    /// The system prompt and tools of the step.
    pub(crate) assembly: PromptAssembly,
}

/// Claims the step's messages from `target` (see [`crate::Agent`]'s inbox), assembles the
/// prompt, projects the runtime context and asks `agent/pre-step`.
pub(crate) async fn prepare(ctx: &StepCtx, target: InboxTarget) -> Result<Prepared, TurnError> {
    let agent = &ctx.agent;
    let claimed = agent
        .claim(target, ctx.turn)
        .map_err(|error| TurnError::unknown(error.to_string()))?;
    let context = AssembleContext {
        session_id: Some(agent.id().to_owned()),
        provider: agent.options().provider.clone(),
        model: agent.options().model.clone(),
        cwd: ctx.session().header().cwd,
        signal: Some(ctx.signal().clone()),
    };
    let assembly = ctx
        .runtime()
        .prompt
        .assemble(&context)
        .await
        .map_err(|error| TurnError::unknown(error.to_string()))?;
    ctx.check()?;
    let sections = render_context_sections(&assembly)
        .map_err(|error| TurnError::unknown(error.to_string()))?;
    let snapshot = agent.retained().project(&sections);
    let args = PreStep {
        agent: Arc::clone(agent),
        messages: claimed,
        turn: ctx.turn,
        step: ctx.step,
        signal: ctx.signal().clone(),
    };
    let decision = ctx
        .runtime()
        .ctx
        .waterfall::<AgentPreStep, _, _>(args, move |args| async move {
            let mut messages = args.messages;
            messages.extend(snapshot);
            Ok(PreStepDecision::Enter(messages))
        })
        .await
        .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))?;
    ctx.check()?;
    Ok(Prepared { decision, assembly })
}
