//! The shell provider's config (dsh's `shell` keys) and request resolution.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::error::ShellError;
use crate::runner::RunLimits;
use crate::types::{ShellExecRequest, ShellExecSpec};

/// Default foreground timeout: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Default cap on per-call timeouts: 10 minutes.
pub const DEFAULT_MAX_TIMEOUT_MS: u64 = 600_000;
/// Default in-memory output budget per stream.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64_000;
/// Default spill-file cap per stream: 64 MiB.
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 64 * 1024 * 1024;
/// Default wait between SIGTERM and SIGKILL, and for inherited pipes after exit.
pub const DEFAULT_GRACE_MS: u64 = 3_000;
/// The largest `graceMs` (JavaScript's largest timer delay, as dsh checks it).
pub const MAX_TIMER_DELAY_MS: u64 = 2_147_483_647;
/// The prefix of the `DSH_*` names only `dsh_env` may set.
pub const DSH_ENV_PREFIX: &str = "DSH_";

/// Row config of a shell provider (dsh's keys, all optional).
///
/// Numbers may be written with a fraction, as in dsh: milliseconds round up, byte counts down.
/// Every value must be positive and finite, and `graceMs` at most [`MAX_TIMER_DELAY_MS`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawShellConfig")]
pub struct ShellConfig {
    /// Default working directory (unset: the process's current directory at each call).
    pub cwd: Option<PathBuf>,
    /// Default foreground timeout (`timeoutMs`, 120,000).
    pub timeout_ms: u64,
    /// Cap on per-call timeouts (`maxTimeoutMs`, 600,000).
    pub max_timeout_ms: u64,
    /// In-memory output budget per stream (`maxOutputBytes`, 64,000).
    pub max_output_bytes: usize,
    /// Spill-file cap per stream (`maxSpillBytes`, 64 MiB).
    pub max_spill_bytes: u64,
    /// SIGTERM-to-SIGKILL grace and inherited-pipe wait (`graceMs`, 3,000).
    pub grace_ms: u64,
}

impl Default for ShellConfig {
    fn default() -> Self {
        Self {
            cwd: None,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_timeout_ms: DEFAULT_MAX_TIMEOUT_MS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            grace_ms: DEFAULT_GRACE_MS,
        }
    }
}

impl ShellConfig {
    /// Checks what deserialization checks, for configs built in code; dsh's messages.
    pub fn validate(&self) -> Result<(), ShellError> {
        let positive = [
            ("timeoutMs", self.timeout_ms),
            ("maxTimeoutMs", self.max_timeout_ms),
            ("maxOutputBytes", self.max_output_bytes as u64),
            ("maxSpillBytes", self.max_spill_bytes),
            ("graceMs", self.grace_ms),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(ShellError::InvalidConfig(not_positive(name)));
            }
        }
        if self.grace_ms > MAX_TIMER_DELAY_MS {
            return Err(ShellError::InvalidConfig(format!(
                "bash-local: graceMs must be no greater than {MAX_TIMER_DELAY_MS}"
            )));
        }
        Ok(())
    }

    /// The runner limits this config sets.
    pub fn limits(&self) -> RunLimits {
        RunLimits {
            max_output_bytes: self.max_output_bytes,
            max_spill_bytes: self.max_spill_bytes,
            grace: Duration::from_millis(self.grace_ms),
        }
    }
}

fn not_positive(name: &str) -> String {
    format!("bash-local: {name} must be a positive finite number")
}

/// The config as written: every number as JavaScript sees it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawShellConfig {
    cwd: Option<PathBuf>,
    timeout_ms: Option<f64>,
    max_timeout_ms: Option<f64>,
    max_output_bytes: Option<f64>,
    max_spill_bytes: Option<f64>,
    grace_ms: Option<f64>,
}

impl TryFrom<RawShellConfig> for ShellConfig {
    type Error = String;

    fn try_from(raw: RawShellConfig) -> Result<Self, String> {
        let defaults = Self::default();
        let config = Self {
            cwd: raw.cwd,
            timeout_ms: millis("timeoutMs", raw.timeout_ms, defaults.timeout_ms)?,
            max_timeout_ms: millis("maxTimeoutMs", raw.max_timeout_ms, defaults.max_timeout_ms)?,
            max_output_bytes: usize::try_from(bytes(
                "maxOutputBytes",
                raw.max_output_bytes,
                defaults.max_output_bytes as u64,
            )?)
            .unwrap_or(usize::MAX),
            max_spill_bytes: bytes(
                "maxSpillBytes",
                raw.max_spill_bytes,
                defaults.max_spill_bytes,
            )?,
            grace_ms: millis("graceMs", raw.grace_ms, defaults.grace_ms)?,
        };
        config.validate().map_err(|error| error.to_string())?;
        Ok(config)
    }
}

fn positive(name: &str, value: f64) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(not_positive(name))
    }
}

fn millis(name: &str, value: Option<f64>, default: u64) -> Result<u64, String> {
    match value {
        None => Ok(default),
        Some(value) => Ok(to_u64(positive(name, value)?.ceil())),
    }
}

fn bytes(name: &str, value: Option<f64>, default: u64) -> Result<u64, String> {
    match value {
        None => Ok(default),
        // A budget under one byte keeps nothing, as in dsh.
        Some(value) => Ok(to_u64(positive(name, value)?.floor())),
    }
}

fn to_u64(value: f64) -> u64 {
    // `as` saturates: a finite positive value past u64::MAX becomes u64::MAX.
    value as u64
}

/// Resolves a request as dsh's `LocalBashExecutor.resolve` does:
/// `timeoutMs = min(request ?? config.timeoutMs, config.maxTimeoutMs)`,
/// `stdoutMaxBytes = request ?? config.maxOutputBytes`,
/// `workdir = request ?? config.cwd ?? the current directory`; the rest is copied.
///
/// A fractional timeout rounds up to whole milliseconds. `dsh_env` names must start with
/// `DSH_`.
pub fn resolve_request(
    config: &ShellConfig,
    request: ShellExecRequest,
) -> Result<ShellExecSpec, ShellError> {
    let timeout_ms = match request.timeout_ms {
        None => config.timeout_ms.min(config.max_timeout_ms),
        Some(value) if value.is_finite() && value > 0.0 => {
            to_u64(value.min(config.max_timeout_ms as f64).ceil())
        }
        Some(_) => {
            return Err(ShellError::InvalidRequest(not_positive(
                "request.timeoutMs",
            )));
        }
    };
    let stdout_max_bytes = request.stdout_max_bytes.unwrap_or(config.max_output_bytes);
    if stdout_max_bytes == 0 {
        return Err(ShellError::InvalidRequest(not_positive(
            "request.stdoutMaxBytes",
        )));
    }
    if let Some(name) = request
        .dsh_env
        .keys()
        .find(|name| !name.starts_with(DSH_ENV_PREFIX))
    {
        return Err(ShellError::InvalidRequest(format!(
            "bash-local: request.dshEnv may only hold {DSH_ENV_PREFIX}* names, not \"{name}\""
        )));
    }
    let workdir = match request.workdir.or_else(|| config.cwd.clone()) {
        Some(workdir) => workdir,
        None => std::env::current_dir().map_err(|error| {
            ShellError::InvalidRequest(format!(
                "bash-local: cannot read the current directory for the command: {error}"
            ))
        })?,
    };
    Ok(ShellExecSpec {
        command: request.command,
        workdir,
        timeout_ms,
        stdout_max_bytes,
        signal: request.signal,
        stdin: request.stdin,
        env: request.env,
        dsh_env: request.dsh_env,
        sandbox_policy: request.sandbox_policy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: serde_json::Value) -> Result<ShellConfig, String> {
        serde_json::from_value(json).map_err(|error| error.to_string())
    }

    #[test]
    fn defaults_are_dshs() {
        let config = config(serde_json::json!({})).unwrap();
        assert_eq!(config, ShellConfig::default());
        assert_eq!(config.timeout_ms, 120_000);
        assert_eq!(config.max_timeout_ms, 600_000);
        assert_eq!(config.max_output_bytes, 64_000);
        assert_eq!(config.max_spill_bytes, 64 * 1024 * 1024);
        assert_eq!(config.grace_ms, 3_000);
        assert_eq!(config.cwd, None);
    }

    #[test]
    fn refuses_bad_values_with_dshs_messages() {
        for (key, value) in [
            ("timeoutMs", serde_json::json!(0)),
            ("maxTimeoutMs", serde_json::json!(-1)),
            ("maxOutputBytes", serde_json::json!(0)),
            ("maxSpillBytes", serde_json::json!(-5)),
            ("graceMs", serde_json::json!(0)),
        ] {
            let error = config(serde_json::json!({ key: value })).unwrap_err();
            assert!(
                error.contains(&format!(
                    "bash-local: {key} must be a positive finite number"
                )),
                "{error}"
            );
        }
        let error = config(serde_json::json!({"graceMs": 2_147_483_648_u64})).unwrap_err();
        assert!(
            error.contains("bash-local: graceMs must be no greater than 2147483647"),
            "{error}"
        );
        let error = config(serde_json::json!({"timeout": 1})).unwrap_err();
        assert!(error.contains("unknown field `timeout`"), "{error}");
    }

    #[test]
    fn fractions_round_like_timers_and_buffers() {
        let config = config(serde_json::json!({
            "timeoutMs": 1500.2, "maxOutputBytes": 100.9, "graceMs": 0.5, "cwd": "/tmp"
        }))
        .unwrap();
        assert_eq!(config.timeout_ms, 1501);
        assert_eq!(config.max_output_bytes, 100);
        assert_eq!(config.grace_ms, 1);
        assert_eq!(config.cwd, Some(PathBuf::from("/tmp")));
    }

    #[test]
    fn validate_checks_configs_built_in_code() {
        let mut config = ShellConfig {
            grace_ms: 0,
            ..ShellConfig::default()
        };
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "bash-local: graceMs must be a positive finite number"
        );
        config.grace_ms = MAX_TIMER_DELAY_MS + 1;
        assert!(config.validate().is_err());
        config.grace_ms = MAX_TIMER_DELAY_MS;
        config.validate().unwrap();
    }

    #[test]
    fn resolve_applies_defaults_and_caps() {
        let config = ShellConfig {
            timeout_ms: 1_000,
            max_timeout_ms: 2_000,
            max_output_bytes: 100,
            cwd: Some(PathBuf::from("/tmp")),
            ..ShellConfig::default()
        };
        let spec = resolve_request(&config, ShellExecRequest::new("true")).unwrap();
        assert_eq!(spec.timeout_ms, 1_000);
        assert_eq!(spec.stdout_max_bytes, 100);
        assert_eq!(spec.workdir, PathBuf::from("/tmp"));
        assert!(spec.stdin.is_none() && spec.env.is_empty() && spec.dsh_env.is_empty());

        let request = ShellExecRequest {
            timeout_ms: Some(99_999.0),
            stdout_max_bytes: Some(500),
            workdir: Some(PathBuf::from("/")),
            ..ShellExecRequest::new("true")
        };
        let spec = resolve_request(&config, request).unwrap();
        assert_eq!(spec.timeout_ms, 2_000);
        assert_eq!(spec.stdout_max_bytes, 500);
        assert_eq!(spec.workdir, PathBuf::from("/"));

        let request = ShellExecRequest {
            timeout_ms: Some(0.25),
            ..ShellExecRequest::new("true")
        };
        assert_eq!(resolve_request(&config, request).unwrap().timeout_ms, 1);
    }

    #[test]
    fn resolve_defaults_the_workdir_to_the_current_directory() {
        let spec = resolve_request(&ShellConfig::default(), ShellExecRequest::new("pwd")).unwrap();
        assert_eq!(spec.workdir, std::env::current_dir().unwrap());
    }

    #[test]
    fn resolve_refuses_bad_requests() {
        let config = ShellConfig::default();
        for timeout in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let request = ShellExecRequest {
                timeout_ms: Some(timeout),
                ..ShellExecRequest::new("true")
            };
            assert_eq!(
                resolve_request(&config, request).unwrap_err().to_string(),
                "bash-local: request.timeoutMs must be a positive finite number"
            );
        }
        let request = ShellExecRequest {
            stdout_max_bytes: Some(0),
            ..ShellExecRequest::new("true")
        };
        assert_eq!(
            resolve_request(&config, request).unwrap_err().to_string(),
            "bash-local: request.stdoutMaxBytes must be a positive finite number"
        );
        let mut request = ShellExecRequest::new("true");
        request.dsh_env.insert("HOME".into(), "/x".into());
        assert!(
            resolve_request(&config, request)
                .unwrap_err()
                .to_string()
                .contains("\"HOME\"")
        );
    }
}
