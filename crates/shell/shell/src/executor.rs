//! The `shell` service: the seam every shell provider implements.

use async_trait::async_trait;
use dsh_kernel::ServiceKey;

use crate::error::ShellError;
use crate::process::ShellProcess;
use crate::types::{ShellExecRequest, ShellExecSpec, ShellRunResult};

/// The shell service (`ctx.shell` in dsh). One provider per context: a second `provide` of
/// this key fails with both fibers named.
pub const SHELL: ServiceKey<dyn ShellExecutor> = ServiceKey::new("shell");

/// Runs commands for the harness, in the foreground or in the background.
///
/// Implementations honour these rules:
/// - `run` fails only for infrastructure failures (spawn failure, cancellation before spawn,
///   an invalid request). Non-zero exits, timeouts and aborts are results.
/// - `start` returns at once and applies no timeout; the process's `done` never fails, and a
///   spawn failure settles it as killed with the error readable on stderr.
/// - Reads of a background process are consuming: a read never repeats output.
/// - Every process still running when the provider is disposed is terminated and awaited.
#[async_trait]
pub trait ShellExecutor: Send + Sync {
    /// Fills the request's defaults and applies the executor's caps.
    fn resolve(&self, request: ShellExecRequest) -> Result<ShellExecSpec, ShellError>;

    /// Runs a resolved command in the foreground and waits for its outcome.
    async fn run(&self, spec: ShellExecSpec) -> Result<ShellRunResult, ShellError>;

    /// Starts a resolved command in the background and returns its handle at once.
    fn start(&self, spec: ShellExecSpec) -> Result<ShellProcess, ShellError>;

    /// The sandbox mode applied by default; `None` for unconfined executors.
    fn sandbox_mode(&self) -> Option<String> {
        None
    }
}
