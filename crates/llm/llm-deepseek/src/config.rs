//! The adapter's configuration (dsh's `src/index.ts` settings and `src/adapter.ts` defaults).

use serde::Deserialize;

/// The API key's default environment variable.
pub const DEFAULT_API_KEY_ENV: &str = "DEEPSEEK_API_KEY";
/// The environment variable that overrides the default base URL.
pub const BASE_URL_ENV: &str = "DEEPSEEK_BASE_URL";
/// The official API.
pub const DEFAULT_BASE_URL: &str = "https://api.deepseek.com";
/// The default output cap (`DEFAULT_MAX_TOKENS`).
pub const DEFAULT_MAX_TOKENS: u64 = 256_000;
/// The default context window (`DEFAULT_CONTEXT_WINDOW`).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 1_000_000;
/// The default idle timeout of a stream, in milliseconds: the longest wait for the next data
/// event (comments and blank keep-alive lines do not count).
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// The default bound on the time to response headers (connect, send, wait), in milliseconds.
pub const DEFAULT_HEADERS_TIMEOUT_MS: u64 = 60_000;
/// The default bound on a whole request attempt (headers and the full stream), in
/// milliseconds: 30 minutes.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 1_800_000;
/// The largest timeout accepted, in milliseconds (about 24.8 days, JavaScript's timer limit).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
/// The default reasoning effort.
pub const DEFAULT_REASONING_EFFORT: &str = "high";
/// The default model catalog, in display order.
pub const DEFAULT_MODELS: [&str; 3] = [
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "deepseek-v4-flash-vision-exp",
];

/// The deployment's `thinking` switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thinking {
    /// `{"type": "enabled"}`.
    Enabled,
    /// `{"type": "disabled"}`.
    Disabled,
}

impl Thinking {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        }
    }
}

/// Row config of `dsh-llm-deepseek` (camelCase keys, all optional; unknown keys are accepted
/// and ignored). Holds no secret: only the *name* of the key's environment variable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeepSeekConfig {
    /// The environment variable holding the API key (default `DEEPSEEK_API_KEY`), read on
    /// every request.
    pub api_key_env: Option<String>,
    /// The API base URL (else `$DEEPSEEK_BASE_URL`, else `https://api.deepseek.com`), resolved
    /// on every request.
    #[serde(rename = "baseURL", alias = "baseUrl")]
    pub base_url: Option<String>,
    /// The deployment's `thinking` switch.
    pub thinking: Option<Thinking>,
    /// The default effort: `off`, `low`, `high` or `max` (default `high`).
    pub reasoning_effort: Option<String>,
    /// The default output cap (default 256000).
    pub max_tokens: Option<u64>,
    /// The context window of models outside the catalog (default 1000000).
    pub default_context_window: Option<u64>,
    /// The idle timeout of a stream in milliseconds (default 300000): how long a read may wait
    /// for the next data event. Only `data:` events count; comments (`: keep-alive`) and blank
    /// lines do not. The wait for response headers counts too.
    pub stream_idle_timeout_ms: Option<u64>,
    /// How long connecting, sending the request and receiving the response headers may take,
    /// in milliseconds (default 60000).
    pub headers_timeout_ms: Option<u64>,
    /// How long one request attempt may take in all, from its start to the stream's end, in
    /// milliseconds (default 1800000).
    pub request_timeout_ms: Option<u64>,
    /// The route's retry policy (dsh's `retryPolicy`: `mode`, `maxRetries`,
    /// `retryableCodes`, `backoff {initialDelayMs, maxDelayMs, jitterRatio}`); absent, the
    /// default (5 retries, 0.5 to 10 s).
    pub retry_policy: Option<serde_json::Value>,
}

impl DeepSeekConfig {
    /// The key's environment variable.
    pub fn api_key_env(&self) -> &str {
        self.api_key_env.as_deref().unwrap_or(DEFAULT_API_KEY_ENV)
    }

    /// The effective default effort.
    pub fn reasoning_effort(&self) -> &str {
        self.reasoning_effort
            .as_deref()
            .unwrap_or(DEFAULT_REASONING_EFFORT)
    }

    /// The effective default output cap.
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
    }

    /// The effective default context window.
    pub fn default_context_window(&self) -> u64 {
        self.default_context_window
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// The effective idle timeout in milliseconds.
    pub fn stream_idle_timeout_ms(&self) -> u64 {
        self.stream_idle_timeout_ms
            .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS)
    }

    /// The effective bound on the time to response headers, in milliseconds.
    pub fn headers_timeout_ms(&self) -> u64 {
        self.headers_timeout_ms
            .unwrap_or(DEFAULT_HEADERS_TIMEOUT_MS)
    }

    /// The effective bound on a whole request attempt, in milliseconds.
    pub fn request_timeout_ms(&self) -> u64 {
        self.request_timeout_ms
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT_MS)
    }
}
