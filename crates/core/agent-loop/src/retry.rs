//! The `dsh-llm-retry` plugin (row `llm-retry`): retries a failed model request inside the
//! same turn and step, under its provider's policy, and logs `llm/retry` (before the wait)
//! and `llm/retry-started` (after it) so the log explains every delay. Without this row a
//! failed request ends the turn at once, as in dsh.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Next, Plugin, ServiceName};
use dsh_llm::retry::{LlmRetry, RetryRecord, RetryRecorder, RetryScope};
use dsh_llm::{LLM, RetryPolicy};
use dsh_protocol::kinds::{LLM_RETRY, STEP_START, TURN_START};
use dsh_session::LiveSession;
use serde::Deserialize;
use serde_json::Value;

use crate::events::{AgentRequestError, RequestErrorAction, RequestErrorArgs};
use crate::retry_recorder::SessionRetryRecorder;

/// The plugin's name in rows.
pub const RETRY_PLUGIN_NAME: &str = "dsh-llm-retry";

/// Row config of `dsh-llm-retry`: none.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmRetryConfig {}

/// The `dsh-llm-retry` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlmRetryPlugin;

type Outcome = Result<Option<RequestErrorAction>, BoxError>;

impl Plugin for LlmRetryPlugin {
    type Config = LlmRetryConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[LLM.name()] }
    }

    async fn apply(&self, ctx: Context, _config: LlmRetryConfig) -> Result<(), BoxError> {
        let llm = ctx.require(&LLM)?;
        ctx.on::<AgentRequestError>(
            move |args: RequestErrorArgs, next: Next<RequestErrorArgs, Outcome>| {
                let policy = args
                    .retry_policy
                    .clone()
                    .or_else(|| llm.retry_policy(&args.provider).ok());
                async move {
                    match policy {
                        Some(policy) => retry(args, next, &policy).await,
                        None => next.run(args).await,
                    }
                }
            },
        )?;
        Ok(())
    }
}

/// Plans, records and waits out one retry with `dsh-llm`'s retry pieces (the same rule
/// [`dsh_llm::retry_stream`] applies).
async fn retry(
    args: RequestErrorArgs,
    next: Next<RequestErrorArgs, Outcome>,
    policy: &RetryPolicy,
) -> Outcome {
    let retry = args.retries + 1;
    let scope = RetryScope {
        turn: args.turn,
        step: args.step,
    };
    let session = Arc::clone(args.agent.session());
    let planned = LlmRetry::plan(
        policy,
        scope,
        &args.provider,
        retry,
        args.failure.clone(),
        fastrand::f64(),
        || chain_id(&session, scope, retry),
    );
    let Some(scheduled) = planned else {
        return next.run(args).await;
    };
    if args.signal.is_cancelled() {
        return Ok(None);
    }
    let recorder = SessionRetryRecorder::new(session);
    recorder.record(&RetryRecord::Retry(scheduled.clone()))?;
    if !scheduled.wait(&args.signal).await {
        return Ok(None);
    }
    recorder.record(&RetryRecord::Started(scheduled.started()))?;
    Ok(Some(RequestErrorAction::Retry))
}

/// The id of the step's retry chain: a new one at its first retry, else the id of the
/// step's last `llm/retry` (read back from the log, as dsh reads its retry history there, so
/// no state outlives the step).
fn chain_id(session: &LiveSession, scope: RetryScope, retry: u64) -> String {
    let previous = (retry > 1)
        .then(|| {
            session.with(|log| {
                log.events()
                    .iter()
                    .rev()
                    .take_while(|event| event.kind != STEP_START && event.kind != TURN_START)
                    .find(|event| {
                        event.kind == LLM_RETRY
                            && event.data.get("turn").and_then(Value::as_u64) == Some(scope.turn)
                            && event.data.get("step").and_then(Value::as_u64) == Some(scope.step)
                    })
                    .and_then(|event| {
                        event
                            .data
                            .get("retryId")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
            })
        })
        .flatten();
    previous.unwrap_or_else(dsh_protocol::ids::random_uuid)
}
