//! The backends that confine a command and the launchers they go through (dsh's
//! `sandbox-local` provider, with Landlock tried first): [`profile`] builds the argv and
//! confinement each backend wraps a command in, [`probe`] finds which backend works here.

mod probe;
mod profile;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_shell::ShellError;

use crate::confine::{Enforced, LandlockSupport};

pub use probe::{probe_bwrap, probe_runner, select_backend};
pub use profile::{bwrap_profile_args, landlock_confinement, runner_profile_args, wrapped_argv};

/// The argument the `dsh` binary dispatches to the sandbox runner: `dsh __sandbox-run …`.
pub const SANDBOX_RUN_SUBCOMMAND: &str = "__sandbox-run";

/// The default bound of each functional probe (dsh's `probeTimeoutMs`).
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 5_000;

/// How a confining program is launched: `program`, then `prefix_args`, then its own
/// arguments. For the Landlock runner ([`crate::sandbox_run`]) that is
/// `dsh __sandbox-run …`; for bubblewrap, `bwrap …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxRunner {
    /// The executable (`argv[0]`).
    pub program: PathBuf,
    /// Arguments before the runner's own (`["__sandbox-run"]` for the `dsh` binary).
    pub prefix_args: Vec<String>,
}

impl SandboxRunner {
    /// A runner launched as `program prefix_args… <runner args>`.
    pub fn new(program: impl Into<PathBuf>, prefix_args: Vec<String>) -> Self {
        Self {
            program: program.into(),
            prefix_args,
        }
    }

    /// This executable re-run as `<current exe> __sandbox-run …` (the `dsh` binary's runner).
    ///
    /// On Linux the program is `/proc/self/exe`: the child resolves it to the image of the
    /// running harness even when the file at its path has been replaced since (a confined
    /// command may rename files in a writable root, and must not swap the runner).
    pub fn current_exe() -> std::io::Result<Self> {
        let program = if cfg!(target_os = "linux") && Path::new("/proc/self/exe").exists() {
            PathBuf::from("/proc/self/exe")
        } else {
            std::env::current_exe()?
        };
        Ok(Self::new(program, vec![SANDBOX_RUN_SUBCOMMAND.to_owned()]))
    }

    /// `program` and `prefix_args` as argv strings.
    pub(crate) fn argv_prefix(&self) -> Result<Vec<String>, ShellError> {
        let mut argv = vec![path_arg(&self.program, "the sandbox runner")?];
        argv.extend(self.prefix_args.iter().cloned());
        Ok(argv)
    }
}

/// Where Landlock confinements are applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LaunchStrategy {
    /// Held on launch threads of this process, built once per distinct confinement, from
    /// which commands are forked already confined; the runner process only where a
    /// carve-out needs a user namespace (an unprivileged user with a protected path inside
    /// a writable root).
    #[default]
    Thread,
    /// Every command through the runner process, which confines itself and execs it.
    Runner,
}

/// Where the executor looks for confinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxOptions {
    /// The Landlock runner.
    pub runner: SandboxRunner,
    /// How bubblewrap is launched (found by [`trusted_bwrap`] by default), probed when
    /// Landlock is unusable; `None` leaves bubblewrap out of the chain.
    pub bwrap: Option<SandboxRunner>,
    /// The bound of each functional probe.
    pub probe_timeout: Duration,
    /// Where Landlock confinements are applied.
    pub strategy: LaunchStrategy,
}

impl SandboxOptions {
    /// `runner`, the trusted bubblewrap if there is one, probes bounded by 5 s, Landlock on
    /// launch threads.
    pub fn new(runner: SandboxRunner) -> Self {
        Self {
            runner,
            bwrap: trusted_bwrap().map(|path| SandboxRunner::new(path, Vec::new())),
            probe_timeout: Duration::from_millis(DEFAULT_PROBE_TIMEOUT_MS),
            strategy: LaunchStrategy::default(),
        }
    }
}

/// The bubblewrap of the system's program directories that a user cannot have planted
/// ([`dsh_shell::system_program`]). `PATH` is not searched: a directory on it that the user
/// (or a confined command) can write could hold a fake that runs commands unconfined.
pub fn trusted_bwrap() -> Option<PathBuf> {
    dsh_shell::system_program("bwrap")
}

/// How completely a backend enforces the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// Every promised file effect is governed.
    Full,
    /// An older kernel ABI governs only some of them.
    Partial,
}

impl Enforcement {
    /// dsh's spelling: `full` or `partial`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Partial => "partial",
        }
    }

    pub(crate) const fn of(enforced: Enforced) -> Self {
        match enforced {
            Enforced::Full => Self::Full,
            Enforced::Partial => Self::Partial,
        }
    }
}

/// The backend that confines commands, chosen once per executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Landlock, fully or partially enforcing.
    Landlock {
        /// What the probe reported.
        enforcement: Enforcement,
        /// The Landlock ABI in effect (4 fences ports, 6 scopes signals).
        abi: u8,
    },
    /// bubblewrap (always full).
    Bwrap,
}

impl Backend {
    /// `landlock` or `bwrap`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Landlock { .. } => "landlock",
            Self::Bwrap => "bwrap",
        }
    }

    /// How completely this backend enforces the mode.
    pub const fn enforcement(self) -> Enforcement {
        match self {
            Self::Landlock { enforcement, .. } => enforcement,
            Self::Bwrap => Enforcement::Full,
        }
    }

    /// What the kernel's Landlock offers under this backend (`None` for bubblewrap).
    pub const fn landlock(self) -> Option<LandlockSupport> {
        match self {
            Self::Landlock { enforcement, abi } => Some(LandlockSupport {
                enforced: match enforcement {
                    Enforcement::Full => Enforced::Full,
                    Enforcement::Partial => Enforced::Partial,
                },
                abi,
            }),
            Self::Bwrap => None,
        }
    }

    /// The case-insensitive stderr substrings of a denied file effect under this backend:
    /// Landlock refuses with `EACCES`, a carve-out and bubblewrap's read-only binds with
    /// `EROFS`.
    pub const fn denial_signatures(self) -> &'static [&'static str] {
        match self {
            Self::Landlock { .. } => &["permission denied", "read-only file system"],
            Self::Bwrap => &["read-only file system"],
        }
    }
}

/// `path` as an argv string; `what` names it in the error when it is not UTF-8.
fn path_arg(path: &Path, what: &str) -> Result<String, ShellError> {
    path.to_str().map(str::to_owned).ok_or_else(|| {
        ShellError::InvalidRequest(format!(
            "bash-sandbox: {what} path is not valid UTF-8: {}",
            path.display()
        ))
    })
}
