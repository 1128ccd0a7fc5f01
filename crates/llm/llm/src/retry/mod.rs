//! Retry: provider-owned policies ([`RetryPolicy`]), the pure delay rule ([`next_delay`]),
//! and the helper that retries a request and records `llm/retry` / `llm/retry-started`
//! ([`Retrying`], [`retry_stream`]).

mod policy;
mod stream;

pub use policy::{
    Backoff, DEFAULT_RETRYABLE_CODES, MAX_TIMER_DELAY_MS, RetryMode, RetryPolicy, next_delay,
    next_delay_ms,
};
pub use stream::{
    LLM_RETRY, LLM_RETRY_STARTED, LlmRetry, LlmRetryStarted, RetryItem, RetryRecord, RetryRecorder,
    RetryScope, Retrying, SessionRecorder, retry_stream,
};
