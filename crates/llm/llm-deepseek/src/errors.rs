//! HTTP error responses to [`LlmFailure`]s (dsh's `httpErrorCode` and the error fields).

use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use dsh_llm::{LlmFailure, codes};
use regex::Regex;
use reqwest::header::HeaderMap;
use serde_json::Value;

fn regexes(patterns: &[&str]) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| Regex::new(pattern).ok())
        .collect()
}

static QUOTA: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    regexes(&[
        r"(?i)\binsufficient[\s_-]+(?:quota|balance|credits?)\b",
        r"(?i)\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b",
        r"(?i)\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b",
        r"(?i)\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b",
        r"(?i)\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b",
    ])
});

static CONTEXT_OVERFLOW: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    regexes(&[
        r"(?i)(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-](?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])",
        r"(?i)\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b",
        r"(?i)\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b",
        r"(?i)\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:this|the)\s+model\b",
        r"(?i)\b(?:input|prompt|request|messages?)\b.{0,40}\b(?:exceed(?:s|ed)?|overflows?|is\s+larger\s+than)\b.{0,40}\b(?:the\s+)?(?:model(?:'s)?\s+)?context(?:\s+(?:length|window))?\b",
    ])
});

/// Whether provider error detail names an exhausted quota or balance (dsh's
/// `isQuotaExceededError`; belongs in `dsh-llm`).
pub fn is_quota_exceeded(detail: &str) -> bool {
    QUOTA.iter().any(|re| re.is_match(detail))
}

/// Whether provider error detail names a context-window overflow (dsh's
/// `isContextWindowExceededError`; belongs in `dsh-llm`).
pub fn is_context_window_exceeded(detail: &str) -> bool {
    CONTEXT_OVERFLOW.iter().any(|re| re.is_match(detail))
}

/// The failure code of an HTTP error status with its provider error `detail` (`error.code`,
/// `error.type` and `error.message`, joined by spaces).
pub fn http_error_code(status: u16, detail: &str) -> String {
    if status == 401 || status == 403 {
        return codes::AUTH.into();
    }
    if status == 413 {
        return codes::INVALID_REQUEST.into();
    }
    if is_quota_exceeded(detail) {
        return codes::QUOTA.into();
    }
    if status == 429 {
        return codes::RATE_LIMIT.into();
    }
    if status == 400 {
        if is_context_window_exceeded(detail) {
            return codes::CONTEXT_WINDOW_EXCEEDED.into();
        }
        return codes::INVALID_REQUEST.into();
    }
    if status >= 500 {
        return codes::SERVER.into();
    }
    format!("HTTP_{status}")
}

/// `Retry-After` in milliseconds: whole seconds × 1000, or an HTTP date minus `now`; only a
/// positive delay is kept.
pub fn retry_after_ms(value: &str, now: SystemTime) -> Option<u64> {
    let value = value.trim();
    let ms = if let Ok(seconds) = value.parse::<u64>() {
        seconds.saturating_mul(1000)
    } else {
        let date = httpdate::parse_http_date(value).ok()?;
        let delay = date.duration_since(now).unwrap_or(Duration::ZERO);
        u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)
    };
    (ms > 0).then_some(ms)
}

/// The failure of an HTTP error response: code per [`http_error_code`], message from the
/// body's `error.message` (else `DeepSeek API error (HTTP <status>)`), `status`,
/// `providerRetryAfterMs` and `requestId` (`x-request-id`, else `x-deepseek-request-id`).
pub fn http_failure(status: u16, headers: &HeaderMap, body: &str, now: SystemTime) -> LlmFailure {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|value| value.get("error"));
    let field = |name: &str| {
        error
            .and_then(|error| error.get(name))
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    let detail = [field("code"), field("type"), field("message")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let message = field("message").map_or_else(
        || format!("DeepSeek API error (HTTP {status})"),
        str::to_owned,
    );
    let mut failure = LlmFailure::new(http_error_code(status, &detail), message);
    if (100..=599).contains(&status) {
        failure = failure.with_status(status);
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    if let Some(delay) = header("retry-after").and_then(|value| retry_after_ms(value, now)) {
        failure = failure.with_retry_after_ms(delay);
    }
    if let Some(id) = header("x-request-id").or_else(|| header("x-deepseek-request-id")) {
        failure = failure.with_request_id(id);
    }
    failure
}
