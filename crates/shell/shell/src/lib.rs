//! The shell seam of dsh: the [`ShellExecutor`] service (`shell`), its request, spec and
//! result types, the [`ProcessRunner`] every provider runs its processes through, and
//! [`BashRunner`]: `bash -c` through a runner set up from a [`ShellConfig`].
//!
//! The runner reproduces dsh's local subprocess mechanics:
//!
//! - `bash -c <command>` runs as the leader of a new session (as dsh's `detached: true`
//!   spawn makes it), stdin `/dev/null` unless text is given (written, then closed).
//! - The child's environment is the parent's minus credential-shaped names
//!   (`KEY|PASSWORD|SECRET|TOKEN`) and every `DSH_*` name, then [`ENV_OVERRIDES`], then the
//!   caller's `env`, then the harness's `dsh_env`, which always wins.
//! - Each stream keeps its last bytes within a budget; an overflowing stream is written in
//!   full to a private spill file until it passes the spill cap ([`OutputCollector`]).
//! - The timeout and the caller's cancellation are one deadline: the first cause is reported
//!   (`timed_out` or `aborted`, never both). Either sends SIGTERM to the group (and to the
//!   processes of its session that left it) and SIGKILL after the grace if any of it still
//!   lives; a foreground run returns only once no process of its group or session is left,
//!   so a TERM-trapping grandchild cannot outlive the call.
//! - A command whose descendants keep its pipes open settles the grace period after it
//!   exited, with what was read by then.
//! - The runner owns every tree until it is gone: [`ProcessRunner::shutdown`] terminates and
//!   awaits them; dropping the runner SIGKILLs them.
//!
//! ```
//! use dsh_shell::{
//!     ProcessRunner, RunLimits, RunnerOptions, ShellConfig, ShellExecRequest, bash_argv,
//!     resolve_request,
//! };
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runner = ProcessRunner::new(RunLimits::default(), RunnerOptions::default());
//! let request = ShellExecRequest { timeout_ms: Some(5_000.0), ..ShellExecRequest::new("echo hi; exit 3") };
//! let spec = resolve_request(&ShellConfig::default(), request)?;
//! let result = runner.run(&bash_argv(&spec.command), &spec).await?;
//! assert_eq!((result.exit_code, result.stdout.text.as_str()), (Some(3), "hi\n"));
//! runner.shutdown().await;
//! # Ok::<(), dsh_shell::ShellError>(())
//! # }).unwrap();
//! ```

mod bash;
mod child_reset;
mod collector;
mod config;
mod driver;
mod env;
mod error;
mod executor;
mod launch;
mod orphans;
mod process;
mod runner;
pub mod sandbox;
mod signals;
mod spawn;
mod spill;
mod supervised;
mod system_program;
mod tree;
mod types;

pub use async_trait::async_trait;
pub use bash::BashRunner;
pub use child_reset::mark_inherited_close_on_exec;
pub use collector::{OutputCollector, OutputRead};
pub use config::{
    DEFAULT_GRACE_MS, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_SPILL_BYTES, DEFAULT_MAX_TIMEOUT_MS,
    DEFAULT_TIMEOUT_MS, DSH_ENV_PREFIX, MAX_TIMER_DELAY_MS, ShellConfig, resolve_request,
};
pub use env::{ENV_OVERRIDES, child_env, is_credential_name, is_scrubbed_name};
pub use error::ShellError;
pub use executor::{SHELL, ShellExecutor};
pub use launch::LaunchThread;
pub use orphans::{GUARD_SCRIPT, guard_pid};
pub use process::{ProcessSettlement, SettleHook, ShellProcess};
pub use runner::{ParentEnv, ProcessRunner, RunLimits, RunnerOptions, bash_argv};
pub use sandbox::{
    ESCALATION_HINT_MARKER, NetworkPolicy, ProtectedPath, Protection, SANDBOX_POLICY,
    SANDBOX_PROTECTION, SANDBOX_UNAVAILABLE, SandboxExecutionPolicy, SandboxMode,
    SandboxPolicyService, SandboxProtection, SandboxRefusal, WritePlan, canonical_path,
    sandbox_denial_marker, sandbox_unavailable_message, write_plan,
};
pub use signals::signal_name;
pub use spawn::{LaunchOptions, STATUS_FD_PLACEHOLDER};
pub use spill::{default_spill_dir, remove_spill_dir_if_empty};
pub use system_program::{SYSTEM_PROGRAM_DIRS, root_owned_and_locked, system_path, system_program};
pub use tokio_util::sync::CancellationToken;
pub use tree::process_group_alive;
pub use types::{
    CollectedOutput, ShellExecRequest, ShellExecSpec, ShellProcessRead, ShellProcessStatus,
    ShellRunResult, ShellSandboxInfo,
};
