//! Retrying a model request under its provider's policy (the executing half of dsh's
//! `dsh-llm-retry`), with the durable `llm/retry` and `llm/retry-started` records.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use dsh_kernel::BoxError;
use dsh_protocol::ids::random_uuid;
use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_session::{LiveSession, SurfaceIntent};
use futures_util::future::{Either, select};
use futures_util::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::policy::{RetryPolicy, next_delay_ms};
use crate::adapter::ChunkStream;
use crate::failure::LlmFailure;
use crate::options::GenerateOptions;
use crate::runtime::LlmRuntime;
use crate::types::StreamChunk;

/// The session event type of a scheduled retry.
pub const LLM_RETRY: &str = "llm/retry";
/// The session event type of a retry whose wait is over.
pub const LLM_RETRY_STARTED: &str = "llm/retry-started";

/// `llm/retry` data: one retry scheduled after a failed attempt, recorded before the wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRetry {
    /// Names the chain of retries of one step (the same for each of its retries).
    pub retry_id: String,
    /// Turn of the failed request.
    pub turn: u64,
    /// Step of the failed request.
    pub step: u64,
    /// Provider route of the failed request.
    pub provider: String,
    /// `normal` or `always`.
    pub mode: String,
    /// [`RetryPolicy::policy_key`] of the policy applied.
    pub policy_key: String,
    /// This retry's number, from 1.
    pub retry: u64,
    /// The policy's budget (`normal` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    /// The wait before the retry, in milliseconds (may have a fraction, as in dsh).
    #[serde(serialize_with = "js_number")]
    pub delay_ms: f64,
    /// The failure being retried.
    pub failure: LlmFailure,
}

/// `llm/retry-started` data: the wait of a scheduled retry is over and the request is sent
/// again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRetryStarted {
    /// The chain's id, as in its `llm/retry`.
    pub retry_id: String,
    /// Turn.
    pub turn: u64,
    /// Step.
    pub step: u64,
    /// The retry's number.
    pub retry: u64,
}

impl LlmRetry {
    /// Plans retry number `retry` (from 1) of a request to `provider` in `scope` that failed
    /// with `failure`: the delay is [`next_delay_ms`] under `policy` with jitter `rand`
    /// (in `[0, 1]`), and `retry_id` names the chain (asked only when the failure is
    /// retried). `None` when the policy does not retry it.
    ///
    /// This is the one planning rule of both [`Retrying`] and the agent loop's retry plugin.
    pub fn plan(
        policy: &RetryPolicy,
        scope: RetryScope,
        provider: &str,
        retry: u64,
        failure: LlmFailure,
        rand: f64,
        retry_id: impl FnOnce() -> String,
    ) -> Option<Self> {
        let delay_ms = next_delay_ms(policy, retry, &failure, rand)?;
        Some(Self {
            retry_id: retry_id(),
            turn: scope.turn,
            step: scope.step,
            provider: provider.to_owned(),
            mode: policy.mode_name().to_owned(),
            policy_key: policy.policy_key(),
            retry,
            max_retries: policy.max_retries(),
            delay_ms,
            failure,
        })
    }

    /// Waits out [`LlmRetry::delay_ms`]. `false` when `signal` fired first (then the retry is
    /// off and nothing more is recorded).
    pub async fn wait(&self, signal: &CancellationToken) -> bool {
        let delay = Duration::try_from_secs_f64(self.delay_ms / 1000.0).unwrap_or_default();
        let sleep = pin!(tokio::time::sleep(delay));
        let cancelled = pin!(signal.cancelled());
        matches!(select(sleep, cancelled).await, Either::Left(_))
    }

    /// The `llm/retry-started` record of this retry, once its wait is over.
    pub fn started(&self) -> LlmRetryStarted {
        LlmRetryStarted {
            retry_id: self.retry_id.clone(),
            turn: self.turn,
            step: self.step,
            retry: self.retry,
        }
    }
}

/// Writes an integral `f64` as an integer, as JavaScript prints it.
fn js_number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    #[allow(clippy::cast_precision_loss)] // 2^53 - 1 is exact as a double
    const MAX_SAFE: f64 = MAX_SAFE_INTEGER as f64;
    if *value == 0.0 {
        // `-0` prints as `0` in JavaScript, and the session refuses `-0`.
        return serializer.serialize_u64(0);
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        #[allow(clippy::cast_possible_truncation)] // integral and within 2^53
        return serializer.serialize_i64(*value as i64);
    }
    serializer.serialize_f64(*value)
}

/// One durable record of the retry helper, as the session log stores it.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryRecord {
    /// `llm/retry`: appended before the wait.
    Retry(LlmRetry),
    /// `llm/retry-started`: appended after the wait, before the next attempt.
    Started(LlmRetryStarted),
}

impl RetryRecord {
    /// The session event type.
    pub fn event_type(&self) -> &'static str {
        match self {
            Self::Retry(_) => LLM_RETRY,
            Self::Started(_) => LLM_RETRY_STARTED,
        }
    }

    /// The event data, keys in dsh's order.
    pub fn data(&self) -> Value {
        let data = match self {
            Self::Retry(retry) => serde_json::to_value(retry),
            Self::Started(started) => serde_json::to_value(started),
        };
        data.unwrap_or_default()
    }
}

/// Makes the retry records durable; the helper calls it before the wait (`llm/retry`) and
/// after it (`llm/retry-started`). A failure stops the retrying: the failed attempt's finish
/// stands.
pub trait RetryRecorder: Send + Sync {
    /// Records one event.
    fn record(&self, record: &RetryRecord) -> Result<(), BoxError>;
}

impl<F> RetryRecorder for F
where
    F: Fn(&RetryRecord) -> Result<(), BoxError> + Send + Sync,
{
    fn record(&self, record: &RetryRecord) -> Result<(), BoxError> {
        self(record)
    }
}

/// A recorder that appends the records to a live session (both types are known to
/// `dsh-session`; they are log-only, not surface events).
#[derive(Debug, Clone)]
pub struct SessionRecorder {
    session: Arc<LiveSession>,
}

impl SessionRecorder {
    /// Records into `session`.
    pub fn new(session: Arc<LiveSession>) -> Self {
        Self { session }
    }
}

impl RetryRecorder for SessionRecorder {
    fn record(&self, record: &RetryRecord) -> Result<(), BoxError> {
        self.session
            .append(record.event_type(), record.data(), SurfaceIntent::default())
            .map(drop)
            .map_err(|error| Box::new(error) as BoxError)
    }
}

/// Where a retried request belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryScope {
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
}

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

type Random = Arc<dyn Fn() -> f64 + Send + Sync>;

/// Runs a model request and retries it, within the same turn and step, while its terminal
/// finish is a failure the policy retries (see [`super::next_delay_ms`]).
///
/// For each retry it records `llm/retry` (before the wait), waits (cancelled by the
/// request's signal: then nothing more is recorded and the stream ends), records
/// `llm/retry-started`, and sends the request again. Once the budget is spent, or the
/// failure is not retried, the last attempt's finish is final. The whole request is sent
/// again, never a continuation: a partly streamed failed attempt is superseded (see
/// [`RetryItem`]).
///
/// Retry numbers count within one helper run; an agent loop runs one per step, which is
/// where dsh counts them.
pub struct Retrying {
    scope: RetryScope,
    recorder: Arc<dyn RetryRecorder>,
    policy: Option<RetryPolicy>,
    random: Random,
}

impl std::fmt::Debug for Retrying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retrying")
            .field("scope", &self.scope)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Retrying {
    /// Retries in `scope`, recording through `recorder`, with jitter from `fastrand`.
    pub fn new(scope: RetryScope, recorder: Arc<dyn RetryRecorder>) -> Self {
        Self {
            scope,
            recorder,
            policy: None,
            random: Arc::new(fastrand::f64),
        }
    }

    /// Uses `policy` (a prepared call's) instead of the one registered for the provider.
    #[must_use]
    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Draws jitter from `random` (values in `[0, 1]`), for deterministic tests.
    #[must_use]
    pub fn with_random(mut self, random: impl Fn() -> f64 + Send + Sync + 'static) -> Self {
        self.random = Arc::new(random);
        self
    }

    /// Streams `options` through `llm` ([`LlmRuntime::stream`]), sending a clone of it again
    /// for each retry. Without an explicit policy, the provider's registered one applies; an
    /// unregistered provider (a route served by an `llm/stream` listener) is not retried.
    pub fn stream(
        self,
        llm: Arc<LlmRuntime>,
        options: GenerateOptions,
    ) -> BoxStream<'static, RetryItem> {
        let mut this = self;
        if this.policy.is_none() {
            this.policy = llm.retry_policy(&options.provider).ok();
        }
        let provider = options.provider.clone();
        let signal = options.signal.clone();
        this.attempts(provider, signal, move || {
            let attempt = llm.stream(options.clone());
            async move { attempt }
        })
    }

    /// The general form: `start` begins one attempt (for example rebuilding the request and
    /// streaming a fresh [`crate::PreparedCall`]); `provider` is recorded in `llm/retry`;
    /// `signal` cancels the wait. Without a policy ([`Retrying::with_policy`]) nothing is
    /// retried.
    pub fn attempts<F, Fut>(
        self,
        provider: impl Into<String>,
        signal: CancellationToken,
        start: F,
    ) -> BoxStream<'static, RetryItem>
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = ChunkStream> + Send + 'static,
    {
        let machine = Machine {
            start,
            provider: provider.into(),
            signal,
            scope: self.scope,
            recorder: self.recorder,
            policy: self.policy,
            random: self.random,
            retry: 0,
            retry_id: None,
            phase: Phase::Start,
        };
        stream::unfold(machine, Machine::step).boxed()
    }
}

/// [`Retrying::stream`] with the provider's registered policy and random jitter.
pub fn retry_stream(
    llm: Arc<LlmRuntime>,
    options: GenerateOptions,
    scope: RetryScope,
    recorder: Arc<dyn RetryRecorder>,
) -> BoxStream<'static, RetryItem> {
    Retrying::new(scope, recorder).stream(llm, options)
}

enum Phase {
    Start,
    Streaming(ChunkStream),
    Failed(LlmFailure),
    Waiting(LlmRetry),
    Done,
}

struct Machine<F> {
    start: F,
    provider: String,
    signal: CancellationToken,
    scope: RetryScope,
    recorder: Arc<dyn RetryRecorder>,
    policy: Option<RetryPolicy>,
    random: Random,
    retry: u64,
    retry_id: Option<String>,
    phase: Phase,
}

impl<F, Fut> Machine<F>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = ChunkStream> + Send + 'static,
{
    async fn step(mut self) -> Option<(RetryItem, Self)> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Start => {
                    let attempt = (self.start)().await;
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
                            provider = %self.provider,
                            "llm: recording llm/retry failed, not retrying: {error}"
                        );
                        return None;
                    }
                    self.phase = Phase::Waiting(retry.clone());
                    return Some((RetryItem::Retry(retry), self));
                }
                Phase::Waiting(retry) => {
                    if !retry.wait(&self.signal).await {
                        return None;
                    }
                    let started = retry.started();
                    let record = RetryRecord::Started(started.clone());
                    if let Err(error) = self.recorder.record(&record) {
                        tracing::warn!(
                            provider = %self.provider,
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
        if self.signal.is_cancelled() {
            return None;
        }
        let retry = self.retry + 1;
        let chain = &mut self.retry_id;
        let planned = LlmRetry::plan(
            policy,
            self.scope,
            &self.provider,
            retry,
            failure,
            (self.random)(),
            || chain.get_or_insert_with(random_uuid).clone(),
        )?;
        self.retry = retry;
        Some(planned)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn records_serialize_as_dsh_writes_them() {
        let retry = LlmRetry {
            retry_id: "r".into(),
            turn: 1,
            step: 1,
            provider: "mock".into(),
            mode: "normal".into(),
            policy_key: "k".into(),
            retry: 1,
            max_retries: Some(2),
            delay_ms: 500.0,
            failure: LlmFailure::new("RATE_LIMIT", "busy").with_status(429),
        };
        let data = RetryRecord::Retry(retry.clone()).data();
        assert_eq!(
            data,
            json!({"retryId": "r", "turn": 1, "step": 1, "provider": "mock", "mode": "normal",
                   "policyKey": "k", "retry": 1, "maxRetries": 2, "delayMs": 500,
                   "failure": {"message": "busy", "code": "RATE_LIMIT", "status": 429}})
        );
        let jittered = LlmRetry {
            delay_ms: 462.5,
            max_retries: None,
            ..retry
        };
        assert_eq!(
            dsh_protocol::json::to_js_string(&RetryRecord::Retry(jittered).data()),
            r#"{"retryId":"r","turn":1,"step":1,"provider":"mock","mode":"normal","policyKey":"k","retry":1,"delayMs":462.5,"failure":{"message":"busy","code":"RATE_LIMIT","status":429}}"#
        );
    }

    fn policy() -> RetryPolicy {
        let config = json!({
            "mode": "normal",
            "maxRetries": 2,
            "backoff": {"initialDelayMs": 100, "maxDelayMs": 1000, "jitterRatio": 0},
        });
        RetryPolicy::from_config(Some(&config), "test").unwrap_or_default()
    }

    #[test]
    fn a_plan_records_the_policy_and_names_its_chain_only_when_retried() {
        let scope = RetryScope { turn: 3, step: 4 };
        let busy = LlmFailure::new("SERVER", "busy");
        let mut asked = 0;
        let planned = LlmRetry::plan(&policy(), scope, "mock", 2, busy.clone(), 0.5, || {
            asked += 1;
            "chain".to_owned()
        });
        assert_eq!(
            planned,
            Some(LlmRetry {
                retry_id: "chain".into(),
                turn: 3,
                step: 4,
                provider: "mock".into(),
                mode: "normal".into(),
                policy_key: policy().policy_key(),
                retry: 2,
                max_retries: Some(2),
                delay_ms: 200.0,
                failure: busy.clone(),
            })
        );
        assert_eq!(asked, 1);
        let started = planned.map(|retry| retry.started());
        assert_eq!(
            started,
            Some(LlmRetryStarted {
                retry_id: "chain".into(),
                turn: 3,
                step: 4,
                retry: 2,
            })
        );

        // Past the budget, or a code the policy does not retry: no plan, no chain id.
        let mut asked = 0;
        let mut id = || {
            asked += 1;
            String::new()
        };
        assert_eq!(
            LlmRetry::plan(&policy(), scope, "mock", 3, busy, 0.5, &mut id),
            None
        );
        let denied = LlmFailure::new("AUTH", "no");
        assert_eq!(
            LlmRetry::plan(&policy(), scope, "mock", 1, denied, 0.5, &mut id),
            None
        );
        assert_eq!(asked, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_lasts_the_delay_unless_the_signal_fires() {
        let retry = LlmRetry::plan(
            &policy(),
            RetryScope { turn: 1, step: 1 },
            "mock",
            1,
            LlmFailure::new("SERVER", "busy"),
            0.5,
            || "r".to_owned(),
        );
        let Some(retry) = retry else {
            panic!("SERVER is retried");
        };
        let signal = CancellationToken::new();
        let before = tokio::time::Instant::now();
        assert!(retry.wait(&signal).await);
        assert_eq!(before.elapsed(), Duration::from_millis(100));

        signal.cancel();
        let before = tokio::time::Instant::now();
        assert!(!retry.wait(&signal).await);
        assert_eq!(before.elapsed(), Duration::ZERO);
    }
}
