//! `SandboxBashExecutor`: the shell seam with every command confined (dsh's
//! `bash-sandbox/src/index.ts`).

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use dsh_bash_local::LocalBashExecutor;
use dsh_shell::{
    ProcessSettlement, SandboxExecutionPolicy, SandboxMode, SettleHook, ShellError,
    ShellExecRequest, ShellExecSpec, ShellExecutor, ShellProcess, ShellRunResult, ShellSandboxInfo,
    bash_argv, resolve_request, sandbox_unavailable_message,
};

use crate::backend::{Backend, SandboxOptions, confined_argv, select_backend};
use crate::classify::{classify_runner_failure, is_runner_spawn_failure, matches_signature};
use crate::standing::StandingPolicy;

/// Runs `bash -c <command>` confined by the first usable backend (the Landlock runner, then
/// bubblewrap), through a [`LocalBashExecutor`]'s runner.
///
/// - `resolve` is bash-local's, plus the policy: the request's, else the standing one.
/// - `danger-full-access` runs unconfined; its foreground result says so.
/// - Otherwise the backend is chosen once (the first confined call probes; the verdict,
///   "unavailable" included, is kept for the executor's life). With none, the call fails
///   with [`ShellError::SandboxUnavailable`] and nothing is spawned. A runner failure (the
///   command never ran) fails a foreground call the same way, with the runner's line as the
///   detail, and marks a background process `runnerFailed`. Other outcomes carry
///   `{mode, denied, enforcement}`.
pub struct SandboxBashExecutor {
    local: LocalBashExecutor,
    policy: Arc<dyn StandingPolicy>,
    selector: Arc<Selector>,
}

struct Selector {
    options: SandboxOptions,
    verdict: OnceLock<Option<Backend>>,
}

impl Selector {
    /// The cached verdict, probing (blocking) on first use.
    fn verdict(&self) -> Option<Backend> {
        *self.verdict.get_or_init(|| select_backend(&self.options))
    }
}

/// One confined launch: what runs, and how its outcome is read.
struct Confined {
    mode: SandboxMode,
    backend: Backend,
    argv: Vec<String>,
}

impl Confined {
    fn info(&self, denied: bool, runner_failed: bool) -> ShellSandboxInfo {
        ShellSandboxInfo {
            mode: self.mode.as_str().to_owned(),
            denied,
            enforcement: Some(self.backend.enforcement().as_str().to_owned()),
            runner_failed: runner_failed.then_some(true),
        }
    }

    fn program(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }
}

fn unavailable(mode: SandboxMode, detail: Option<&str>) -> ShellError {
    ShellError::SandboxUnavailable {
        message: sandbox_unavailable_message(mode, detail),
    }
}

impl SandboxBashExecutor {
    /// An executor confining through `options`, running its processes with `local`'s runner,
    /// with `policy` for calls that bring none.
    pub fn new(
        local: LocalBashExecutor,
        policy: Arc<dyn StandingPolicy>,
        options: SandboxOptions,
    ) -> Self {
        Self {
            local,
            policy,
            selector: Arc::new(Selector {
                options,
                verdict: OnceLock::new(),
            }),
        }
    }

    /// The executor whose runner owns the processes.
    pub fn local(&self) -> &LocalBashExecutor {
        &self.local
    }

    /// Where this executor looks for confinement.
    pub fn options(&self) -> &SandboxOptions {
        &self.selector.options
    }

    /// The backend confined commands use; `None` when none is usable. Probes on first use
    /// (blocking, each probe bounded by the probe timeout); the verdict is kept.
    pub fn backend(&self) -> Option<Backend> {
        self.selector.verdict()
    }

    /// Starts the backend probe on a blocking thread, unless the verdict is known, so the
    /// first confined command does not wait for it (the probe runs the runner once, a few
    /// milliseconds). Needs a tokio runtime; without one it does nothing.
    pub fn warm_up(&self) {
        if self.selector.verdict.get().is_some() {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let selector = Arc::clone(&self.selector);
            drop(handle.spawn_blocking(move || selector.verdict()));
        }
    }

    /// Terminates every process tree still alive and waits until each is gone; afterwards
    /// nothing more is started.
    pub async fn shutdown(&self) {
        self.local.shutdown().await;
    }

    fn policy_of(&self, spec: &ShellExecSpec) -> SandboxExecutionPolicy {
        spec.sandbox_policy
            .clone()
            .unwrap_or_else(|| self.policy.standing())
    }

    async fn backend_async(&self, mode: SandboxMode) -> Result<Option<Backend>, ShellError> {
        if let Some(verdict) = self.selector.verdict.get() {
            return Ok(*verdict);
        }
        let selector = Arc::clone(&self.selector);
        let handle = tokio::runtime::Handle::try_current().map_err(|_| ShellError::NoRuntime)?;
        handle
            .spawn_blocking(move || selector.verdict())
            .await
            .map_err(|error| unavailable(mode, Some(&format!("the backend probe failed: {error}"))))
    }

    fn confine(
        &self,
        spec: &ShellExecSpec,
        policy: &SandboxExecutionPolicy,
        backend: Option<Backend>,
    ) -> Result<Confined, ShellError> {
        let backend = backend.ok_or_else(|| unavailable(policy.mode, None))?;
        let argv = confined_argv(backend, &self.selector.options, policy, &spec.command)?;
        Ok(Confined {
            mode: policy.mode,
            backend,
            argv,
        })
    }
}

#[async_trait]
impl ShellExecutor for SandboxBashExecutor {
    fn resolve(&self, request: ShellExecRequest) -> Result<ShellExecSpec, ShellError> {
        let mut spec = resolve_request(self.local.config(), request)?;
        if spec.sandbox_policy.is_none() {
            spec.sandbox_policy = Some(self.policy.standing());
        }
        Ok(spec)
    }

    async fn run(&self, spec: ShellExecSpec) -> Result<ShellRunResult, ShellError> {
        let policy = self.policy_of(&spec);
        if policy.mode == SandboxMode::DangerFullAccess {
            let mut result = self
                .local
                .run_argv(&spec, &bash_argv(&spec.command))
                .await?;
            result.sandbox = Some(ShellSandboxInfo {
                mode: policy.mode.as_str().to_owned(),
                denied: false,
                enforcement: None,
                runner_failed: None,
            });
            return Ok(result);
        }
        let backend = self.backend_async(policy.mode).await?;
        let confined = self.confine(&spec, &policy, backend)?;
        let mut result = match self.local.run_argv(&spec, &confined.argv).await {
            Ok(result) => result,
            Err(error) if is_runner_spawn_failure(&error, confined.program(), &spec.workdir) => {
                return Err(unavailable(confined.mode, Some(&error.to_string())));
            }
            Err(error) => return Err(error),
        };
        // A runner failure outranks a denial: the command did not run.
        let rule = confined.backend.runner_failure_rule();
        if let Some(line) = classify_runner_failure(result.exit_code, &result.stderr.text, &rule) {
            return Err(unavailable(confined.mode, Some(&line)));
        }
        let denied = matches_signature(
            result.exit_code,
            &result.stderr.text,
            confined.backend.denial_signatures(),
        );
        result.sandbox = Some(confined.info(denied, false));
        Ok(result)
    }

    fn start(&self, spec: ShellExecSpec) -> Result<ShellProcess, ShellError> {
        let policy = self.policy_of(&spec);
        if policy.mode == SandboxMode::DangerFullAccess {
            return self
                .local
                .start_argv(&spec, &bash_argv(&spec.command), None);
        }
        let confined = self.confine(&spec, &policy, self.selector.verdict())?;
        let argv = confined.argv.clone();
        let workdir = spec.workdir.clone();
        let hook: SettleHook = Box::new(move |settlement: &ProcessSettlement<'_>| {
            let runner_failed = match settlement.spawn_error {
                Some(error) => is_runner_spawn_failure(error, confined.program(), &workdir),
                None => classify_runner_failure(
                    settlement.exit_code,
                    settlement.stderr,
                    &confined.backend.runner_failure_rule(),
                )
                .is_some(),
            };
            let denied = !runner_failed
                && matches_signature(
                    settlement.exit_code,
                    settlement.stderr,
                    confined.backend.denial_signatures(),
                );
            Some(confined.info(denied, runner_failed))
        });
        self.local.start_argv(&spec, &argv, Some(hook))
    }

    fn sandbox_mode(&self) -> Option<String> {
        Some(self.policy.standing().mode.as_str().to_owned())
    }
}

impl std::fmt::Debug for SandboxBashExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxBashExecutor")
            .field("local", &self.local)
            .field("options", &self.selector.options)
            .field("verdict", &self.selector.verdict.get())
            .finish_non_exhaustive()
    }
}
