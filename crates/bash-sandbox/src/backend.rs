//! The backends that confine a command, how each is probed, and the argv each wraps a
//! command in (dsh's `sandbox-local` provider, with the Landlock runner tried first).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dsh_shell::{NetworkPolicy, bash_argv};
use dsh_shell::{SandboxExecutionPolicy, SandboxMode, ShellError, writable_roots};

use crate::sandbox_run::{
    LAUNCHER_FAILURE_EXIT, PARTIAL_ENFORCEMENT_LINE, PROBE_PARTIAL_LINE, RUNNER_LINE_PREFIX,
};

/// The argument the `dsh` binary dispatches to the sandbox runner: `dsh __sandbox-run …`.
pub const SANDBOX_RUN_SUBCOMMAND: &str = "__sandbox-run";

/// The default bound of each functional probe (dsh's `probeTimeoutMs`).
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 5_000;

/// The bubblewrap program looked up on `PATH` by default.
pub const BWRAP_PROGRAM: &str = "bwrap";

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

/// Where the executor looks for confinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxOptions {
    /// The Landlock runner, probed first.
    pub runner: SandboxRunner,
    /// How bubblewrap is launched (`bwrap` from `PATH` by default), probed when Landlock is
    /// unusable; `None` leaves bubblewrap out of the chain.
    pub bwrap: Option<SandboxRunner>,
    /// The bound of each functional probe.
    pub probe_timeout: Duration,
}

impl SandboxOptions {
    /// `runner` first, then `bwrap` as found on `PATH` now (an absolute path, so a later
    /// `PATH` entry a confined command could write cannot substitute it), each probe bounded
    /// by 5 s. Without `bwrap` on `PATH`, the chain has Landlock only.
    pub fn new(runner: SandboxRunner) -> Self {
        Self {
            runner,
            bwrap: find_on_path(BWRAP_PROGRAM).map(|path| SandboxRunner::new(path, Vec::new())),
            probe_timeout: Duration::from_millis(DEFAULT_PROBE_TIMEOUT_MS),
        }
    }
}

/// The first executable file named `name` in a directory of `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
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
}

/// When a confined process's outcome means the runner failed and the command never ran
/// (dsh's `RunnerFailureRule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunnerFailureRule {
    /// The exit codes a runner failure can have (empty: any nonzero exit).
    pub allowed_exit_codes: &'static [i32],
    /// Case-insensitive substrings of the runner's fatal stderr lines.
    pub fatal_signatures: &'static [&'static str],
    /// Whole stderr lines (case-insensitive) that are informational, never fatal.
    pub informational_lines: &'static [&'static str],
}

/// The backend that confines commands, chosen once per executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The Landlock runner, fully or partially enforcing.
    Landlock {
        /// What the probe reported.
        enforcement: Enforcement,
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
            Self::Landlock { enforcement } => enforcement,
            Self::Bwrap => Enforcement::Full,
        }
    }

    /// The case-insensitive stderr substrings of a denied file effect under this backend.
    pub const fn denial_signatures(self) -> &'static [&'static str] {
        match self {
            Self::Landlock { .. } => &["permission denied"],
            Self::Bwrap => &["read-only file system"],
        }
    }

    /// dsh's runner-failure rule of this backend.
    pub const fn runner_failure_rule(self) -> RunnerFailureRule {
        match self {
            Self::Landlock { .. } => RunnerFailureRule {
                allowed_exit_codes: &[LAUNCHER_FAILURE_EXIT],
                fatal_signatures: &[RUNNER_LINE_PREFIX],
                informational_lines: &[PARTIAL_ENFORCEMENT_LINE],
            },
            Self::Bwrap => RunnerFailureRule {
                allowed_exit_codes: &[],
                fatal_signatures: &["bwrap: "],
                informational_lines: &[],
            },
        }
    }
}

fn path_arg(path: &Path, what: &str) -> Result<String, ShellError> {
    path.to_str().map(str::to_owned).ok_or_else(|| {
        ShellError::InvalidRequest(format!(
            "bash-sandbox: {what} path is not valid UTF-8: {}",
            path.display()
        ))
    })
}

fn confined_root(policy: &SandboxExecutionPolicy) -> Result<String, ShellError> {
    if policy.mode == SandboxMode::DangerFullAccess {
        return Err(ShellError::InvalidRequest(
            "bash-sandbox: danger-full-access has no confinement profile".to_owned(),
        ));
    }
    if !policy.workspace_root.is_absolute() {
        return Err(ShellError::InvalidRequest(format!(
            "bash-sandbox: the workspace root must be an absolute path: {}",
            policy.workspace_root.display()
        )));
    }
    path_arg(&policy.workspace_root, "the workspace root")
}

/// dsh's bubblewrap profile: `--ro-bind / / --dev /dev --unshare-pid --proc /proc
/// --die-with-parent`; `workspace-write` adds `--tmpfs /tmp --bind <root> <root>` (an
/// ephemeral `/tmp`); `network: deny` adds `--unshare-net`.
pub fn bwrap_profile_args(policy: &SandboxExecutionPolicy) -> Result<Vec<String>, ShellError> {
    let root = confined_root(policy)?;
    let mut args: Vec<String> = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--unshare-pid",
        "--proc",
        "/proc",
        "--die-with-parent",
    ]
    .map(str::to_owned)
    .into();
    if policy.mode == SandboxMode::WorkspaceWrite {
        args.extend(["--tmpfs".to_owned(), "/tmp".to_owned()]);
        args.extend(["--bind".to_owned(), root.clone(), root]);
    }
    if policy.network == NetworkPolicy::Deny {
        args.push("--unshare-net".to_owned());
    }
    Ok(args)
}

/// The Landlock runner's grants: `--ro / --rw /dev/null`, then `--rw <root>` for each
/// writable root (`workspace-write`: the workspace root, `/tmp` and the OS temp directory,
/// resolved); `network: deny` adds `--deny-network`.
pub fn landlock_profile_args(policy: &SandboxExecutionPolicy) -> Result<Vec<String>, ShellError> {
    confined_root(policy)?;
    let mut args: Vec<String> = ["--ro", "/", "--rw", "/dev/null"].map(str::to_owned).into();
    for root in writable_roots(policy).unwrap_or_default() {
        args.push("--rw".to_owned());
        args.push(path_arg(&root, "a writable root")?);
    }
    if policy.network == NetworkPolicy::Deny {
        args.push("--deny-network".to_owned());
    }
    Ok(args)
}

/// The argv that runs `bash -c <command>` confined by `backend`:
/// `[runner…, profile…, "--", "bash", "-c", command]`.
pub fn confined_argv(
    backend: Backend,
    options: &SandboxOptions,
    policy: &SandboxExecutionPolicy,
    command: &str,
) -> Result<Vec<String>, ShellError> {
    let mut argv = match backend {
        Backend::Landlock { .. } => {
            let mut argv = options.runner.argv_prefix()?;
            argv.extend(landlock_profile_args(policy)?);
            argv
        }
        Backend::Bwrap => {
            let mut argv = match &options.bwrap {
                Some(bwrap) => bwrap.argv_prefix()?,
                None => vec![BWRAP_PROGRAM.to_owned()],
            };
            argv.extend(bwrap_profile_args(policy)?);
            argv
        }
    };
    argv.push("--".to_owned());
    argv.extend(bash_argv(command));
    Ok(argv)
}

/// The Landlock runner's functional probe: `<runner> --probe` must exit 0 within `timeout`;
/// its stdout tells full from partial enforcement. `None`: unusable.
pub fn probe_landlock(runner: &SandboxRunner, timeout: Duration) -> Option<Enforcement> {
    let mut command = Command::new(&runner.program);
    command.args(&runner.prefix_args).arg("--probe");
    let (status, stdout) = run_probe(command, timeout)?;
    if !status.success() {
        return None;
    }
    Some(if stdout.contains(PROBE_PARTIAL_LINE) {
        Enforcement::Partial
    } else {
        Enforcement::Full
    })
}

/// bubblewrap's functional probe: `bwrap <read-only profile> -- true` must exit 0 within
/// `timeout`.
pub fn probe_bwrap(bwrap: &SandboxRunner, timeout: Duration) -> bool {
    let probe_policy = SandboxExecutionPolicy {
        mode: SandboxMode::ReadOnly,
        workspace_root: PathBuf::from("/"),
        session_id: None,
        network: NetworkPolicy::Allow,
    };
    let Ok(profile) = bwrap_profile_args(&probe_policy) else {
        return false;
    };
    let mut command = Command::new(&bwrap.program);
    command
        .args(&bwrap.prefix_args)
        .args(profile)
        .args(["--", "true"]);
    run_probe(command, timeout).is_some_and(|(status, _)| status.success())
}

/// Walks the chain: the Landlock runner, then bubblewrap when installed and working.
/// `None`: no backend is usable.
pub fn select_backend(options: &SandboxOptions) -> Option<Backend> {
    if let Some(enforcement) = probe_landlock(&options.runner, options.probe_timeout) {
        return Some(Backend::Landlock { enforcement });
    }
    let bwrap = options.bwrap.as_ref()?;
    probe_bwrap(bwrap, options.probe_timeout).then_some(Backend::Bwrap)
}

/// Runs one probe child, stdout captured, bounded by `timeout` (killed past it).
fn run_probe(mut command: Command, timeout: Duration) -> Option<(ExitStatus, String)> {
    let deadline = Instant::now().checked_add(timeout)?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let (sender, receiver) = mpsc::channel();
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            let _ = sender.send(text);
        });
    }
    let mut step = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(step);
                step = (step * 2).min(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    let stdout = receiver.recv_timeout(wait).unwrap_or_default();
    Some((status, stdout))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn policy(mode: SandboxMode, root: &str, network: NetworkPolicy) -> SandboxExecutionPolicy {
        SandboxExecutionPolicy {
            mode,
            workspace_root: PathBuf::from(root),
            session_id: None,
            network,
        }
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|item| (*item).to_owned()).collect()
    }

    #[test]
    fn bwrap_profiles_are_dshs() {
        let base = [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--unshare-pid",
            "--proc",
            "/proc",
            "--die-with-parent",
        ];
        assert_eq!(
            bwrap_profile_args(&policy(SandboxMode::ReadOnly, "/w", NetworkPolicy::Allow)).unwrap(),
            strings(&base)
        );
        let mut write = base.to_vec();
        write.extend(["--tmpfs", "/tmp", "--bind", "/w s", "/w s"]);
        assert_eq!(
            bwrap_profile_args(&policy(
                SandboxMode::WorkspaceWrite,
                "/w s",
                NetworkPolicy::Allow
            ))
            .unwrap(),
            strings(&write)
        );
        write.push("--unshare-net");
        assert_eq!(
            bwrap_profile_args(&policy(
                SandboxMode::WorkspaceWrite,
                "/w s",
                NetworkPolicy::Deny
            ))
            .unwrap(),
            strings(&write)
        );
    }

    #[test]
    fn landlock_profiles_grant_the_writable_roots() {
        assert_eq!(
            landlock_profile_args(&policy(SandboxMode::ReadOnly, "/w", NetworkPolicy::Allow))
                .unwrap(),
            strings(&["--ro", "/", "--rw", "/dev/null"])
        );
        assert_eq!(
            landlock_profile_args(&policy(SandboxMode::ReadOnly, "/w", NetworkPolicy::Deny))
                .unwrap(),
            strings(&["--ro", "/", "--rw", "/dev/null", "--deny-network"])
        );
        let write = policy(SandboxMode::WorkspaceWrite, "/w", NetworkPolicy::Allow);
        let mut expected = strings(&["--ro", "/", "--rw", "/dev/null"]);
        for root in writable_roots(&write).unwrap() {
            expected.push("--rw".to_owned());
            expected.push(root.to_str().unwrap().to_owned());
        }
        assert_eq!(landlock_profile_args(&write).unwrap(), expected);
        assert_eq!(expected.get(5).map(String::as_str), Some("/w"));
        assert!(expected.contains(&"/tmp".to_owned()));
    }

    #[test]
    fn confined_argvs_wrap_bash() {
        let options = SandboxOptions {
            runner: SandboxRunner::new("/bin/dsh", strings(&["__sandbox-run"])),
            bwrap: Some(SandboxRunner::new("/usr/bin/bwrap", Vec::new())),
            probe_timeout: Duration::from_secs(1),
        };
        let read_only = policy(SandboxMode::ReadOnly, "/w", NetworkPolicy::Deny);
        assert_eq!(
            confined_argv(
                Backend::Landlock {
                    enforcement: Enforcement::Full
                },
                &options,
                &read_only,
                "echo hi"
            )
            .unwrap(),
            strings(&[
                "/bin/dsh",
                "__sandbox-run",
                "--ro",
                "/",
                "--rw",
                "/dev/null",
                "--deny-network",
                "--",
                "bash",
                "-c",
                "echo hi"
            ])
        );
        let argv = confined_argv(Backend::Bwrap, &options, &read_only, "ls").unwrap();
        assert_eq!(argv.first().map(String::as_str), Some("/usr/bin/bwrap"));
        assert_eq!(
            argv.get(argv.len() - 5..).unwrap(),
            strings(&["--unshare-net", "--", "bash", "-c", "ls"])
        );
    }

    #[test]
    fn profiles_refuse_what_they_cannot_express() {
        let relative = policy(SandboxMode::ReadOnly, "w", NetworkPolicy::Allow);
        assert!(
            landlock_profile_args(&relative)
                .unwrap_err()
                .to_string()
                .contains("must be an absolute path")
        );
        let full = policy(SandboxMode::DangerFullAccess, "/w", NetworkPolicy::Allow);
        assert!(bwrap_profile_args(&full).is_err());
    }

    #[test]
    fn backends_carry_dshs_dialects() {
        let landlock = Backend::Landlock {
            enforcement: Enforcement::Partial,
        };
        assert_eq!(landlock.enforcement().as_str(), "partial");
        assert_eq!(landlock.denial_signatures(), &["permission denied"]);
        assert_eq!(landlock.runner_failure_rule().allowed_exit_codes, &[125]);
        assert_eq!(Backend::Bwrap.enforcement(), Enforcement::Full);
        assert_eq!(
            Backend::Bwrap.denial_signatures(),
            &["read-only file system"]
        );
        assert_eq!(
            Backend::Bwrap.runner_failure_rule().fatal_signatures,
            &["bwrap: "]
        );
    }

    #[test]
    fn probes_of_missing_programs_are_unusable() {
        let missing = SandboxRunner::new("/nonexistent/dsh-runner", Vec::new());
        assert_eq!(probe_landlock(&missing, Duration::from_secs(1)), None);
        let bwrap = SandboxRunner::new("/nonexistent/bwrap", Vec::new());
        assert!(!probe_bwrap(&bwrap, Duration::from_secs(1)));
        let options = SandboxOptions {
            runner: missing,
            bwrap: None,
            probe_timeout: Duration::from_secs(1),
        };
        assert_eq!(select_backend(&options), None);
    }

    #[test]
    fn probes_are_bounded() {
        let sleeper = SandboxRunner::new("bash", strings(&["-c", "sleep 5", "probe"]));
        let started = Instant::now();
        assert_eq!(probe_landlock(&sleeper, Duration::from_millis(100)), None);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn the_probe_report_tells_full_from_partial() {
        let fake = |script: &str| SandboxRunner::new("bash", strings(&["-c", script, "probe"]));
        let timeout = Duration::from_secs(5);
        let partial =
            fake("[ \"$1\" = --probe ] && echo 'landlock: partially enforced (older ABI)'");
        assert_eq!(
            probe_landlock(&partial, timeout),
            Some(Enforcement::Partial)
        );
        assert_eq!(
            probe_landlock(&fake("echo anything"), timeout),
            Some(Enforcement::Full)
        );
        assert_eq!(probe_landlock(&fake("exit 125"), timeout), None);
    }
}
