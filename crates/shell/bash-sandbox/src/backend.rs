//! The backends that confine a command, how each is found and probed, and the argv each
//! wraps a command in (dsh's `sandbox-local` provider, with Landlock tried first).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dsh_shell::{
    NetworkPolicy, STATUS_FD_PLACEHOLDER, SandboxExecutionPolicy, SandboxMode, ShellError,
    WritePlan, bash_argv, root_owned_and_locked,
};

use crate::carve::pinned_ancestors;
use crate::confine::{Confinement, Enforced, LandlockSupport, probe};
use crate::sandbox_run::PROBE_PARTIAL_LINE;

/// The argument the `dsh` binary dispatches to the sandbox runner: `dsh __sandbox-run …`.
pub const SANDBOX_RUN_SUBCOMMAND: &str = "__sandbox-run";

/// The default bound of each functional probe (dsh's `probeTimeoutMs`).
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 5_000;

/// Where bubblewrap is looked for, in order. `PATH` is not searched: a directory on it that
/// the user (or a confined command) can write could hold a fake that runs commands
/// unconfined.
pub const BWRAP_PATHS: [&str; 3] = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

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

/// The first of [`BWRAP_PATHS`] that a user cannot have planted (symbolic links resolved
/// first; see [`root_owned_and_locked`]).
pub fn trusted_bwrap() -> Option<PathBuf> {
    BWRAP_PATHS
        .iter()
        .filter_map(|candidate| std::fs::canonicalize(candidate).ok())
        .find(|path| root_owned_and_locked(path))
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

fn path_arg(path: &Path, what: &str) -> Result<String, ShellError> {
    path.to_str().map(str::to_owned).ok_or_else(|| {
        ShellError::InvalidRequest(format!(
            "bash-sandbox: {what} path is not valid UTF-8: {}",
            path.display()
        ))
    })
}

/// The workspace root of a confined policy, checked.
pub(crate) fn confined_root(policy: &SandboxExecutionPolicy) -> Result<String, ShellError> {
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
/// --die-with-parent`, plus `--new-session` (no controlling terminal to push keystrokes
/// into); `workspace-write` adds `--tmpfs /tmp --bind <root> <root>` (an ephemeral `/tmp`),
/// `--bind <d> <d>` for each directory above a carve-out inside the root (pinning it) and
/// `--ro-bind <p> <p>` for each carve-out; `network: deny` (or `deny_network`) adds
/// `--unshare-net`.
pub fn bwrap_profile_args(
    policy: &SandboxExecutionPolicy,
    plan: &WritePlan,
    deny_network: bool,
) -> Result<Vec<String>, ShellError> {
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
        "--new-session",
    ]
    .map(str::to_owned)
    .into();
    if policy.mode == SandboxMode::WorkspaceWrite {
        args.extend(["--tmpfs".to_owned(), "/tmp".to_owned()]);
        args.extend(["--bind".to_owned(), root.clone(), root]);
        let inside: Vec<PathBuf> = plan
            .carve_outs
            .iter()
            .map(|kept| kept.path.clone())
            .filter(|path| path.starts_with(&policy.workspace_root))
            .collect();
        let roots = [policy.workspace_root.clone()];
        for directory in pinned_ancestors(&inside, &roots) {
            let directory = path_arg(&directory, "a protected path's directory")?;
            args.extend(["--bind".to_owned(), directory.clone(), directory]);
        }
        for path in &inside {
            let path = path_arg(path, "a protected path")?;
            args.extend(["--ro-bind".to_owned(), path.clone(), path]);
        }
    }
    if deny_network || policy.network == NetworkPolicy::Deny {
        args.push("--unshare-net".to_owned());
    }
    Ok(args)
}

/// The Landlock confinement of `plan`: read everywhere, write `/dev/null` and the plan's
/// roots, its carve-outs read-only; the network denied when asked; the fenced ports closed
/// and signals scoped where `support` allows (a fence it cannot apply denies the network
/// instead).
pub fn landlock_confinement(
    policy: &SandboxExecutionPolicy,
    plan: &WritePlan,
    support: LandlockSupport,
    fenced_ports: &[u16],
) -> Confinement {
    let mut read_write = vec![PathBuf::from("/dev/null")];
    read_write.extend(plan.roots.iter().cloned());
    let fence = support.fences_ports() && !fenced_ports.is_empty();
    Confinement {
        read_only: vec![PathBuf::from("/")],
        read_write,
        carve_outs: plan
            .carve_outs
            .iter()
            .map(|kept| kept.path.clone())
            .collect(),
        deny_network: policy.network == NetworkPolicy::Deny
            || (!fenced_ports.is_empty() && !support.fences_ports()),
        fenced_ports: if fence {
            fenced_ports.to_vec()
        } else {
            Vec::new()
        },
        scope_signals: support.scopes_signals(),
        confine_files: true,
        drop_powers: true,
        guard_harness: true,
    }
}

/// The runner's arguments for the file part of `confinement`: `--ro`, `--rw`, `--protect`
/// per path, `--deny-network`, `--status-fd` with the status channel's placeholder, and
/// `--parent-pid` with this process's id.
/// (Port fencing and signal scoping come from the launch thread the runner is forked on.)
pub fn runner_profile_args(confinement: &Confinement) -> Result<Vec<String>, ShellError> {
    let mut args = Vec::new();
    for (flag, paths) in [
        ("--ro", &confinement.read_only),
        ("--rw", &confinement.read_write),
        ("--protect", &confinement.carve_outs),
    ] {
        for path in paths {
            args.push(flag.to_owned());
            args.push(path_arg(path, "a rule")?);
        }
    }
    if confinement.deny_network {
        args.push("--deny-network".to_owned());
    }
    args.extend(["--status-fd".to_owned(), STATUS_FD_PLACEHOLDER.to_owned()]);
    args.extend(["--parent-pid".to_owned(), std::process::id().to_string()]);
    Ok(args)
}

/// The argv that runs `bash -c <command>` through `prefix` (the runner, or bubblewrap with
/// its profile): `[prefix…, "--", "bash", "-c", command]`.
pub fn wrapped_argv(mut prefix: Vec<String>, command: &str) -> Vec<String> {
    prefix.push("--".to_owned());
    prefix.extend(bash_argv(command));
    prefix
}

/// The runner's functional probe: `<runner> --probe` must exit 0 within `timeout`; its
/// stdout tells full from partial enforcement. `None`: unusable.
pub fn probe_runner(runner: &SandboxRunner, timeout: Duration) -> Option<Enforcement> {
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
        protected_paths: Vec::new(),
    };
    let plan = WritePlan {
        roots: Vec::new(),
        carve_outs: Vec::new(),
    };
    let Ok(profile) = bwrap_profile_args(&probe_policy, &plan, false) else {
        return false;
    };
    let mut command = Command::new(&bwrap.program);
    command
        .args(&bwrap.prefix_args)
        .args(profile)
        .args(["--", "true"]);
    run_probe(command, timeout).is_some_and(|(status, _)| status.success())
}

/// Walks the chain: Landlock (probed in this process; with [`LaunchStrategy::Runner`] the
/// runner's own probe must pass too), then bubblewrap when installed and working.
/// `None`: no backend is usable.
pub fn select_backend(options: &SandboxOptions) -> Option<Backend> {
    if let Ok(support) = probe() {
        let enforcement = match options.strategy {
            LaunchStrategy::Thread => Some(Enforcement::of(support.enforced)),
            LaunchStrategy::Runner => probe_runner(&options.runner, options.probe_timeout),
        };
        if let Some(enforcement) = enforcement {
            return Some(Backend::Landlock {
                enforcement,
                abi: support.abi,
            });
        }
    }
    let bwrap = options.bwrap.as_ref()?;
    probe_bwrap(bwrap, options.probe_timeout).then_some(Backend::Bwrap)
}

/// Runs one probe child, stdout captured, bounded by `timeout` (killed past it).
fn run_probe(mut command: Command, timeout: Duration) -> Option<(ExitStatus, String)> {
    let deadline = Instant::now().checked_add(timeout)?;
    // A probe gets none of this process's environment (its secrets included) but PATH.
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let mut child = command
        .env_clear()
        .env("PATH", path)
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
mod tests {
    use dsh_shell::ProtectedPath;

    use super::*;

    fn policy(mode: SandboxMode, root: &str, network: NetworkPolicy) -> SandboxExecutionPolicy {
        SandboxExecutionPolicy {
            mode,
            workspace_root: PathBuf::from(root),
            session_id: None,
            network,
            protected_paths: Vec::new(),
        }
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|item| (*item).to_owned()).collect()
    }

    fn plan(roots: &[&str], carve_outs: &[&str]) -> WritePlan {
        WritePlan {
            roots: roots.iter().map(PathBuf::from).collect(),
            carve_outs: carve_outs
                .iter()
                .map(|path| ProtectedPath::new(*path, "test"))
                .collect(),
        }
    }

    #[test]
    fn bwrap_profiles_are_dshs_plus_carve_outs() {
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
            "--new-session",
        ];
        let none = plan(&[], &[]);
        assert_eq!(
            bwrap_profile_args(
                &policy(SandboxMode::ReadOnly, "/w", NetworkPolicy::Allow),
                &none,
                false
            )
            .unwrap(),
            strings(&base)
        );
        let mut write = base.to_vec();
        write.extend([
            "--tmpfs",
            "/tmp",
            "--bind",
            "/w s",
            "/w s",
            "--ro-bind",
            "/w s/.dsh",
            "/w s/.dsh",
        ]);
        let carved = plan(&["/w s"], &["/w s/.dsh", "/tmp/spill"]);
        let workspace = policy(SandboxMode::WorkspaceWrite, "/w s", NetworkPolicy::Allow);
        assert_eq!(
            bwrap_profile_args(&workspace, &carved, false).unwrap(),
            strings(&write),
            "a carve-out under the fresh /tmp needs no bind"
        );
        write.push("--unshare-net");
        assert_eq!(
            bwrap_profile_args(&workspace, &carved, true).unwrap(),
            strings(&write)
        );
    }

    #[test]
    fn landlock_confinements_follow_the_plan_and_the_kernel() {
        let workspace = policy(SandboxMode::WorkspaceWrite, "/w", NetworkPolicy::Allow);
        let carved = plan(&["/w", "/tmp"], &["/w/.dsh"]);
        let modern = LandlockSupport {
            enforced: Enforced::Full,
            abi: 7,
        };
        let confinement = landlock_confinement(&workspace, &carved, modern, &[3080]);
        assert_eq!(confinement.read_only, vec![PathBuf::from("/")]);
        assert_eq!(
            confinement.read_write,
            ["/dev/null", "/w", "/tmp"].map(PathBuf::from).to_vec()
        );
        assert_eq!(confinement.carve_outs, vec![PathBuf::from("/w/.dsh")]);
        assert_eq!(confinement.fenced_ports, vec![3080]);
        assert!(confinement.scope_signals && !confinement.deny_network);
        let old = LandlockSupport {
            enforced: Enforced::Partial,
            abi: 3,
        };
        let fallback = landlock_confinement(&workspace, &carved, old, &[3080]);
        assert!(fallback.fenced_ports.is_empty() && !fallback.scope_signals);
        assert!(
            fallback.deny_network,
            "a fence the kernel cannot apply denies the network"
        );
        assert!(!landlock_confinement(&workspace, &carved, old, &[]).deny_network);
        assert_eq!(
            runner_profile_args(&confinement).unwrap(),
            strings(&[
                "--ro",
                "/",
                "--rw",
                "/dev/null",
                "--rw",
                "/w",
                "--rw",
                "/tmp",
                "--protect",
                "/w/.dsh",
                "--status-fd",
                STATUS_FD_PLACEHOLDER,
                "--parent-pid",
                &std::process::id().to_string(),
            ])
        );
    }

    #[test]
    fn bwrap_is_trusted_only_from_root_owned_locked_paths() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("bwrap");
        std::fs::write(&fake, "#!/bin/sh\nexec \"$@\"\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A temp directory is writable by others (sticky /tmp), so nothing under it is
        // trusted, whoever owns the file.
        assert!(!root_owned_and_locked(&fake));
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!root_owned_and_locked(&fake));
        assert!(!root_owned_and_locked(Path::new("/nonexistent/bwrap")));
        if let Some(found) = trusted_bwrap() {
            assert!(BWRAP_PATHS.iter().any(|path| {
                std::fs::canonicalize(path).is_ok_and(|resolved| resolved == found)
            }));
        }
    }

    #[test]
    fn backends_carry_their_dialects() {
        let landlock = Backend::Landlock {
            enforcement: Enforcement::Partial,
            abi: 3,
        };
        assert_eq!(landlock.enforcement().as_str(), "partial");
        assert!(landlock.denial_signatures().contains(&"permission denied"));
        assert_eq!(landlock.landlock().map(|support| support.abi), Some(3));
        assert_eq!(Backend::Bwrap.enforcement(), Enforcement::Full);
        assert_eq!(
            Backend::Bwrap.denial_signatures(),
            &["read-only file system"]
        );
        assert_eq!(Backend::Bwrap.landlock(), None);
    }

    #[test]
    fn probes_of_missing_programs_are_unusable() {
        let missing = SandboxRunner::new("/nonexistent/dsh-runner", Vec::new());
        assert_eq!(probe_runner(&missing, Duration::from_secs(1)), None);
        let bwrap = SandboxRunner::new("/nonexistent/bwrap", Vec::new());
        assert!(!probe_bwrap(&bwrap, Duration::from_secs(1)));
        let options = SandboxOptions {
            runner: missing,
            bwrap: None,
            probe_timeout: Duration::from_secs(1),
            strategy: LaunchStrategy::Runner,
        };
        assert_eq!(select_backend(&options), None);
    }

    #[test]
    fn probes_are_bounded() {
        let sleeper = SandboxRunner::new("bash", strings(&["-c", "sleep 5", "probe"]));
        let started = Instant::now();
        assert_eq!(probe_runner(&sleeper, Duration::from_millis(100)), None);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn the_runner_probe_tells_full_from_partial() {
        let fake = |script: &str| SandboxRunner::new("bash", strings(&["-c", script, "probe"]));
        let timeout = Duration::from_secs(5);
        let partial =
            fake("[ \"$1\" = --probe ] && echo 'landlock: partially enforced (older ABI)'");
        assert_eq!(probe_runner(&partial, timeout), Some(Enforcement::Partial));
        assert_eq!(
            probe_runner(&fake("echo anything"), timeout),
            Some(Enforcement::Full)
        );
        assert_eq!(probe_runner(&fake("exit 125"), timeout), None);
    }
}
