//! The sandbox runner: dsh's `landlock-run` launcher, reimplemented over the `landlock` and
//! `seccompiler` crates and run as a re-exec of the harness binary (`dsh __sandbox-run …`).
//!
//! ```text
//! <runner> [--ro <path>]… [--rw <path>]… [--deny-network] -- <argv>…
//! <runner> --probe
//! ```
//!
//! - `--ro <path>` grants read and execute beneath `<path>`; `--rw <path>` grants every
//!   filesystem access the ruleset handles beneath it (a file keeps only the accesses that
//!   apply to files, which is how `--rw /dev/null` works). Everything else is denied.
//! - `--deny-network` installs a seccomp filter: `socket(2)` with a domain other than
//!   `AF_UNIX` fails with `EPERM` (and so does `io_uring_setup(2)`, which could open sockets
//!   past the filter).
//! - The ruleset handles the filesystem accesses of Landlock ABI 5, as dsh's launcher does,
//!   best effort: on an older kernel it is enforced for what the kernel knows and the run
//!   prints `landlock-run: partial enforcement (older Landlock ABI)` on stderr first.
//! - The process restricts itself (`no_new_privs` is set), then `exec`s the command, so the
//!   command and all its descendants are confined. Every failure prints one
//!   `landlock-run: <detail>` line on stderr and exits 125 without running the command.
//! - `--probe` enforces a ruleset in this short-lived process and prints
//!   `landlock: fully enforced` or `landlock: partially enforced (older ABI)` on stdout
//!   (exit 0), or fails (exit 125).
//!
//! The process must be single-threaded when [`sandbox_run_main`] runs: Landlock and seccomp
//! restrict the calling thread, which then `exec`s.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

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

/// The failure detail when the kernel enforces no Landlock ruleset.
pub const NOT_ENFORCED_MESSAGE: &str =
    "landlock is not enforced by this kernel (ABI unsupported or disabled)";

/// The Landlock ABI whose filesystem accesses the ruleset handles: dsh's launcher's `MAX_ABI`
/// (ABI 5 added device ioctls; ABIs 6 to 8 add no filesystem access). A kernel below it
/// enforces a subset: partial enforcement.
const HANDLED_ABI: ABI = ABI::V5;

/// How completely the kernel enforced the ruleset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Enforced {
    /// Every handled access is enforced.
    Full,
    /// An older ABI enforces only some of the handled accesses.
    Partial,
}

/// What the runner was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Check that Landlock can be enforced here.
    Probe,
    /// Confine this process with `grants`, then exec `command`.
    Run {
        /// The filesystem grants and the network choice.
        grants: Grants,
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
    /// Refuse non-`AF_UNIX` sockets.
    pub deny_network: bool,
}

/// Parses the runner's arguments (everything after the program name, or after
/// `__sandbox-run` in `dsh __sandbox-run …`). The error is the detail of a usage failure.
pub fn parse_args(args: &[OsString]) -> Result<Invocation, String> {
    let mut grants = Grants::default();
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
            Some(flag @ ("--ro" | "--rw")) => {
                let Some(path) = iter.next() else {
                    return Err(format!("usage error: {flag} requires a path"));
                };
                if path.is_empty() {
                    return Err(format!("usage error: {flag} requires a path"));
                }
                let list = if flag == "--ro" {
                    &mut grants.read_only
                } else {
                    &mut grants.read_write
                };
                list.push(PathBuf::from(path));
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
            Ok(Invocation::Run { grants, command })
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
        Err(detail) => return fail(&detail),
    };
    match invocation {
        Invocation::Probe => {
            let root = [PathBuf::from("/")];
            match restrict_self(&root, &[]) {
                Ok(enforced) => {
                    let line = match enforced {
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
                Err(detail) => fail(&detail),
            }
        }
        Invocation::Run { grants, command } => run(&grants, &command),
    }
}

fn run(grants: &Grants, command: &[OsString]) -> i32 {
    let enforced = match restrict_self(&grants.read_only, &grants.read_write) {
        Ok(enforced) => enforced,
        Err(detail) => return fail(&detail),
    };
    if grants.deny_network
        && let Err(detail) = deny_network()
    {
        return fail(&detail);
    }
    if enforced == Enforced::Partial {
        let _ = writeln!(std::io::stderr().lock(), "{PARTIAL_ENFORCEMENT_LINE}");
    }
    let Some((program, args)) = command.split_first() else {
        return fail("usage error: missing `-- <argv>...` command");
    };
    // A booted dsh turns transparent huge pages off for itself (see apps/dsh's `run`); the
    // command gets the system's setting back.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(false);
    let error = Command::new(program).args(args).exec();
    fail(&format!(
        "exec failed: {}: {error}",
        program.to_string_lossy()
    ))
}

/// Prints `landlock-run: <detail>` on stderr and returns the failure exit status.
fn fail(detail: &str) -> i32 {
    let _ = writeln!(std::io::stderr().lock(), "{RUNNER_LINE_PREFIX}{detail}");
    LAUNCHER_FAILURE_EXIT
}

/// Installs the ruleset on the calling thread (and sets `no_new_privs`).
fn restrict_self(read_only: &[PathBuf], read_write: &[PathBuf]) -> Result<Enforced, String> {
    let handled = AccessFs::from_all(HANDLED_ABI);
    let ruleset_error = |error: landlock::RulesetError| format!("landlock ruleset error: {error}");
    let mut ruleset = Ruleset::default()
        .handle_access(handled)
        .map_err(ruleset_error)?
        .create()
        .map_err(ruleset_error)?;
    let read = AccessFs::from_read(HANDLED_ABI);
    let grants = read_only
        .iter()
        .map(|path| (path, read))
        .chain(read_write.iter().map(|path| (path, handled)));
    for (path, access) in grants {
        ruleset = ruleset
            .add_rule(path_rule(path, access)?)
            .map_err(ruleset_error)?;
    }
    let status = ruleset.restrict_self().map_err(ruleset_error)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Enforced::Full),
        RulesetStatus::PartiallyEnforced => Ok(Enforced::Partial),
        RulesetStatus::NotEnforced => Err(NOT_ENFORCED_MESSAGE.to_owned()),
    }
}

/// A rule granting `access` beneath `path`; a grant on a non-directory keeps only the
/// accesses that apply to files. An unopenable path fails the run (never a narrower
/// profile than asked for, never a silent skip).
fn path_rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, String> {
    let cannot_open = |error: &dyn std::fmt::Display| {
        format!("cannot open rule path: {}: {error}", path.display())
    };
    let metadata = std::fs::metadata(path).map_err(|error| cannot_open(&error))?;
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(HANDLED_ABI)
    };
    let fd = PathFd::new(path).map_err(|error| cannot_open(&error))?;
    Ok(PathBeneath::new(fd, access))
}

/// The seccomp program of `--deny-network`: `socket(domain != AF_UNIX, …)` and
/// `io_uring_setup` fail with `EPERM`; everything else is allowed. A process of another
/// architecture than this build's is killed by the filter's architecture check.
pub fn network_filter() -> Result<BpfProgram, String> {
    fn error(error: impl std::fmt::Display) -> String {
        format!("cannot build the network filter: {error}")
    }
    let unix = u64::try_from(libc::AF_UNIX).map_err(error)?;
    let eperm = u32::try_from(libc::EPERM).map_err(error)?;
    let not_unix =
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix).map_err(error)?;
    let rules = BTreeMap::from([
        (
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(error)?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]);
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(error)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eperm),
        arch,
    )
    .map_err(error)?;
    BpfProgram::try_from(filter).map_err(error)
}

fn deny_network() -> Result<(), String> {
    let program = network_filter()?;
    seccompiler::apply_filter(&program)
        .map_err(|error| format!("cannot install the network filter: {error}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
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
            "--deny-network",
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
                    deny_network: true,
                },
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

    #[test]
    fn the_network_filter_compiles() {
        let program = network_filter().unwrap();
        assert!(!program.is_empty());
    }
}
