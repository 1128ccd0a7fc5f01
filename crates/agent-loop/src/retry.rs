//! The `dsh-llm-retry` plugin (row `llm-retry`): retries a failed model request inside the
//! same turn and step, under its provider's policy, and logs `llm/retry` (before the wait)
//! and `llm/retry-started` (after it) so the log explains every delay. Without this row a
//! failed request ends the turn at once, as in dsh.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_kernel::{BoxError, Context, Next, Plugin};
use dsh_llm::retry::{
    LlmRetry, LlmRetryStarted, RetryRecord, RetryRecorder, SessionRecorder, next_delay_ms,
};
use dsh_llm::{LLM, RetryPolicy};
use serde::Deserialize;

use crate::events::{AgentRequestError, RequestErrorAction, RequestErrorArgs};

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

/// The retry chain of each agent's current step: `(turn, step)` and its id.
type Chains = Arc<Mutex<HashMap<String, ((u64, u64), String)>>>;

impl Plugin for LlmRetryPlugin {
    type Config = LlmRetryConfig;

    fn inject(&self) -> &'static [&'static str] {
        &["llm"]
    }

    async fn apply(&self, ctx: Context, _config: LlmRetryConfig) -> Result<(), BoxError> {
        let llm = ctx.require(&LLM)?;
        let chains: Chains = Arc::default();
        ctx.on::<AgentRequestError>(
            move |args: RequestErrorArgs, next: Next<RequestErrorArgs, Outcome>| {
                let policy = args
                    .retry_policy
                    .clone()
                    .or_else(|| llm.retry_policy(&args.provider).ok());
                let chains = Arc::clone(&chains);
                async move {
                    match policy {
                        Some(policy) => retry(args, next, &policy, &chains).await,
                        None => next.run(args).await,
                    }
                }
            },
        )?;
        Ok(())
    }
}

async fn retry(
    args: RequestErrorArgs,
    next: Next<RequestErrorArgs, Outcome>,
    policy: &RetryPolicy,
    chains: &Chains,
) -> Outcome {
    let retry = args.retries + 1;
    let Some(delay_ms) = next_delay_ms(policy, retry, &args.failure, fastrand::f64()) else {
        return next.run(args).await;
    };
    if args.signal.is_cancelled() {
        return Ok(None);
    }
    let retry_id = chain_id(chains, args.agent.id(), (args.turn, args.step), retry);
    let scheduled = RetryRecord::Retry(LlmRetry {
        retry_id: retry_id.clone(),
        turn: args.turn,
        step: args.step,
        provider: args.provider.clone(),
        mode: policy.mode_name().to_owned(),
        policy_key: policy.policy_key(),
        retry,
        max_retries: policy.max_retries(),
        delay_ms,
        failure: args.failure.clone(),
    });
    record(&args, &scheduled)?;
    let delay = std::time::Duration::try_from_secs_f64(delay_ms / 1000.0).unwrap_or_default();
    tokio::select! {
        () = args.signal.cancelled() => return Ok(None),
        () = tokio::time::sleep(delay) => {}
    }
    let started = RetryRecord::Started(LlmRetryStarted {
        retry_id,
        turn: args.turn,
        step: args.step,
        retry,
    });
    record(&args, &started)?;
    Ok(Some(RequestErrorAction::Retry))
}

/// The id of the step's retry chain: a new one at its first retry.
fn chain_id(chains: &Chains, agent: &str, position: (u64, u64), retry: u64) -> String {
    let mut chains = chains.lock().unwrap_or_else(PoisonError::into_inner);
    match chains.get(agent) {
        Some((at, id)) if *at == position && retry > 1 => id.clone(),
        _ => {
            let id = dsh_session::store::random_uuid();
            chains.insert(agent.to_owned(), (position, id.clone()));
            id
        }
    }
}

fn record(args: &RequestErrorArgs, record: &RetryRecord) -> Result<(), BoxError> {
    SessionRecorder::new(Arc::clone(args.agent.session())).record(record)
}
