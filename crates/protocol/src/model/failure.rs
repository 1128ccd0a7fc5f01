//! Model-call failures: serializable facts with a stable code (dsh's `LlmFailure` and
//! `LlmError`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// dsh's provider-neutral failure codes. Route on these, never on a message.
pub mod codes {
    /// The credential was refused (HTTP 401 or 403).
    pub const AUTH: &str = "AUTH";
    /// The account's quota or balance is exhausted.
    pub const QUOTA: &str = "QUOTA";
    /// The provider asked us to slow down (HTTP 429).
    pub const RATE_LIMIT: &str = "RATE_LIMIT";
    /// The request does not fit the model's context window.
    pub const CONTEXT_WINDOW_EXCEEDED: &str = "CONTEXT_WINDOW_EXCEEDED";
    /// The provider refused the request as malformed (HTTP 400, 413).
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    /// The provider failed (HTTP 5xx).
    pub const SERVER: &str = "SERVER";
    /// The stream went idle too long.
    pub const TIMEOUT: &str = "TIMEOUT";
    /// The connection failed or broke.
    pub const TRANSPORT: &str = "TRANSPORT";
    /// The stream ended before its terminator.
    pub const STREAM_CLOSED: &str = "STREAM_CLOSED";
    /// A completed response carried no content at all.
    pub const EMPTY_RESPONSE: &str = "EMPTY_RESPONSE";
    /// The caller cancelled the request.
    pub const ABORTED: &str = "ABORTED";
    /// The provider sent something that could not be read.
    pub const MALFORMED_RESPONSE: &str = "MALFORMED_RESPONSE";
    /// No adapter is registered for the provider.
    pub const NO_ADAPTER: &str = "NO_ADAPTER";
    /// The provider already has an adapter.
    pub const DUPLICATE_ADAPTER: &str = "DUPLICATE_ADAPTER";
    /// A registration that breaks the registry's rules (no providers, an empty name, bad
    /// provider metadata).
    pub const INVALID_ADAPTER: &str = "INVALID_ADAPTER";
    /// The model does not offer the requested reasoning effort.
    pub const UNSUPPORTED_REASONING_EFFORT: &str = "UNSUPPORTED_REASONING_EFFORT";
    /// A prepared call was dispatched twice, or with a changed config.
    pub const INVALID_PREPARED_CALL: &str = "INVALID_PREPARED_CALL";
    /// No credential could be found.
    pub const MISSING_CREDENTIAL: &str = "MISSING_CREDENTIAL";
    /// A credential was found but cannot be used (blank, or not printable ASCII).
    pub const INVALID_CREDENTIAL: &str = "INVALID_CREDENTIAL";
    /// Anything without a code of ours.
    pub const UNKNOWN: &str = "UNKNOWN";
    /// Content the provider path cannot carry (an image on a text-only path).
    pub const UNSUPPORTED_CONTENT: &str = "UNSUPPORTED_CONTENT";
    /// An adapter's model catalog is invalid (empty or duplicate ids).
    pub const INVALID_CATALOG: &str = "INVALID_CATALOG";
    /// An adapter's exact-model metadata names another model or has an empty name.
    pub const INVALID_MODEL_INFO: &str = "INVALID_MODEL_INFO";
    /// An adapter's context window is not a positive integer.
    pub const INVALID_MODEL_CONTEXT: &str = "INVALID_MODEL_CONTEXT";
    /// An adapter's default output cap is not a positive integer.
    pub const INVALID_MODEL_MAX_TOKENS: &str = "INVALID_MODEL_MAX_TOKENS";
    /// An adapter's reasoning metadata is empty, duplicated or names an unknown default.
    pub const INVALID_MODEL_REASONING: &str = "INVALID_MODEL_REASONING";
}

/// What adapters report when a call fails, as dsh stores it (`{message, code, status?,
/// providerRetryAfterMs?, requestId?}`). It is also the error type of every fallible call of
/// this crate.
///
/// Retry policy decides from `code` whether to try again; `provider_retry_after_ms` is the
/// provider's `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmFailure {
    /// Human-readable description.
    pub message: String,
    /// Stable machine code (see [`codes`]).
    pub code: String,
    /// HTTP status the provider returned, 100 to 599.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// How long the provider asked us to wait, in milliseconds (positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_retry_after_ms: Option<u64>,
    /// The provider's request id, for diagnostics (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The message a failure gets when its adapter gave none.
const FALLBACK_MESSAGE: &str = "LLM adapter failed";

impl LlmFailure {
    /// A failure with `code` and `message`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: code.into(),
            status: None,
            provider_retry_after_ms: None,
            request_id: None,
        }
    }

    /// The same failure with an HTTP status.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// The same failure with the provider's requested delay.
    #[must_use]
    pub fn with_retry_after_ms(mut self, delay_ms: u64) -> Self {
        self.provider_retry_after_ms = Some(delay_ms);
        self
    }

    /// The same failure with the provider's request id.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// `UNKNOWN`, for a failure that carries no code of ours.
    pub fn unknown(message: impl Into<String>) -> Self {
        Self::new(codes::UNKNOWN, message)
    }

    /// `ABORTED`, the caller cancelled.
    pub fn aborted(message: impl Into<String>) -> Self {
        Self::new(codes::ABORTED, message)
    }

    /// `NO_ADAPTER` for `provider`, in dsh's words.
    pub fn no_adapter(provider: &str) -> Self {
        Self::new(
            codes::NO_ADAPTER,
            format!("no adapter registered for provider \"{provider}\""),
        )
    }

    /// Whether the code is `code`.
    pub fn is(&self, code: &str) -> bool {
        self.code == code
    }

    /// The failure as a terminal finish may carry it: an empty message becomes
    /// `LLM adapter failed`, an empty code `UNKNOWN`, and facts outside their ranges (a status
    /// outside 100..=599, a zero delay, an empty request id) are dropped. dsh validates the
    /// same facts when an `LlmError` is built.
    #[must_use]
    pub fn normalized(mut self) -> Self {
        if self.message.is_empty() {
            FALLBACK_MESSAGE.clone_into(&mut self.message);
        }
        if self.code.is_empty() {
            codes::UNKNOWN.clone_into(&mut self.code);
        }
        if self
            .status
            .is_some_and(|status| !(100..=599).contains(&status))
        {
            self.status = None;
        }
        if self.provider_retry_after_ms == Some(0) {
            self.provider_retry_after_ms = None;
        }
        if self.request_id.as_deref() == Some("") {
            self.request_id = None;
        }
        self
    }

    /// An `UNKNOWN` failure from any error, its sources joined with `: ` (dsh's
    /// `errorChain`). An [`LlmFailure`] passed boxed keeps its facts.
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Self {
        if let Some(failure) = error.downcast_ref::<Self>() {
            return failure.clone();
        }
        Self::unknown(crate::errors::error_chain(error))
    }
}

impl fmt::Display for LlmFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LlmFailure {}

impl From<crate::errors::BoxError> for LlmFailure {
    fn from(error: crate::errors::BoxError) -> Self {
        match error.downcast::<Self>() {
            Ok(failure) => *failure,
            Err(other) => Self::from_error(other.as_ref()),
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn serializes_in_dsh_order_and_omits_absent_facts() {
        let failure = LlmFailure::new(codes::RATE_LIMIT, "busy")
            .with_status(429)
            .with_retry_after_ms(1500)
            .with_request_id("req-7");
        assert_eq!(
            serde_json::to_string(&failure).unwrap(),
            r#"{"message":"busy","code":"RATE_LIMIT","status":429,"providerRetryAfterMs":1500,"requestId":"req-7"}"#
        );
        assert_eq!(
            serde_json::to_string(&LlmFailure::unknown("x")).unwrap(),
            r#"{"message":"x","code":"UNKNOWN"}"#
        );
    }

    #[test]
    fn normalization_drops_facts_out_of_range() {
        let mut failure = LlmFailure::new("", "")
            .with_status(99)
            .with_retry_after_ms(0);
        failure.request_id = Some(String::new());
        assert_eq!(
            failure.normalized(),
            LlmFailure::new("UNKNOWN", "LLM adapter failed")
        );
        let kept = LlmFailure::new("SERVER", "boom").with_status(503);
        assert_eq!(kept.clone().normalized(), kept);
    }

    #[test]
    fn boxed_failures_keep_their_facts() {
        let boxed: crate::errors::BoxError =
            Box::new(LlmFailure::new("AUTH", "no").with_status(401));
        assert_eq!(
            LlmFailure::from(boxed),
            LlmFailure::new("AUTH", "no").with_status(401)
        );
        let plain: crate::errors::BoxError = "nope".into();
        assert_eq!(LlmFailure::from(plain), LlmFailure::unknown("nope"));
    }
}
