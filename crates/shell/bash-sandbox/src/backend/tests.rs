//! The profiles, probes and backend dialects.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dsh_shell::{
    NetworkPolicy, ProtectedPath, STATUS_FD_PLACEHOLDER, SandboxExecutionPolicy, SandboxMode,
    WritePlan, root_owned_and_locked,
};

use super::*;
use crate::confine::{Enforced, LandlockSupport};

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
        assert!(
            dsh_shell::SYSTEM_PROGRAM_DIRS.iter().any(|dir| {
                std::fs::canonicalize(Path::new(dir).join("bwrap"))
                    .is_ok_and(|resolved| resolved == found)
            }),
            "{}",
            found.display()
        );
        assert!(root_owned_and_locked(&found));
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
    let partial = fake("[ \"$1\" = --probe ] && echo 'landlock: partially enforced (older ABI)'");
    assert_eq!(probe_runner(&partial, timeout), Some(Enforcement::Partial));
    assert_eq!(
        probe_runner(&fake("echo anything"), timeout),
        Some(Enforcement::Full)
    );
    assert_eq!(probe_runner(&fake("exit 125"), timeout), None);
}
