//! The durable records of a retry: `llm/retry` (scheduled, before the wait) and
//! `llm/retry-started` (the wait is over), the one rule that plans them, and the
//! [`RetryRecorder`] seam that makes them durable (the agent loop's recorder appends them to
//! the session log).

use std::pin::pin;
use std::time::Duration;

use dsh_kernel::BoxError;
use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_protocol::kinds::{LLM_RETRY, LLM_RETRY_STARTED};
use futures_util::future::{Either, select};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::policy::{RetryPolicy, next_delay_ms};
use crate::failure::LlmFailure;

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

/// Where a retried request belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryScope {
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
}

impl LlmRetry {
    /// Plans retry number `retry` (from 1) of a request to `provider` in `scope` that failed
    /// with `failure`: the delay is [`next_delay_ms`] under `policy` with jitter `rand`
    /// (in `[0, 1]`), and `retry_id` names the chain (asked only when the failure is
    /// retried). `None` when the policy does not retry it.
    ///
    /// This is the one planning rule of both [`super::retry_stream`] and the agent loop's
    /// retry plugin.
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
    // 2^53 - 1 is exact as a double.
    const MAX_SAFE: f64 = MAX_SAFE_INTEGER as f64;
    if *value == 0.0 {
        // `-0` prints as `0` in JavaScript, and the session refuses `-0`.
        return serializer.serialize_u64(0);
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        // The value is integral and within 2^53, so the cast is exact.
        return serializer.serialize_i64(*value as i64);
    }
    serializer.serialize_f64(*value)
}

/// One durable record of a retry, as the session log stores it.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryRecord {
    /// `llm/retry`: appended before the wait.
    Retry(LlmRetry),
    /// `llm/retry-started`: appended after the wait, before the next attempt.
    Started(LlmRetryStarted),
}

impl RetryRecord {
    /// The session event type ([`LLM_RETRY`] or [`LLM_RETRY_STARTED`]).
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

/// Makes the retry records durable; a retrier calls it before the wait (`llm/retry`) and
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
