//! dsh's confining shell provider (`dsh-bash-sandbox`): [`SandboxBashExecutor`] runs every
//! `bash -c <command>` confined, and [`BashSandboxPlugin`] provides it as the `shell`
//! service over the standing policy of the `sandboxPolicy` service ([`SANDBOX_POLICY`],
//! defined by `dsh-shell`).
//!
//! - **Backends**, probed once per executor in this order: the Landlock runner
//!   ([`sandbox_run`], launched as `dsh __sandbox-run …`: it restricts itself with Landlock
//!   and `exec`s the command, so every descendant is confined), then bubblewrap when it is
//!   installed and works. With neither, every confined call is refused with dsh's
//!   `SANDBOX_UNAVAILABLE` message; nothing ever runs unconfined.
//! - **Modes.** `read-only`: no writes anywhere but `/dev/null`. `workspace-write`: writes
//!   under the workspace root, `/tmp` and the OS temp directory (bubblewrap: the workspace
//!   root and an ephemeral `/tmp`). `danger-full-access`: unconfined. Reads work everywhere.
//! - **Network**: `allow` (dsh's default) or `deny`, which refuses every socket but
//!   `AF_UNIX` (a seccomp filter under Landlock, a new network namespace under bubblewrap).
//! - **Outcomes**: a denied file access (a nonzero exit whose stderr says `permission
//!   denied`, or `read-only file system` under bubblewrap) sets `sandbox.denied`; a runner
//!   failure (exit 125 and a `landlock-run: ` line, or a `bwrap: ` line) means the command
//!   never ran.
//!
//! The process hosting the runner must dispatch to [`sandbox_run::sandbox_run_main`]
//! before it starts any thread.

mod backend;
mod classify;
mod executor;
mod plugin;
pub mod sandbox_run;
mod standing;

pub use backend::{
    BWRAP_PROGRAM, Backend, DEFAULT_PROBE_TIMEOUT_MS, Enforcement, RunnerFailureRule,
    SANDBOX_RUN_SUBCOMMAND, SandboxOptions, SandboxRunner, bwrap_profile_args, confined_argv,
    landlock_profile_args, probe_bwrap, probe_landlock, select_backend,
};
pub use classify::{classify_runner_failure, is_runner_spawn_failure, matches_signature};
pub use dsh_shell::SANDBOX_POLICY;
pub use executor::SandboxBashExecutor;
pub use plugin::{BashSandboxConfig, BashSandboxPlugin, PLUGIN_NAME};
pub use standing::{FixedPolicy, PolicyService, StandingPolicy};
