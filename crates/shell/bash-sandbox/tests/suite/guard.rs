//! What no confined command may do to the harness, or past its path rules, whichever route
//! launched it: aim a signal at a launch thread by proxy (`SIGIO`), change the harness's
//! limits or scheduling, or open a file by handle instead of by path.

use std::sync::Arc;

use dsh_shell::{NetworkPolicy, ProtectedPath, SandboxMode, SandboxProtection, ShellExecutor};

use super::support::{Fixture, bash, options, outside_dir, policy, run_in, runner, thread_options};

/// Both strategies over `standing`, each with its launch thread's name.
fn strategies(
    standing: &dsh_shell::SandboxExecutionPolicy,
) -> Vec<(&'static str, &'static str, Fixture, tempfile::TempDir)> {
    [
        ("thread", "dsh-confined", thread_options()),
        ("runner", "dsh-confine-base", options(runner())),
    ]
    .into_iter()
    .map(|(name, thread, options)| {
        let (bash, spill) = bash();
        let executor = Arc::new(
            dsh_bash_sandbox::SandboxBashExecutor::new(
                bash,
                Arc::new(dsh_bash_sandbox::FixedPolicy(standing.clone())),
                options,
            )
            .with_protection(SandboxProtection::new()),
        );
        let shell: Arc<dyn ShellExecutor> = Arc::clone(&executor) as Arc<dyn ShellExecutor>;
        (name, thread, Fixture::new(executor, shell), spill)
    })
    .collect()
}

/// This process's threads named `name` (as the kernel keeps it: at most 15 bytes).
fn threads_named(name: &str) -> Vec<u32> {
    let name = name.get(..15).unwrap_or(name);
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let comm = std::fs::read_to_string(path.join("comm")).ok()?;
            (comm.trim() == name).then(|| path.file_name()?.to_str()?.parse().ok())?
        })
        .collect()
}

/// A Python prologue: `attempt(name, f)` prints `<name> done` or `<name> refused <errno>`.
const ATTEMPT: &str = r#"import errno, fcntl, os, resource, socket, struct
def attempt(name, call):
    try:
        call()
        print(name, "done")
    except OSError as error:
        print(name, "refused", error.errno)
"#;

fn python(body: &str) -> String {
    format!("python3 - <<'PY'\n{ATTEMPT}{body}\nPY")
}

fn assert_outcomes(strategy: &str, output: &str, expected: &[(&str, &str)]) {
    for (name, outcome) in expected {
        assert!(
            output
                .lines()
                .any(|line| line == format!("{name} {outcome}")),
            "{strategy}: {name} should be {outcome}: {output}"
        );
    }
}

#[tokio::test]
async fn no_signal_can_be_aimed_at_a_launch_thread_by_proxy() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let group = nix::unistd::getpgrp().as_raw();
    for (strategy, thread, fixture, _spill) in strategies(&standing) {
        // The first run builds the launch thread (and starts the orphan guard, which leads
        // a process group of its own).
        assert_eq!(
            run_in(&fixture, "true", &root, &[]).await.exit_code,
            Some(0)
        );
        let guard = dsh_shell::guard_pid().unwrap();
        let tids = threads_named(thread);
        assert!(!tids.is_empty(), "{strategy}: no launch thread");
        for tid in tids {
            // Owners only: nothing is made asynchronous, so no signal is ever sent.
            let body = format!(
                r#"r, w = os.pipe()
s = socket.socketpair()[0]
attempt("owner", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, {tid}))
attempt("owner-group", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -{group}))
attempt("owner-ex", lambda: fcntl.fcntl(r, 15, struct.pack("ii", 0, {tid})))
attempt("socket-owner", lambda: fcntl.ioctl(s, 0x8901, struct.pack("i", {tid})))
attempt("socket-group", lambda: fcntl.ioctl(s, 0x8902, struct.pack("i", {tid})))
attempt("owner-guard", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -{guard}))
attempt("signal-guard", lambda: os.killpg({guard}, 0))
attempt("own", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid()))"#
            );
            let result = run_in(&fixture, &python(&body), &root, &[]).await;
            assert_outcomes(
                strategy,
                &result.stdout.text,
                &[
                    ("owner", "refused 1"),
                    ("owner-group", "refused 1"),
                    ("owner-ex", "refused 1"),
                    ("socket-owner", "refused 1"),
                    ("socket-group", "refused 1"),
                    ("owner-guard", "refused 1"),
                    ("signal-guard", "refused 1"),
                    ("own", "done"),
                ],
            );
        }
    }
}

#[tokio::test]
async fn the_harness_s_limits_and_scheduling_are_out_of_its_commands_reach() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    for (strategy, thread, fixture, _spill) in strategies(&standing) {
        assert_eq!(
            run_in(&fixture, "true", &root, &[]).await.exit_code,
            Some(0)
        );
        let guard = dsh_shell::guard_pid().unwrap();
        let mut targets = vec![std::process::id(), guard];
        targets.extend(threads_named(thread));
        assert!(targets.len() >= 3, "{strategy}: {targets:?}");
        for target in targets {
            // Each change restates the present value, so one that got through would still
            // change nothing; only whether it was refused is checked.
            let body = format!(
                r#"t = {target}
attempt("limit", lambda: resource.prlimit(t, resource.RLIMIT_CORE, resource.prlimit(t, resource.RLIMIT_CORE)))
attempt("own-limit", lambda: resource.prlimit(0, resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE)))
attempt("read-limit", lambda: resource.prlimit(t, resource.RLIMIT_CORE))
attempt("nice", lambda: os.setpriority(os.PRIO_PROCESS, t, os.getpriority(os.PRIO_PROCESS, t)))
attempt("nice-user", lambda: os.setpriority(os.PRIO_USER, 0, os.getpriority(os.PRIO_PROCESS, 0)))
attempt("nice-guard-group", lambda: os.setpriority(os.PRIO_PGRP, {guard}, os.getpriority(os.PRIO_PGRP, {guard})))
attempt("own-nice", lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0)))
attempt("affinity", lambda: os.sched_setaffinity(t, os.sched_getaffinity(t)))
attempt("scheduler", lambda: os.sched_setscheduler(t, os.sched_getscheduler(t), os.sched_getparam(t)))
attempt("own-affinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))"#
            );
            let result = run_in(&fixture, &python(&body), &root, &[]).await;
            assert_outcomes(
                strategy,
                &result.stdout.text,
                &[
                    ("limit", "refused 1"),
                    ("own-limit", "done"),
                    ("read-limit", "done"),
                    ("nice", "refused 1"),
                    ("nice-user", "refused 1"),
                    ("nice-guard-group", "refused 1"),
                    ("own-nice", "done"),
                    ("affinity", "refused 1"),
                    ("scheduler", "refused 1"),
                    ("own-affinity", "done"),
                ],
            );
        }
    }
}

#[tokio::test]
async fn no_file_is_opened_by_handle_past_the_path_rules() {
    let (_workspace, root) = outside_dir();
    let (_elsewhere, outside) = outside_dir();
    // A protected path two levels down: the directory between it and the workspace is
    // pinned by a bind mount, whose descriptor once served `open_by_handle_at`.
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    let mut standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    standing.protected_paths = vec![ProtectedPath::new(root.join(".git/hooks"), "hooks")];
    for (strategy, _, fixture, _spill) in strategies(&standing) {
        let body = format!(
            r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
struct.pack_into("I", handle, 0, 128)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, b"{outside}", handle, ctypes.byref(mount_id), 0) != 0:
    print("no handle", ctypes.get_errno())
mount = os.open("{root}/.git", os.O_RDONLY)
fd = libc.open_by_handle_at(mount, handle, os.O_RDONLY | os.O_DIRECTORY)
print("open", "refused" if fd < 0 else "done", ctypes.get_errno() if fd < 0 else 0)
if fd >= 0:
    attempt("plant", lambda: os.close(os.open("planted", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)))"#,
            outside = outside.display(),
            root = root.display(),
        );
        let result = run_in(&fixture, &python(&body), &root, &[]).await;
        assert_outcomes(strategy, &result.stdout.text, &[("open", "refused 1")]);
        assert!(!outside.join("planted").exists(), "{strategy}: {result:?}");
    }
}

#[tokio::test]
#[cfg(target_arch = "x86_64")]
async fn x32_system_calls_are_refused_before_any_rule() {
    // An x32 call carries the x86_64 architecture and its own numbers, which no rule names;
    // refused by the filter it fails with EPERM, where the kernel itself would say ENOSYS
    // (x32 off) or run it (x32 on).
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Deny);
    let body = r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
getpid_x32 = 0x40000000 + 39
print("x32", libc.syscall(getpid_x32), ctypes.get_errno())
print("x86_64", "done" if libc.syscall(39) > 0 else "refused")"#;
    for (strategy, _, fixture, _spill) in strategies(&standing) {
        let result = run_in(&fixture, &python(body), &root, &[]).await;
        assert_outcomes(
            strategy,
            &result.stdout.text,
            &[("x32", "-1 1"), ("x86_64", "done")],
        );
    }
}
