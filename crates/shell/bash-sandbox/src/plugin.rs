//! The `dsh-bash-sandbox` plugin: provides `shell`, confined, over the `sandboxPolicy`
//! service.

use std::sync::Arc;
use std::time::Duration;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::{
    BashRunner, SANDBOX_POLICY, SANDBOX_PROTECTION, SHELL, ShellConfig, ShellExecutor,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::backend::{DEFAULT_PROBE_TIMEOUT_MS, LaunchStrategy, SandboxOptions, SandboxRunner};
use crate::executor::SandboxBashExecutor;
use crate::standing::PolicyService;

/// The plugin's name in the built-in registry.
pub const PLUGIN_NAME: &str = "dsh-bash-sandbox";

/// Row config of `bash-sandbox`: dsh's `shell` keys ([`ShellConfig`]), plus
/// `runner` (the argv that launches the sandbox runner; default: this executable with
/// `__sandbox-run`), `probeTimeoutMs` (each functional probe's bound, default 5000) and
/// `launch` (`thread`, the default: Landlock confinements held on launch threads of this
/// process; `runner`: every command through the runner process).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct BashSandboxConfig {
    /// The shell keys (`cwd`, `timeoutMs`, `maxTimeoutMs`, `maxOutputBytes`,
    /// `maxSpillBytes`, `graceMs`).
    pub shell: ShellConfig,
    /// The runner's launcher argv (`[program, prefix args…]`); `None`: this executable.
    pub runner: Option<Vec<String>>,
    /// Each probe's bound in milliseconds.
    pub probe_timeout_ms: u64,
    /// Where Landlock confinements are applied.
    pub launch: LaunchStrategy,
}

impl Default for BashSandboxConfig {
    fn default() -> Self {
        Self {
            shell: ShellConfig::default(),
            runner: None,
            probe_timeout_ms: DEFAULT_PROBE_TIMEOUT_MS,
            launch: LaunchStrategy::default(),
        }
    }
}

impl TryFrom<Map<String, Value>> for BashSandboxConfig {
    type Error = String;

    fn try_from(mut map: Map<String, Value>) -> Result<Self, String> {
        let runner = match map.remove("runner") {
            None | Some(Value::Null) => None,
            Some(value) => Some(runner_argv(value)?),
        };
        let probe_timeout_ms = match map.remove("probeTimeoutMs") {
            None | Some(Value::Null) => DEFAULT_PROBE_TIMEOUT_MS,
            Some(value) => probe_timeout(&value)?,
        };
        let launch = match map.remove("launch") {
            None | Some(Value::Null) => LaunchStrategy::default(),
            Some(value) => launch_strategy(&value)?,
        };
        let shell =
            serde_json::from_value(Value::Object(map)).map_err(|error| error.to_string())?;
        Ok(Self {
            shell,
            runner,
            probe_timeout_ms,
            launch,
        })
    }
}

fn runner_argv(value: Value) -> Result<Vec<String>, String> {
    let error = || "bash-sandbox: runner must be a non-empty list of strings".to_owned();
    let argv: Vec<String> = serde_json::from_value(value).map_err(|_| error())?;
    match argv.first() {
        Some(program) if !program.is_empty() => Ok(argv),
        _ => Err(error()),
    }
}

fn probe_timeout(value: &Value) -> Result<u64, String> {
    match value.as_f64() {
        // `as` saturates: a finite positive value past u64::MAX becomes u64::MAX.
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(ms.ceil() as u64),
        _ => Err("sandbox-local: probeTimeoutMs must be a positive finite number".to_owned()),
    }
}

fn launch_strategy(value: &Value) -> Result<LaunchStrategy, String> {
    match value.as_str() {
        Some("thread") => Ok(LaunchStrategy::Thread),
        Some("runner") => Ok(LaunchStrategy::Runner),
        _ => Err(format!(
            "bash-sandbox: launch must be \"thread\" or \"runner\", got {value}"
        )),
    }
}

impl BashSandboxConfig {
    /// The sandbox options this config sets (`runner` defaults to this executable).
    pub fn options(&self) -> std::io::Result<SandboxOptions> {
        let runner = match self.runner.as_deref() {
            Some([program, prefix @ ..]) => SandboxRunner::new(program, prefix.to_vec()),
            _ => SandboxRunner::current_exe()?,
        };
        Ok(SandboxOptions {
            probe_timeout: Duration::from_millis(self.probe_timeout_ms),
            strategy: self.launch,
            ..SandboxOptions::new(runner)
        })
    }
}

/// The `dsh-bash-sandbox` plugin. It injects `sandboxPolicy` ([`SANDBOX_POLICY`]), whose
/// standing policy applies to calls that bring none, and provides `shell`; its row config is
/// [`BashSandboxConfig`]. The ports fenced in the `sandboxProtection` registry (when the
/// launcher provides one) are closed to its commands. Unloading it terminates and awaits
/// every process its executor still owns.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashSandboxPlugin;

impl Plugin for BashSandboxPlugin {
    type Config = BashSandboxConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SANDBOX_POLICY.name()] }
    }

    async fn apply(&self, ctx: Context, config: BashSandboxConfig) -> Result<(), BoxError> {
        let policy = Arc::new(PolicyService(ctx.require(&SANDBOX_POLICY)?));
        let options = config
            .options()
            .map_err(|error| format!("bash-sandbox: cannot locate the sandbox runner: {error}"))?;
        let bash = BashRunner::new(config.shell)?;
        let mut executor = SandboxBashExecutor::new(bash, policy, options);
        let protection = ctx.get(&SANDBOX_PROTECTION);
        if let Some(protection) = &protection {
            executor = executor.with_protection(Arc::clone(protection));
        }
        let executor = Arc::new(executor);
        // Probe and build the standing confinement while the rest of the tree boots and the
        // model thinks, not in the first call; again whenever a port is fenced or released.
        if config_confines(&ctx) {
            executor.warm_up();
            if let Some(protection) = protection {
                let mut changes = protection.changes();
                let warmed = Arc::clone(&executor);
                ctx.spawn(async move {
                    while changes.changed().await.is_ok() {
                        warmed.warm_up();
                    }
                })?;
            }
        }
        let service: Arc<dyn ShellExecutor> = Arc::clone(&executor) as Arc<dyn ShellExecutor>;
        ctx.provide(&SHELL, service)?;
        ctx.effect_async(move || async move { executor.shutdown().await })?;
        Ok(())
    }
}

/// Whether the standing policy confines (not `danger-full-access`), so a probe will be needed.
fn config_confines(ctx: &Context) -> bool {
    ctx.get(&SANDBOX_POLICY)
        .is_some_and(|policy| policy.standing().mode != dsh_shell::SandboxMode::DangerFullAccess)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(value: Value) -> Result<BashSandboxConfig, String> {
        serde_json::from_value(value).map_err(|error| error.to_string())
    }

    #[test]
    fn defaults_and_keys() {
        assert_eq!(config(json!({})).unwrap(), BashSandboxConfig::default());
        let parsed = config(json!({
            "timeoutMs": 1000, "runner": ["/opt/dsh", "__sandbox-run"], "probeTimeoutMs": 250.5
        }))
        .unwrap();
        assert_eq!(parsed.shell.timeout_ms, 1000);
        assert_eq!(parsed.probe_timeout_ms, 251);
        assert_eq!(parsed.launch, LaunchStrategy::Thread);
        let runner = config(json!({"launch": "runner"})).unwrap();
        assert_eq!(runner.options().unwrap().strategy, LaunchStrategy::Runner);
        let options = parsed.options().unwrap();
        assert_eq!(
            options.runner,
            SandboxRunner::new("/opt/dsh", vec!["__sandbox-run".to_owned()])
        );
        assert_eq!(options.probe_timeout, Duration::from_millis(251));
        let default = BashSandboxConfig::default().options().unwrap();
        assert_eq!(default.runner.prefix_args, vec!["__sandbox-run".to_owned()]);
        assert_eq!(
            default.runner.program,
            std::path::PathBuf::from("/proc/self/exe")
        );
        assert_eq!(default.probe_timeout, Duration::from_secs(5));
    }

    #[test]
    fn refuses_bad_values() {
        for (value, message) in [
            (
                json!({"probeTimeoutMs": 0}),
                "sandbox-local: probeTimeoutMs must be a positive finite number",
            ),
            (
                json!({"probeTimeoutMs": "5"}),
                "sandbox-local: probeTimeoutMs must be a positive finite number",
            ),
            (
                json!({"runner": []}),
                "bash-sandbox: runner must be a non-empty list of strings",
            ),
            (
                json!({"runner": [""]}),
                "bash-sandbox: runner must be a non-empty list of strings",
            ),
            (
                json!({"runner": "dsh"}),
                "bash-sandbox: runner must be a non-empty list of strings",
            ),
            (
                json!({"graceMs": 0}),
                "bash-local: graceMs must be a positive finite number",
            ),
            (json!({"mode": "read-only"}), "unknown field `mode`"),
            (
                json!({"launch": "fork"}),
                "bash-sandbox: launch must be \"thread\" or \"runner\", got \"fork\"",
            ),
        ] {
            let error = config(value.clone()).unwrap_err();
            assert!(error.contains(message), "{value}: {error}");
        }
    }
}
