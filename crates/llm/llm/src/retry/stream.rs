//! Retrying a model request outside a turn under its provider's policy (the executing half
//! of dsh's `dsh-llm-retry`), recording each retry through a [`RetryRecorder`].

use std::sync::Arc;

use dsh_protocol::ids::random_uuid;
use futures_util::stream::{self, BoxStream, StreamExt};

use super::policy::RetryPolicy;
use super::record::{LlmRetry, LlmRetryStarted, RetryRecord, RetryRecorder, RetryScope};
use crate::adapter::ChunkStream;
use crate::failure::LlmFailure;
use crate::options::GenerateOptions;
use crate::runtime::LlmRuntime;
use crate::types::StreamChunk;

/// What a retried stream yields.
///
/// Every attempt's chunks are passed on as they arrive, the failed attempts' too (dsh logs
/// them as `assistant/chunk` before `llm/retry`), so a consumer that assembles the reply
/// must start over at [`RetryItem::Retry`]:
///
/// ```text
/// Chunk.. Chunk(finish error)  Retry  [wait]  RetryStarted  Chunk.. Chunk(finish)
/// ```
///
/// A stream that ends right after `Retry` did not retry (the signal fired during the wait,
/// or recording failed): the failed attempt's finish is the outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryItem {
    /// A chunk of the current attempt.
    Chunk(StreamChunk),
    /// The attempt whose chunks came last failed and will be retried after
    /// `delay_ms`; already given to the recorder.
    Retry(LlmRetry),
    /// The wait is over; the next chunks are the new attempt's. Already given to the
    /// recorder.
    RetryStarted(LlmRetryStarted),
}

impl RetryItem {
    /// The chunk, for a [`RetryItem::Chunk`].
    pub fn chunk(&self) -> Option<&StreamChunk> {
        match self {
            Self::Chunk(chunk) => Some(chunk),
            _ => None,
        }
    }
}

/// Streams `options` through `llm` ([`LlmRuntime::stream`]) and sends a clone of it again,
/// within `scope`, while the terminal finish is a failure the provider's registered policy
/// retries (see [`super::next_delay_ms`]; the jitter is random). A provider without a
/// registration (a route served by an `llm/stream` listener) is not retried.
///
/// For each retry it gives `recorder` the `llm/retry` record (before the wait), waits
/// (cancelled by the request's signal: then nothing more is recorded and the stream ends),
/// gives it `llm/retry-started`, and sends the request again. Once the budget is spent, or
/// the failure is not retried, the last attempt's finish is final. The whole request is
/// sent again, never a continuation: a partly streamed failed attempt is superseded (see
/// [`RetryItem`]).
///
/// Retry numbers count within one call; the agent loop retries through its own plugin (on
/// `agent/request-error`), with the same planning rule ([`LlmRetry::plan`]).
pub fn retry_stream(
    llm: Arc<LlmRuntime>,
    options: GenerateOptions,
    scope: RetryScope,
    recorder: Arc<dyn RetryRecorder>,
) -> BoxStream<'static, RetryItem> {
    let policy = llm.retry_policy(&options.provider).ok();
    let machine = Machine {
        llm,
        options,
        scope,
        recorder,
        policy,
        retry: 0,
        retry_id: None,
        phase: Phase::Start,
    };
    stream::unfold(machine, Machine::step).boxed()
}

enum Phase {
    Start,
    Streaming(ChunkStream),
    Failed(LlmFailure),
    Waiting(LlmRetry),
    Done,
}

struct Machine {
    llm: Arc<LlmRuntime>,
    options: GenerateOptions,
    scope: RetryScope,
    recorder: Arc<dyn RetryRecorder>,
    policy: Option<RetryPolicy>,
    retry: u64,
    retry_id: Option<String>,
    phase: Phase,
}

impl Machine {
    async fn step(mut self) -> Option<(RetryItem, Self)> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Start => {
                    let attempt = self.llm.stream(self.options.clone());
                    self.phase = Phase::Streaming(attempt);
                }
                Phase::Streaming(mut attempt) => {
                    let chunk = attempt.next().await?;
                    self.phase = match chunk.finish_reason() {
                        None => Phase::Streaming(attempt),
                        Some(reason) => match reason.failure() {
                            Some(failure) if self.policy.is_some() => {
                                Phase::Failed(failure.clone())
                            }
                            _ => Phase::Done,
                        },
                    };
                    return Some((RetryItem::Chunk(chunk), self));
                }
                Phase::Failed(failure) => {
                    let retry = self.plan(failure)?;
                    if let Err(error) = self.recorder.record(&RetryRecord::Retry(retry.clone())) {
                        tracing::warn!(
                            provider = %self.options.provider,
                            "llm: recording llm/retry failed, not retrying: {error}"
                        );
                        return None;
                    }
                    self.phase = Phase::Waiting(retry.clone());
                    return Some((RetryItem::Retry(retry), self));
                }
                Phase::Waiting(retry) => {
                    if !retry.wait(&self.options.signal).await {
                        return None;
                    }
                    let started = retry.started();
                    let record = RetryRecord::Started(started.clone());
                    if let Err(error) = self.recorder.record(&record) {
                        tracing::warn!(
                            provider = %self.options.provider,
                            "llm: recording llm/retry-started failed, not retrying: {error}"
                        );
                        return None;
                    }
                    self.phase = Phase::Start;
                    return Some((RetryItem::RetryStarted(started), self));
                }
                Phase::Done => return None,
            }
        }
    }

    /// The next retry of `failure`, or `None` when it is not retried.
    fn plan(&mut self, failure: LlmFailure) -> Option<LlmRetry> {
        let policy = self.policy.as_ref()?;
        if self.options.signal.is_cancelled() {
            return None;
        }
        let retry = self.retry + 1;
        let chain = &mut self.retry_id;
        let planned = LlmRetry::plan(
            policy,
            self.scope,
            &self.options.provider,
            retry,
            failure,
            fastrand::f64(),
            || chain.get_or_insert_with(random_uuid).clone(),
        )?;
        self.retry = retry;
        Some(planned)
    }
}
