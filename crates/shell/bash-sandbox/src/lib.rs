//! dsh's confining shell provider (`dsh-bash-sandbox`): [`SandboxBashExecutor`] runs every
//! `bash -c <command>` confined, and [`BashSandboxPlugin`] provides it as the `shell`
//! service over the standing policy of the `sandboxPolicy` service ([`SANDBOX_POLICY`],
//! defined by `dsh-shell`).
//!
//! - **Backends**, probed once per executor in this order: Landlock, then bubblewrap when a
//!   trusted one is installed and works ([`trusted_bwrap`]: fixed system paths, root-owned,
//!   never `PATH`). With neither, every confined call is refused with dsh's
//!   `SANDBOX_UNAVAILABLE` message; nothing ever runs unconfined.
//! - **Where Landlock is applied.** Each distinct [`Confinement`] is put once on a launch
//!   thread of this process ([`dsh_shell::LaunchThread`]) and commands are forked there,
//!   inheriting it at no cost per command. The runner process ([`sandbox_run`], launched
//!   as `dsh __sandbox-run …`) applies it where a thread cannot: a carve-out for an
//!   unprivileged user, which needs a user namespace.
//! - **Modes.** `read-only`: no writes anywhere but `/dev/null`. `workspace-write`: writes
//!   under the roots of the call's [`dsh_shell::WritePlan`] (the workspace, `/tmp`, a valid
//!   temp directory), except its carve-outs: dsh's own files inside them stay read-only
//!   through a private mount namespace ([`carve`]). `danger-full-access`: unconfined.
//!   Reads work everywhere.
//! - **Network**: `allow` (dsh's default) or `deny`, which refuses every socket but
//!   `AF_UNIX` (a seccomp filter under Landlock, a new network namespace under bubblewrap).
//!   Ports fenced in the [`dsh_shell::SandboxProtection`] registry (the web host's) are
//!   closed to TCP connects (Landlock ABI 4); where the kernel cannot, the network is denied
//!   instead. Signals are scoped to the confinement where the kernel allows (ABI 6).
//! - **Outcomes**: a denied file access (a nonzero exit whose stderr says `permission
//!   denied` or `read-only file system`) sets `sandbox.denied`; a launcher failure (written
//!   on the status channel, which the command never gets) means the command never ran.
//!
//! The process hosting the runner must dispatch to [`sandbox_run::sandbox_run_main`]
//! before it starts any thread.

mod backend;
pub mod carve;
mod classify;
mod confine;
mod executor;
mod filters;
mod held;
mod mount_watch;
mod mountinfo;
mod plugin;
mod powers;
pub mod sandbox_run;
mod standing;

pub use backend::{
    Backend, DEFAULT_PROBE_TIMEOUT_MS, Enforcement, LaunchStrategy, SANDBOX_RUN_SUBCOMMAND,
    SandboxOptions, SandboxRunner, bwrap_profile_args, landlock_confinement, probe_bwrap,
    probe_runner, runner_profile_args, select_backend, trusted_bwrap, wrapped_argv,
};
pub use classify::{is_runner_spawn_failure, launch_failure, matches_signature};
pub use confine::{Confinement, Enforced, LandlockSupport, probe as probe_landlock};
pub use dsh_shell::SANDBOX_POLICY;
pub use executor::SandboxBashExecutor;
pub use filters::{HarnessGuard, fence_filter, network_filter};
pub use held::{
    CAPACITY as HELD_CONFINEMENTS, FENCED_CAPACITY as HELD_FENCED_CONFINEMENTS, Held,
    HeldConfinements,
};
pub use plugin::{BashSandboxConfig, BashSandboxPlugin, PLUGIN_NAME};
pub use powers::{DROPPED as DROPPED_CAPABILITIES, drop_powers, keep_memory_private};
pub use standing::{FixedPolicy, PolicyService, StandingPolicy};
