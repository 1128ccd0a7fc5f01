//! Retry: provider-owned policies ([`RetryPolicy`]), the pure delay rule ([`next_delay`]),
//! the durable records with the rule that plans them ([`LlmRetry::plan`]) and the seam that
//! keeps them ([`RetryRecorder`]), and [`retry_stream`], which retries a request outside a
//! turn.

mod policy;
mod record;
mod stream;

pub use policy::{
    Backoff, DEFAULT_RETRYABLE_CODES, MAX_TIMER_DELAY_MS, RetryMode, RetryPolicy, next_delay,
    next_delay_ms,
};
pub use record::{LlmRetry, LlmRetryStarted, RetryRecord, RetryRecorder, RetryScope};
pub use stream::{RetryItem, retry_stream};
