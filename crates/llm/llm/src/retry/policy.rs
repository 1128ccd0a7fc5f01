//! Provider-owned retry policies and the pure delay rule (dsh's `retry-policy.ts` and the
//! decision half of `dsh-llm-retry`).

use std::time::Duration;

use dsh_protocol::json::MAX_SAFE_INTEGER;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::failure::{LlmFailure, codes};

/// The largest delay a timer accepts (dsh's `MAX_TIMER_DELAY_MS`, 2^31 - 1).
pub const MAX_TIMER_DELAY_MS: f64 = 2_147_483_647.0;

/// The codes a default policy retries.
pub const DEFAULT_RETRYABLE_CODES: [&str; 5] = [
    codes::EMPTY_RESPONSE,
    codes::RATE_LIMIT,
    codes::SERVER,
    codes::TIMEOUT,
    codes::TRANSPORT,
];

/// What a policy retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum RetryMode {
    /// At most `max_retries` retries, of failures whose code is listed.
    #[serde(rename_all = "camelCase")]
    Normal {
        /// Retries after the first request.
        max_retries: u64,
        /// The codes that are retried.
        retryable_codes: Vec<String>,
    },
    /// Every failure, until success or cancellation.
    Always,
}

/// Exponential backoff with symmetric jitter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Backoff {
    /// The first local delay, in milliseconds.
    pub initial_delay_ms: f64,
    /// The largest local delay, and the largest provider delay accepted, in milliseconds.
    pub max_delay_ms: f64,
    /// Each local delay is multiplied by a random factor in `[1 - j, 1 + j]`.
    pub jitter_ratio: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial_delay_ms: 500.0,
            max_delay_ms: 10_000.0,
            jitter_ratio: 0.1,
        }
    }
}

/// A provider route's resolved retry policy (dsh's `ResolvedRetryPolicy`), captured when
/// the route is registered.
///
/// The default is dsh's: `normal`, 5 retries of `EMPTY_RESPONSE`, `RATE_LIMIT`, `SERVER`,
/// `TIMEOUT` and `TRANSPORT`, 500 ms first delay, 10 s at most, ±10% jitter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// What is retried.
    #[serde(flatten)]
    pub mode: RetryMode,
    /// How long to wait.
    #[serde(flatten)]
    pub backoff: Backoff,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            mode: RetryMode::Normal {
                max_retries: 5,
                retryable_codes: DEFAULT_RETRYABLE_CODES.map(str::to_owned).to_vec(),
            },
            backoff: Backoff::default(),
        }
    }
}

impl RetryPolicy {
    /// `normal` or `always`.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            RetryMode::Normal { .. } => "normal",
            RetryMode::Always => "always",
        }
    }

    /// The retry budget of a `normal` policy.
    pub fn max_retries(&self) -> Option<u64> {
        match self.mode {
            RetryMode::Normal { max_retries, .. } => Some(max_retries),
            RetryMode::Always => None,
        }
    }

    /// Whether a failure with `code` is eligible at all.
    pub fn retries_code(&self, code: &str) -> bool {
        match &self.mode {
            RetryMode::Normal {
                retryable_codes, ..
            } => retryable_codes.iter().any(|known| known == code),
            RetryMode::Always => true,
        }
    }

    /// The key `llm/retry` events carry to tell policies apart: the `JSON.stringify` of
    /// `[mode, maxRetries, sortedCodes, initialDelayMs, maxDelayMs, jitterRatio]` (without the
    /// two normal-only entries for `always`), as dsh computes it.
    pub fn policy_key(&self) -> String {
        let Backoff {
            initial_delay_ms,
            max_delay_ms,
            jitter_ratio,
        } = self.backoff;
        let key = match &self.mode {
            RetryMode::Normal {
                max_retries,
                retryable_codes,
            } => {
                let mut sorted = retryable_codes.clone();
                // JavaScript's default sort compares UTF-16 code units.
                sorted.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
                json!([
                    "normal",
                    max_retries,
                    sorted,
                    initial_delay_ms,
                    max_delay_ms,
                    jitter_ratio
                ])
            }
            RetryMode::Always => json!(["always", initial_delay_ms, max_delay_ms, jitter_ratio]),
        };
        dsh_protocol::json::to_js_string(&key)
    }

    /// Validates and resolves a provider's `retryPolicy` config value as dsh does
    /// (`resolveRetryPolicy`); `None` gives the default. `path` names the config in messages
    /// (`llm-deepseek.retryPolicy`).
    pub fn from_config(config: Option<&Value>, path: &str) -> Result<Self, String> {
        let Some(config) = config else {
            return Ok(Self::default());
        };
        let Value::Object(config) = config else {
            return Err(format!("{path} must be an object"));
        };
        check_keys(
            config,
            &["mode", "maxRetries", "retryableCodes", "backoff"],
            path,
        )?;
        let backoff = resolve_backoff(config.get("backoff"), &format!("{path}.backoff"))?;
        match config.get("mode").and_then(Value::as_str) {
            Some("normal") => {
                let max_retries = match config.get("maxRetries") {
                    None => 5,
                    Some(value) => value
                        .as_u64()
                        .filter(|count| *count <= MAX_SAFE_INTEGER)
                        .ok_or_else(|| {
                            format!("{path}.maxRetries must be a non-negative safe integer")
                        })?,
                };
                let retryable_codes = match config.get("retryableCodes") {
                    None => DEFAULT_RETRYABLE_CODES.map(str::to_owned).to_vec(),
                    Some(Value::Array(items)) => {
                        if items.is_empty() {
                            return Err(format!("{path}.retryableCodes must not be empty"));
                        }
                        let mut codes: Vec<String> = Vec::with_capacity(items.len());
                        for item in items {
                            match item.as_str() {
                                Some(code) if !code.is_empty() => {
                                    if codes.iter().any(|seen| seen == code) {
                                        return Err(format!(
                                            "{path}.retryableCodes must not contain duplicates"
                                        ));
                                    }
                                    codes.push(code.to_owned());
                                }
                                _ => {
                                    return Err(format!(
                                        "{path}.retryableCodes must contain only non-empty strings"
                                    ));
                                }
                            }
                        }
                        codes
                    }
                    Some(_) => {
                        return Err(format!(
                            "{path}.retryableCodes must contain only non-empty strings"
                        ));
                    }
                };
                Ok(Self {
                    mode: RetryMode::Normal {
                        max_retries,
                        retryable_codes,
                    },
                    backoff,
                })
            }
            Some("always") => Ok(Self {
                mode: RetryMode::Always,
                backoff,
            }),
            _ => Err(format!("{path}.mode must be \"normal\" or \"always\"")),
        }
    }
}

fn check_keys(map: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), String> {
    match map.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(format!("{path}: unknown key \"{key}\"")),
        None => Ok(()),
    }
}

fn resolve_backoff(config: Option<&Value>, path: &str) -> Result<Backoff, String> {
    let defaults = Backoff::default();
    let Some(config) = config else {
        return Ok(defaults);
    };
    let Value::Object(config) = config else {
        return Err(format!("{path} must be an object"));
    };
    check_keys(
        config,
        &["initialDelayMs", "maxDelayMs", "jitterRatio"],
        path,
    )?;
    let number = |key: &str, default: f64| match config.get(key) {
        None => Some(default),
        Some(value) => value.as_f64(),
    };
    let delay_error = |key: &str| {
        format!(
            "{path}.{key} must be a positive finite number no greater than {MAX_TIMER_DELAY_MS}"
        )
    };
    let initial_delay_ms = number("initialDelayMs", defaults.initial_delay_ms)
        .filter(|ms| *ms > 0.0 && *ms <= MAX_TIMER_DELAY_MS)
        .ok_or_else(|| delay_error("initialDelayMs"))?;
    let max_delay_ms = number("maxDelayMs", defaults.max_delay_ms)
        .filter(|ms| *ms > 0.0 && *ms <= MAX_TIMER_DELAY_MS)
        .ok_or_else(|| delay_error("maxDelayMs"))?;
    if initial_delay_ms > max_delay_ms {
        return Err(format!(
            "{path}.initialDelayMs must be less than or equal to maxDelayMs"
        ));
    }
    let jitter_ratio = number("jitterRatio", defaults.jitter_ratio)
        .filter(|ratio| (0.0..=1.0).contains(ratio))
        .ok_or_else(|| format!("{path}.jitterRatio must be between 0 and 1"))?;
    Ok(Backoff {
        initial_delay_ms,
        max_delay_ms,
        jitter_ratio,
    })
}

/// The delay before retry number `retry` (1 for the first retry) of `failure`, in
/// milliseconds, exactly as dsh computes it; `None` when the failure is not retried.
///
/// - `normal`: a code outside `retryableCodes`, or `retry > maxRetries`, is not retried.
/// - The provider's `providerRetryAfterMs` in `(0, maxDelayMs]` is used as is; above
///   `maxDelayMs`, `normal` gives up and `always` uses the local delay.
/// - The local delay is `min(min(initial * 2^(retry-1), max) * (1 - j + 2j * rand), max)`,
///   with `rand` in `[0, 1]`.
///
/// The value may have a fraction (it is what `llm/retry` records as `delayMs`).
pub fn next_delay_ms(
    policy: &RetryPolicy,
    retry: u64,
    failure: &LlmFailure,
    rand: f64,
) -> Option<f64> {
    if retry == 0 || !policy.retries_code(&failure.code) {
        return None;
    }
    if policy.max_retries().is_some_and(|max| retry > max) {
        return None;
    }
    let backoff = policy.backoff;
    if let Some(after) = failure.provider_retry_after_ms.filter(|ms| *ms > 0) {
        // A delay in ms is far below 2^53, so the cast is exact.
        let after = after as f64;
        if after <= backoff.max_delay_ms {
            return Some(after);
        }
        if matches!(policy.mode, RetryMode::Normal { .. }) {
            return None;
        }
    }
    Some(local_delay_ms(backoff, retry, rand))
}

/// [`next_delay_ms`] as a [`Duration`].
pub fn next_delay(
    policy: &RetryPolicy,
    retry: u64,
    failure: &LlmFailure,
    rand: f64,
) -> Option<Duration> {
    next_delay_ms(policy, retry, failure, rand)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
}

fn local_delay_ms(backoff: Backoff, retry: u64, rand: f64) -> f64 {
    let exponent = i32::try_from(retry.saturating_sub(1).min(1024)).unwrap_or(1024);
    let exponential = (backoff.initial_delay_ms * 2f64.powi(exponent)).min(backoff.max_delay_ms);
    let jitter = 1.0 - backoff.jitter_ratio + 2.0 * backoff.jitter_ratio * rand.clamp(0.0, 1.0);
    (exponential * jitter).min(backoff.max_delay_ms)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn default_policy_and_key() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.max_retries(), Some(5));
        assert_eq!(
            policy.policy_key(),
            r#"["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]"#
        );
        let dsh_test = RetryPolicy {
            mode: RetryMode::Normal {
                max_retries: 2,
                retryable_codes: vec!["SERVER".into(), "RATE_LIMIT".into()],
            },
            backoff: Backoff {
                jitter_ratio: 0.0,
                ..Backoff::default()
            },
        };
        assert_eq!(
            dsh_test.policy_key(),
            r#"["normal",2,["RATE_LIMIT","SERVER"],500,10000,0]"#
        );
        let always = RetryPolicy {
            mode: RetryMode::Always,
            backoff: Backoff::default(),
        };
        assert_eq!(always.policy_key(), r#"["always",500,10000,0.1]"#);
    }

    #[test]
    fn resolved_policies_serialize_as_dsh_shapes_them() {
        let text = dsh_protocol::json::to_js_string(&RetryPolicy::default());
        assert_eq!(
            text,
            r#"{"mode":"normal","maxRetries":5,"retryableCodes":["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],"initialDelayMs":500,"maxDelayMs":10000,"jitterRatio":0.1}"#
        );
        let back: RetryPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back, RetryPolicy::default());
        let always: RetryPolicy = serde_json::from_value(
            json!({"mode": "always", "initialDelayMs": 1, "maxDelayMs": 2, "jitterRatio": 0}),
        )
        .unwrap();
        assert_eq!(always.mode, RetryMode::Always);
    }

    #[test]
    fn config_resolution_follows_dsh() {
        assert_eq!(
            RetryPolicy::from_config(None, "p").unwrap(),
            RetryPolicy::default()
        );
        let policy = RetryPolicy::from_config(
            Some(
                &json!({"mode": "normal", "maxRetries": 4, "retryableCodes": ["BUSY"],
                         "backoff": {"initialDelayMs": 25, "maxDelayMs": 100, "jitterRatio": 0}}),
            ),
            "p",
        )
        .unwrap();
        assert_eq!(policy.max_retries(), Some(4));
        assert_eq!(policy.backoff.max_delay_ms, 100.0);
        let always = RetryPolicy::from_config(
            Some(&json!({"mode": "always", "maxRetries": 5, "retryableCodes": ["SERVER"]})),
            "p",
        )
        .unwrap();
        assert_eq!(always.mode, RetryMode::Always);
        for (config, message) in [
            (
                json!({"mode": "normal", "maxRetries": -1}),
                "p.maxRetries must be a non-negative safe integer",
            ),
            (
                json!({"mode": "normal", "maxRetries": 1.5}),
                "p.maxRetries must be a non-negative safe integer",
            ),
            (
                json!({"mode": "normal", "retryableCodes": []}),
                "p.retryableCodes must not be empty",
            ),
            (
                json!({"mode": "normal", "retryableCodes": ["A", "A"]}),
                "p.retryableCodes must not contain duplicates",
            ),
            (
                json!({"mode": "sometimes"}),
                "p.mode must be \"normal\" or \"always\"",
            ),
            (
                json!({"mode": "normal", "extra": 1}),
                "p: unknown key \"extra\"",
            ),
            (
                json!({"mode": "normal", "backoff": {"initialDelayMs": 200, "maxDelayMs": 100}}),
                "p.backoff.initialDelayMs must be less than or equal to maxDelayMs",
            ),
            (
                json!({"mode": "normal", "backoff": {"jitterRatio": 2}}),
                "p.backoff.jitterRatio must be between 0 and 1",
            ),
            (
                json!({"mode": "normal", "backoff": {"maxDelayMs": 0}}),
                "p.backoff.maxDelayMs must be a positive finite number no greater than 2147483647",
            ),
        ] {
            assert_eq!(
                RetryPolicy::from_config(Some(&config), "p").unwrap_err(),
                message
            );
        }
    }
}
