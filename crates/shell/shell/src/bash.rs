//! `BashRunner`: `bash -c` through a process runner set up from a shell config.

use async_trait::async_trait;

use crate::config::{ShellConfig, resolve_request};
use crate::error::ShellError;
use crate::executor::ShellExecutor;
use crate::process::ShellProcess;
use crate::runner::{ProcessRunner, RunnerOptions, bash_argv};
use crate::types::{ShellExecRequest, ShellExecSpec, ShellRunResult};

/// A validated [`ShellConfig`] and the [`ProcessRunner`] it sets up, which owns every process
/// started through it.
///
/// As a [`ShellExecutor`] it runs `bash -c <command>` unconfined: that is the service the
/// unconfined provider offers as it is. A confining provider resolves requests with
/// [`BashRunner::config`] and launches its own argv through [`BashRunner::process_runner`],
/// and runs the unconfined mode through the executor.
#[derive(Debug)]
pub struct BashRunner {
    config: ShellConfig,
    runner: ProcessRunner,
}

impl BashRunner {
    /// A runner with `config`, spawning from this process's environment.
    pub fn new(config: ShellConfig) -> Result<Self, ShellError> {
        Self::with_options(config, RunnerOptions::default())
    }

    /// A runner with `config` whose processes use `options` (a fixed parent environment or
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

    /// The process runner owning this runner's processes.
    pub fn process_runner(&self) -> &ProcessRunner {
        &self.runner
    }

    /// Terminates every process tree still alive and waits until each is gone; afterwards
    /// nothing more is started.
    pub async fn shutdown(&self) {
        self.runner.shutdown().await;
    }
}

#[async_trait]
impl ShellExecutor for BashRunner {
    fn resolve(&self, request: ShellExecRequest) -> Result<ShellExecSpec, ShellError> {
        resolve_request(&self.config, request)
    }

    async fn run(&self, spec: ShellExecSpec) -> Result<ShellRunResult, ShellError> {
        self.runner.run(&bash_argv(&spec.command), &spec).await
    }

    fn start(&self, spec: ShellExecSpec) -> Result<ShellProcess, ShellError> {
        self.runner.start(&bash_argv(&spec.command), &spec, None)
    }
}
