//! `LocalBashExecutor`: the shell seam over the shared runner.

use async_trait::async_trait;
use dsh_shell::{
    ProcessRunner, RunnerOptions, SettleHook, ShellConfig, ShellError, ShellExecRequest,
    ShellExecSpec, ShellExecutor, ShellProcess, ShellRunResult, bash_argv, resolve_request,
};

/// Runs `bash -c <command>` unconfined. Sandboxing executors wrap the argv and call
/// [`LocalBashExecutor::run_argv`] and [`LocalBashExecutor::start_argv`].
#[derive(Debug)]
pub struct LocalBashExecutor {
    config: ShellConfig,
    runner: ProcessRunner,
}

impl LocalBashExecutor {
    /// An executor with `config`, spawning from this process's environment.
    pub fn new(config: ShellConfig) -> Result<Self, ShellError> {
        Self::with_options(config, RunnerOptions::default())
    }

    /// An executor with `config` whose runner uses `options` (a fixed parent environment or
    /// spill directory, as tests use).
    pub fn with_options(config: ShellConfig, options: RunnerOptions) -> Result<Self, ShellError> {
        config.validate()?;
        let runner = ProcessRunner::new(config.limits(), options);
        Ok(Self { config, runner })
    }

    /// The validated config.
    pub fn config(&self) -> &ShellConfig {
        &self.config
    }

    /// The runner owning this executor's processes.
    pub fn runner(&self) -> &ProcessRunner {
        &self.runner
    }

    /// Runs an explicit argv with the foreground rules of `run` (timeout, cancellation,
    /// environment, output budgets).
    pub async fn run_argv(
        &self,
        spec: &ShellExecSpec,
        argv: &[String],
    ) -> Result<ShellRunResult, ShellError> {
        self.runner.run(argv, spec).await
    }

    /// Starts an explicit argv with the background rules of `start`; `hook` runs at
    /// settlement and may stamp sandbox facts.
    pub fn start_argv(
        &self,
        spec: &ShellExecSpec,
        argv: &[String],
        hook: Option<SettleHook>,
    ) -> Result<ShellProcess, ShellError> {
        self.runner.start(argv, spec, hook)
    }

    /// Terminates every process tree still alive and waits until each is gone; afterwards
    /// nothing more is started.
    pub async fn shutdown(&self) {
        self.runner.shutdown().await;
    }
}

#[async_trait]
impl ShellExecutor for LocalBashExecutor {
    fn resolve(&self, request: ShellExecRequest) -> Result<ShellExecSpec, ShellError> {
        resolve_request(&self.config, request)
    }

    async fn run(&self, spec: ShellExecSpec) -> Result<ShellRunResult, ShellError> {
        self.run_argv(&spec, &bash_argv(&spec.command)).await
    }

    fn start(&self, spec: ShellExecSpec) -> Result<ShellProcess, ShellError> {
        self.start_argv(&spec, &bash_argv(&spec.command), None)
    }
}
