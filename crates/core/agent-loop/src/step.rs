//! One step: log its messages, send the model request (again, while `agent/request-error`
//! says retry), log the reply, run its tool calls.

use std::sync::Arc;

use dsh_kernel::error_chain;
use dsh_llm::{FinishReason, Message, ToolSchema};
use dsh_protocol::kinds::USER_MESSAGE;
use dsh_session::SurfaceIntent;
use dsh_system_prompt::{PromptAssembly, render_prompt};
use tracing::Instrument;

use crate::error::TurnError;
use crate::events::{AgentRequestError, RequestErrorAction, RequestErrorArgs};
use crate::outcome::TurnEndReason;
use crate::reply::Reply;
use crate::request::{self, BuiltRequest};
use crate::step_ctx::StepCtx;
use crate::tool_calls::{self, PlannedCall};

/// Logs the step's `messages`, then runs it with the prompt `assembly`. `Ok(Some(end))` ends
/// the turn (`completed`, `max-tokens`); `Ok(None)` means tools ran and the model should see
/// their results in another step.
pub(crate) async fn run(
    ctx: &StepCtx,
    messages: Vec<Message>,
    assembly: &PromptAssembly,
) -> Result<Option<TurnEndReason>, TurnError> {
    for message in messages {
        let data = serde_json::to_value(&message)
            .map_err(|error| TurnError::unknown(format!("a step message is not JSON: {error}")))?;
        ctx.session()
            .append(USER_MESSAGE, data, SurfaceIntent::append())?;
        ctx.agent.retained().observe(&message);
    }
    ctx.check()?;
    let system = render_prompt(assembly).map_err(|error| TurnError::unknown(error.to_string()))?;
    let mut retries = 0;
    let answer = loop {
        let span = tracing::debug_span!(
            "request",
            session_id = %ctx.agent.id(),
            attempt = retries + 1,
        );
        match attempt(ctx, &assembly.tools, &system, retries)
            .instrument(span)
            .await?
        {
            Attempt::Retry => retries += 1,
            Attempt::Answered(answer) => break *answer,
        }
    };
    let Answer {
        reply,
        provider,
        model,
    } = answer;
    let message = reply.message(&provider, &model)?;
    let cut_off = matches!(reply.finish(), FinishReason::MaxTokens);
    reply.log(ctx, &message)?;
    if cut_off {
        return Ok(Some(TurnEndReason::MaxTokens));
    }
    let calls = PlannedCall::of(&message);
    if calls.is_empty() {
        return Ok(Some(TurnEndReason::Completed));
    }
    tool_calls::execute(ctx, calls).await?;
    Ok(None)
}

/// A reply the model finished, with the route that gave it.
struct Answer {
    reply: Reply,
    provider: String,
    model: String,
}

/// What one attempt of the step's request came to.
enum Attempt {
    /// The model answered (its reply is logged chunk by chunk, not yet as a message).
    Answered(Box<Answer>),
    /// The attempt failed and `agent/request-error` asked for another.
    Retry,
}

/// Sends the step's request once (after a checkpoint flush), streams the reply into the
/// log, and on a failed finish asks `agent/request-error` whether to retry (`retries` were
/// made so far).
async fn attempt(
    ctx: &StepCtx,
    tools: &[ToolSchema],
    system: &str,
    retries: u64,
) -> Result<Attempt, TurnError> {
    ctx.runtime().checkpoint(ctx.agent.id()).await;
    let BuiltRequest { options, prepared } = request::build(ctx, tools, system).await?;
    let provider = options.provider.clone();
    let model = options.model.clone();
    let stream = match &prepared {
        Some(prepared) => prepared.stream(options).map_err(TurnError::Failed)?,
        None => ctx.runtime().llm.stream(options),
    };
    let reply = Reply::stream(ctx, stream).await?;
    if ctx.abort.is_aborted() {
        reply.keep_interrupted(ctx, &provider, &model)?;
        return Err(TurnError::Aborted);
    }
    let Some(failure) = reply.failure() else {
        return Ok(Attempt::Answered(Box::new(Answer {
            reply,
            provider,
            model,
        })));
    };
    let args = RequestErrorArgs {
        agent: Arc::clone(&ctx.agent),
        turn: ctx.turn,
        step: ctx.step,
        provider,
        failure: failure.clone(),
        retry_policy: prepared.as_ref().map(|call| call.retry_policy().clone()),
        retries,
        signal: ctx.signal().clone(),
    };
    let action = ctx
        .runtime()
        .ctx
        .waterfall::<AgentRequestError, _, _>(args, |_| async { Ok(None) })
        .await
        .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))?;
    ctx.check()?;
    match action {
        Some(RequestErrorAction::Retry) => Ok(Attempt::Retry),
        None => Err(TurnError::Failed(failure)),
    }
}
