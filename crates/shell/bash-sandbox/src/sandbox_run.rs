//! The sandbox runner: dsh's `landlock-run` launcher, reimplemented over the `landlock` and
//! `seccompiler` crates and run as a re-exec of the harness binary (`dsh __sandbox-run …`).
//! The executor holds most confinements on launch threads of its own process; it uses this
//! runner where that cannot work (a carve-out that needs a user namespace, which only a
//! single-threaded process may enter) or where it is configured to.
//!
//! ```text
//! <runner> [--ro <path>]… [--rw <path>]… [--protect <path>]… [--deny-network]
//!          [--status-fd <n>] [--parent-pid <pid>] -- <argv>…
//! <runner> --probe
//! ```
//!
//! - `--ro <path>` grants read and execute beneath `<path>`; `--rw <path>` grants every
//!   filesystem access the ruleset handles beneath it (a file keeps only the accesses that
//!   apply to files, which is how `--rw /dev/null` works). Everything else is denied.
//! - `--protect <path>` keeps `<path>` read-only even inside a `--rw` path: it is
//!   bind-mounted onto itself read-only in a private mount namespace (with a user namespace
//!   of the caller's own ids when the runner is not root).
//! - `--deny-network` installs a seccomp filter: `socket(2)` with a domain other than
//!   `AF_UNIX` fails with `EPERM` (and so does `io_uring_setup(2)`).
//! - `--status-fd <n>`: descriptor `n` is the status channel. Each failure of the runner is
//!   written there too; the command it runs never gets the descriptor, so nothing the
//!   command prints can pass for a runner failure.
//! - `--parent-pid <pid>`: the harness. The runner (and the command it becomes) gets SIGKILL
//!   when the thread that started it dies, and refuses to run when the harness is already
//!   gone by then (its parent is no longer `<pid>`).
//! - The ruleset handles the filesystem accesses of Landlock ABI 5, as dsh's launcher does,
//!   best effort: on an older kernel it is enforced for what the kernel knows and the run
//!   prints `landlock-run: partial enforcement (older Landlock ABI)` on stderr first.
//! - The process enters its working directory again by path once the carve-outs are
//!   mounted (the one it inherited lies beneath them), restricts itself (`no_new_privs` is
//!   set), marks every inherited descriptor above 2 close-on-exec, and `exec`s the command,
//!   so the command and all its descendants are confined and inherit nothing else. Every failure prints one `landlock-run: <detail>`
//!   line on stderr and exits 125 without running the command.
//! - `--probe` enforces a ruleset in this short-lived process and prints
//!   `landlock: fully enforced` or `landlock: partially enforced (older ABI)` on stdout
//!   (exit 0), or fails (exit 125).
//!
//! The process must be single-threaded when [`sandbox_run_main`] runs: Landlock, seccomp
//! and the namespaces apply to the calling thread, which then `exec`s.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use crate::carve::NamespaceMode;
use crate::confine::{Confinement, Enforced, probe};

/// The exit status of every runner failure (the command did not run).
pub const LAUNCHER_FAILURE_EXIT: i32 = 125;

/// The prefix of every line the runner itself prints on stderr.
pub const RUNNER_LINE_PREFIX: &str = "landlock-run: ";

/// The informational stderr line of a run under an older Landlock ABI.
pub const PARTIAL_ENFORCEMENT_LINE: &str = "landlock-run: partial enforcement (older Landlock ABI)";

/// The probe's stdout line when every handled access is enforced.
pub const PROBE_FULL_LINE: &str = "landlock: fully enforced";

/// The probe's stdout line when an older ABI enforces only some of the handled accesses.
pub const PROBE_PARTIAL_LINE: &str = "landlock: partially enforced (older ABI)";

pub use crate::confine::NOT_ENFORCED_MESSAGE;

/// What the runner was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Check that Landlock can be enforced here.
    Probe,
    /// Confine this process with `grants`, then exec `command`.
    Run {
        /// The filesystem grants and the network choice.
        grants: Grants,
        /// The status channel's descriptor.
        status_fd: Option<i32>,
        /// The harness's process id.
        parent_pid: Option<i32>,
        /// The command's argv (non-empty).
        command: Vec<OsString>,
    },
}

/// The confinement of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Read and execute beneath each path.
    pub read_only: Vec<PathBuf>,
    /// Every handled access beneath each path.
    pub read_write: Vec<PathBuf>,
    /// Kept read-only inside the `read_write` paths.
    pub protect: Vec<PathBuf>,
    /// Refuse non-`AF_UNIX` sockets.
    pub deny_network: bool,
}

impl Grants {
    fn confinement(&self) -> Confinement {
        Confinement {
            read_only: self.read_only.clone(),
            read_write: self.read_write.clone(),
            carve_outs: self.protect.clone(),
            deny_network: self.deny_network,
            fenced_ports: Vec::new(),
            scope_signals: false,
            confine_files: true,
            drop_powers: true,
            guard_harness: false,
        }
    }
}

/// Parses the runner's arguments (everything after the program name, or after
/// `__sandbox-run` in `dsh __sandbox-run …`). The error is the detail of a usage failure.
pub fn parse_args(args: &[OsString]) -> Result<Invocation, String> {
    let mut grants = Grants::default();
    let mut status_fd = None;
    let mut parent_pid = None;
    let mut probe = false;
    let mut iter = args.iter();
    let mut command = None;
    while let Some(arg) = iter.next() {
        match arg.to_str() {
            Some("--probe") => {
                if args.len() != 1 {
                    return Err("usage error: --probe takes no other arguments".to_owned());
                }
                probe = true;
            }
            Some(flag @ ("--ro" | "--rw" | "--protect")) => {
                let path = iter
                    .next()
                    .filter(|path| !path.is_empty())
                    .ok_or_else(|| format!("usage error: {flag} requires a path"))?;
                let list = match flag {
                    "--ro" => &mut grants.read_only,
                    "--rw" => &mut grants.read_write,
                    _ => &mut grants.protect,
                };
                list.push(PathBuf::from(path));
            }
            Some("--status-fd") => {
                let number = iter
                    .next()
                    .and_then(|value| value.to_str())
                    .and_then(|value| value.parse::<i32>().ok())
                    .filter(|fd| *fd > 2)
                    .ok_or_else(|| {
                        "usage error: --status-fd requires a descriptor number above 2".to_owned()
                    })?;
                status_fd = Some(number);
            }
            Some("--parent-pid") => {
                let number = iter
                    .next()
                    .and_then(|value| value.to_str())
                    .and_then(|value| value.parse::<i32>().ok())
                    .filter(|pid| *pid > 0)
                    .ok_or_else(|| "usage error: --parent-pid requires a process id".to_owned())?;
                parent_pid = Some(number);
            }
            Some("--deny-network") => grants.deny_network = true,
            Some("--") => {
                command = Some(iter.cloned().collect::<Vec<_>>());
                break;
            }
            _ => {
                return Err(format!(
                    "usage error: unknown argument: {}",
                    arg.to_string_lossy()
                ));
            }
        }
    }
    if probe {
        return Ok(Invocation::Probe);
    }
    match command {
        Some(command) if command.first().is_some_and(|program| !program.is_empty()) => {
            Ok(Invocation::Run {
                grants,
                status_fd,
                parent_pid,
                command,
            })
        }
        _ => Err("usage error: missing `-- <argv>...` command".to_owned()),
    }
}

/// The runner's entry point: parses `args` (without the program name), confines this
/// process and `exec`s the command. Returns only on failure (125, after one
/// `landlock-run: ` line on stderr) or after a probe (0 or 125).
pub fn sandbox_run_main(args: &[OsString]) -> i32 {
    let invocation = match parse_args(args) {
        Ok(invocation) => invocation,
        Err(detail) => return fail(&detail, None),
    };
    match invocation {
        Invocation::Probe => match probe() {
            Ok(support) => {
                let line = match support.enforced {
                    Enforced::Full => PROBE_FULL_LINE,
                    Enforced::Partial => PROBE_PARTIAL_LINE,
                };
                let mut stdout = std::io::stdout().lock();
                if writeln!(stdout, "{line}")
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    return LAUNCHER_FAILURE_EXIT;
                }
                0
            }
            Err(detail) => fail(&detail, None),
        },
        Invocation::Run {
            grants,
            status_fd,
            parent_pid,
            command,
        } => run(&grants, status_fd, parent_pid, &command),
    }
}

fn run(
    grants: &Grants,
    status_fd: Option<i32>,
    parent_pid: Option<i32>,
    command: &[OsString],
) -> i32 {
    // The channel is reopened as a file of our own (close-on-exec, like everything Rust
    // opens), then every inherited descriptor above 2, the channel's number among them, is
    // marked close-on-exec: the command inherits none of them.
    let mut status = status_fd.and_then(|fd| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/self/fd/{fd}"))
            .ok()
    });
    dsh_shell::mark_inherited_close_on_exec(3);
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    // A harness that died before the line above sent no signal: it is no parent any more.
    if parent_pid.is_some_and(|pid| nix::unistd::getppid().as_raw() != pid) {
        return fail(
            "the harness is gone; not running the command",
            status.as_mut(),
        );
    }
    let mode = if nix::unistd::geteuid().is_root() {
        NamespaceMode::MountOnly
    } else {
        NamespaceMode::WithUser
    };
    // The working directory was entered before the carve-outs were mounted, so it still
    // refers to what lay beneath them: entered again by its path once they are in place,
    // or a relative path would write past a read-only carve-out.
    let directory = match std::env::current_dir() {
        Ok(directory) => directory,
        Err(error) => {
            return fail(
                &format!("cannot tell the working directory: {error}"),
                status.as_mut(),
            );
        }
    };
    let enforced = match grants.confinement().apply(mode, None) {
        Ok(enforced) => enforced,
        Err(detail) => return fail(&detail, status.as_mut()),
    };
    if let Err(error) = std::env::set_current_dir(&directory) {
        return fail(
            &format!(
                "cannot enter the working directory {}: {error}",
                directory.display()
            ),
            status.as_mut(),
        );
    }
    if enforced == Enforced::Partial {
        let _ = writeln!(std::io::stderr().lock(), "{PARTIAL_ENFORCEMENT_LINE}");
    }
    let Some((program, args)) = command.split_first() else {
        return fail(
            "usage error: missing `-- <argv>...` command",
            status.as_mut(),
        );
    };
    // A booted dsh turns transparent huge pages off for itself (see apps/dsh's `run`); the
    // command gets the system's setting back.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(false);
    let error = Command::new(program).args(args).exec();
    fail(
        &format!("exec failed: {}: {error}", program.to_string_lossy()),
        status.as_mut(),
    )
}

/// Prints `landlock-run: <detail>` on stderr, writes `detail` on the status channel, and
/// returns the failure exit status.
fn fail(detail: &str, status: Option<&mut File>) -> i32 {
    let _ = writeln!(std::io::stderr().lock(), "{RUNNER_LINE_PREFIX}{detail}");
    if let Some(status) = status {
        let _ = writeln!(status, "{detail}");
    }
    LAUNCHER_FAILURE_EXIT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_grants_network_and_command() {
        let parsed = parse_args(&args(&[
            "--ro",
            "/",
            "--rw",
            "/dev/null",
            "--rw",
            "/tmp",
            "--protect",
            "/tmp/home",
            "--deny-network",
            "--status-fd",
            "7",
            "--parent-pid",
            "42",
            "--",
            "bash",
            "-c",
            "echo --ro",
        ]))
        .unwrap();
        assert_eq!(
            parsed,
            Invocation::Run {
                grants: Grants {
                    read_only: vec![PathBuf::from("/")],
                    read_write: vec![PathBuf::from("/dev/null"), PathBuf::from("/tmp")],
                    protect: vec![PathBuf::from("/tmp/home")],
                    deny_network: true,
                },
                status_fd: Some(7),
                parent_pid: Some(42),
                command: args(&["bash", "-c", "echo --ro"]),
            }
        );
        assert_eq!(parse_args(&args(&["--probe"])).unwrap(), Invocation::Probe);
    }

    #[test]
    fn refuses_bad_usage_with_dshs_details() {
        for (list, detail) in [
            (
                &["--probe", "--ro", "/"][..],
                "usage error: --probe takes no other arguments",
            ),
            (&["--ro"], "usage error: --ro requires a path"),
            (&["--rw", ""], "usage error: --rw requires a path"),
            (&["--protect"], "usage error: --protect requires a path"),
            (
                &["--status-fd", "1", "--", "true"],
                "usage error: --status-fd requires a descriptor number above 2",
            ),
            (
                &["--parent-pid", "x", "--", "true"],
                "usage error: --parent-pid requires a process id",
            ),
            (&["--bogus"], "usage error: unknown argument: --bogus"),
            (
                &["--ro", "/"],
                "usage error: missing `-- <argv>...` command",
            ),
            (&["--"], "usage error: missing `-- <argv>...` command"),
            (&[], "usage error: missing `-- <argv>...` command"),
        ] {
            assert_eq!(parse_args(&args(list)).unwrap_err(), detail, "{list:?}");
        }
    }
}
