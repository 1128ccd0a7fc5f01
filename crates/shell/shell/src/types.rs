//! Requests, resolved specs and results of the shell seam (dsh's `shell/src/types.ts`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// A caller's request: what to run, with optional overrides that
/// [`crate::ShellExecutor::resolve`] fills and caps from the executor's config.
///
/// Build one with [`ShellExecRequest::new`] and struct update syntax:
/// `ShellExecRequest { timeout_ms: Some(500.0), ..ShellExecRequest::new("ls") }`.
#[derive(Debug, Clone, Default)]
pub struct ShellExecRequest {
    /// The command line, run as `bash -c <command>`.
    pub command: String,
    /// Working directory override (default: the executor's `cwd`, else the current directory).
    pub workdir: Option<PathBuf>,
    /// Timeout override in milliseconds. A model may send any number: a present value that is
    /// not positive and finite is refused; the executor caps it at its `maxTimeoutMs`.
    pub timeout_ms: Option<f64>,
    /// Foreground stdout budget in bytes (default: the executor's `maxOutputBytes`). Only
    /// trusted in-process callers set it; the model-facing tool never does.
    pub stdout_max_bytes: Option<usize>,
    /// Cancels the command: the process group is terminated when it fires.
    pub signal: Option<CancellationToken>,
    /// Text written to the command's stdin, which is then closed. Absent: stdin is `/dev/null`.
    pub stdin: Option<String>,
    /// Ordinary environment entries, merged after the credential scrub and the terminal
    /// overrides.
    pub env: BTreeMap<String, String>,
    /// Harness-owned `DSH_*` entries, merged last so nothing can displace them.
    pub dsh_env: BTreeMap<String, String>,
    /// The confinement a sandboxing executor applies (its standing policy when `None`);
    /// unconfined executors ignore it.
    pub sandbox_policy: Option<crate::sandbox::SandboxExecutionPolicy>,
}

impl ShellExecRequest {
    /// A request for `command` with every override left to the executor.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }
}

/// A resolved request: every default filled, every cap applied. `run` and `start` take it as
/// it is and never default again.
#[derive(Debug, Clone)]
pub struct ShellExecSpec {
    /// The command line.
    pub command: String,
    /// The working directory.
    pub workdir: PathBuf,
    /// The foreground timeout in milliseconds (background processes have none).
    pub timeout_ms: u64,
    /// The foreground stdout budget in bytes; stderr and background stdout use the executor's
    /// `maxOutputBytes`.
    pub stdout_max_bytes: usize,
    /// Cancels the command.
    pub signal: Option<CancellationToken>,
    /// Text written to stdin before closing it.
    pub stdin: Option<String>,
    /// Ordinary environment entries.
    pub env: BTreeMap<String, String>,
    /// Harness-owned `DSH_*` entries (always win).
    pub dsh_env: BTreeMap<String, String>,
    /// The confinement a sandboxing executor applies.
    pub sandbox_policy: Option<crate::sandbox::SandboxExecutionPolicy>,
}

/// One stream's output as collected: the tail within the budget, and the whole stream in a
/// spill file when it overflowed (and fit the spill cap).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CollectedOutput {
    /// The kept bytes as UTF-8 (lossy): the whole stream, or its tail when `truncated`.
    pub text: String,
    /// Whether bytes were dropped from the head.
    pub truncated: bool,
    /// The file holding the complete stream, when it overflowed and a spill was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<PathBuf>,
}

/// Sandbox facts of one run, present only when a sandboxing executor ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShellSandboxInfo {
    /// The mode the command actually ran under (`read-only`, `workspace-write`, ...).
    pub mode: String,
    /// Whether the sandbox denied a file operation.
    pub denied: bool,
    /// How completely the runner enforced the mode (`full` or `partial`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<String>,
    /// Whether the sandbox runner failed before the command could run (background only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_failed: Option<bool>,
}

/// The outcome of one foreground run. Non-zero exits, timeouts and aborts are outcomes, not
/// errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShellRunResult {
    /// The exit code; `None` when a signal ended the command.
    pub exit_code: Option<i32>,
    /// The terminating signal's name (`SIGTERM`, `SIGKILL`, ...); `None` on a normal exit.
    pub signal: Option<String>,
    /// The executor's timeout was the first cause to cut the command short.
    pub timed_out: bool,
    /// The caller's cancellation was the first cause to cut the command short.
    pub aborted: bool,
    /// The timeout that applied, in milliseconds.
    pub timeout_ms: u64,
    /// Standard output.
    pub stdout: CollectedOutput,
    /// Standard error.
    pub stderr: CollectedOutput,
    /// Sandbox facts; `None` for an unconfined executor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<ShellSandboxInfo>,
}

/// Where a background process is in its life. It settles exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShellProcessStatus {
    /// Not settled yet.
    Running,
    /// Exited by itself without a signal and without being cancelled.
    Completed,
    /// Killed through [`crate::ShellProcess::kill`], cancelled, ended by any signal, or never
    /// spawned.
    Killed,
}

impl ShellProcessStatus {
    /// dsh's spelling: `running`, `completed` or `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Killed => "killed",
        }
    }
}

/// One consuming read of a background process's output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellProcessRead {
    /// Output since the previous read: stdout, then stderr under a `[stderr]` line.
    pub delta: String,
    /// Whether unread bytes were dropped before this read could deliver them.
    pub lossy: bool,
    /// The complete stdout, when it overflowed and a spill file was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_spill_path: Option<PathBuf>,
    /// The complete stderr, when it overflowed and a spill file was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_spill_path: Option<PathBuf>,
}
