//! Building one model request of a step: the call config (`agent/request`), the prepared
//! call, the `request/header` and `request/context` records, and the messages derived from
//! the log.

use std::sync::Arc;

use dsh_kernel::error_chain;
use dsh_llm::{GenerateOptions, PreparedCall, ToolSchema, codes};

use crate::error::TurnError;
use crate::events::{AgentRequest, RequestProposal};
use crate::request_state::{canonical_header, request_context};
use crate::step_ctx::StepCtx;

/// A request ready to stream.
pub(crate) struct BuiltRequest {
    /// What to stream.
    pub(crate) options: GenerateOptions,
    /// The call pinned to its registration, when the provider has an adapter.
    pub(crate) prepared: Option<PreparedCall>,
}

/// Builds the step's next request with the prompt's `system` text and `tools`, logging the
/// header and context when they changed.
pub(crate) async fn build(
    ctx: &StepCtx,
    tools: &[ToolSchema],
    system: &str,
) -> Result<BuiltRequest, TurnError> {
    let agent = &ctx.agent;
    let seed = agent.request_state().seed_config(agent.options());
    let proposal = RequestProposal {
        agent: Arc::clone(agent),
        turn: ctx.turn,
        step: ctx.step,
        config: seed,
        signal: ctx.signal().clone(),
    };
    let proposed = ctx
        .runtime()
        .ctx
        .waterfall::<AgentRequest, _, _>(proposal, |proposal| async move { Ok(proposal.config) })
        .await
        .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))?;
    ctx.check()?;
    if proposed.provider.is_empty() || proposed.model.is_empty() {
        return Err(TurnError::unknown(format!(
            "agent \"{}\" has no provider/model: set AgentOptions.provider and \
             AgentOptions.model or supply both via the agent/request waterfall",
            agent.id()
        )));
    }
    let (config, prepared) = match ctx
        .runtime()
        .llm
        .prepare_call(proposed.clone(), ctx.signal())
        .await
    {
        Ok(prepared) => (prepared.config().clone(), Some(prepared)),
        // A route served by an `llm/stream` listener has no adapter to prepare with.
        Err(failure) if failure.is(codes::NO_ADAPTER) => (proposed, None),
        Err(failure) => return Err(TurnError::Failed(failure)),
    };
    ctx.check()?;
    let defaults = prepared.as_ref().map(PreparedCall::adapter_defaults);
    let header = canonical_header(&config, defaults, system, tools)?;
    agent.request_state().log_header(ctx.session(), header)?;
    let context = request_context(
        &config,
        prepared.as_ref().and_then(PreparedCall::context_window),
    );
    agent.request_state().log_context(ctx.session(), context)?;
    ctx.check()?;
    let derived = ctx.session().derive_messages();
    let messages = agent.request_state().model_messages(&derived)?;
    let mut options = GenerateOptions::new(&config.provider, &config.model, messages);
    options.set_call_config(&config);
    if !system.is_empty() {
        options.system = Some(system.to_owned());
    }
    if !tools.is_empty() {
        options.tools = Some(tools.to_vec());
    }
    options.session_id = Some(agent.id().to_owned());
    options.signal = ctx.signal().clone();
    Ok(BuiltRequest { options, prepared })
}
