//! The argv and confinement each backend wraps a command in.

use std::path::PathBuf;

use dsh_shell::{
    NetworkPolicy, STATUS_FD_PLACEHOLDER, SandboxExecutionPolicy, SandboxMode, ShellError,
    WritePlan, bash_argv,
};

use super::path_arg;
use crate::carve::pinned_ancestors;
use crate::confine::{Confinement, LandlockSupport};

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
