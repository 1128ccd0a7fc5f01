//! What the harness keeps from confined commands even inside their writable roots: its own
//! files (carve-outs), its own server's port (the fence), its own process (signals), and
//! every descriptor it holds.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::Duration;

use dsh_bash_sandbox::SandboxBashExecutor;
use dsh_shell::{
    NetworkPolicy, ProtectedPath, SandboxMode, SandboxProtection, ShellExecRequest, ShellExecutor,
};

use super::support::{
    Fixture, bash, options, outside_dir, policy, run, run_in, runner, shell_quote, thread_options,
};

/// Both strategies, each with `protection` registered.
fn fenced(
    standing: &dsh_shell::SandboxExecutionPolicy,
    protection: &Arc<SandboxProtection>,
) -> Vec<(&'static str, Fixture, tempfile::TempDir)> {
    [("thread", thread_options()), ("runner", options(runner()))]
        .into_iter()
        .map(|(name, options)| {
            let (bash, spill) = bash();
            let executor = Arc::new(
                SandboxBashExecutor::new(
                    bash,
                    Arc::new(dsh_bash_sandbox::FixedPolicy(standing.clone())),
                    options,
                )
                .with_protection(Arc::clone(protection)),
            );
            let shell: Arc<dyn ShellExecutor> = Arc::clone(&executor) as Arc<dyn ShellExecutor>;
            (name, Fixture::new(executor, shell), spill)
        })
        .collect()
}

#[tokio::test]
async fn a_protected_path_inside_the_workspace_stays_read_only() {
    let (_workspace, root) = outside_dir();
    let home = root.join(".dsh");
    std::fs::create_dir_all(home.join("profiles")).unwrap();
    std::fs::write(home.join("cordis.patch.yml"), "[]\n").unwrap();
    let mut standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    standing.protected_paths = vec![ProtectedPath::new(&home, "dsh's home ($DSH_HOME)")];
    let protection = SandboxProtection::new();
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        for command in [
            "echo '- id: x' >> .dsh/cordis.patch.yml",
            "touch .dsh/profiles/planted.yml",
            "rm -rf .dsh",
            "mv .dsh .dsh-moved",
            "mkdir .dsh/new",
        ] {
            let result = run_in(&fixture, command, &root, &[]).await;
            assert_ne!(
                result.exit_code,
                Some(0),
                "{strategy}: {command}: {result:?}"
            );
            let denied = result
                .sandbox
                .as_ref()
                .is_some_and(|sandbox| sandbox.denied);
            assert!(denied, "{strategy}: {command}: {}", result.stderr.text);
        }
        assert_eq!(
            std::fs::read_to_string(home.join("cordis.patch.yml")).unwrap(),
            "[]\n",
            "{strategy}"
        );
        assert!(!home.join("profiles/planted.yml").exists(), "{strategy}");
        // The rest of the workspace stays writable, and the protected files readable.
        let result = run_in(
            &fixture,
            "echo ok > beside.txt && cat .dsh/cordis.patch.yml",
            &root,
            &[],
        )
        .await;
        assert_eq!(result.exit_code, Some(0), "{strategy}: {result:?}");
        assert_eq!(result.stdout.text, "[]\n", "{strategy}");
        std::fs::remove_file(root.join("beside.txt")).unwrap();
    }
}

#[tokio::test]
async fn the_spill_directory_of_other_sessions_is_read_only() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let protection = SandboxProtection::new();
    for (strategy, fixture, spill) in fenced(&standing, &protection) {
        let planted = spill
            .path()
            .join("dsh-subprocess-1-1-000000000000-stdout.log");
        std::fs::write(&planted, "real output\n").unwrap();
        let command = format!("echo forged > {}", shell_quote(&planted));
        let result = run_in(&fixture, &command, &root, &[]).await;
        let denied = result
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.denied);
        assert!(denied, "{strategy}: {result:?}");
        assert_eq!(
            std::fs::read_to_string(&planted).unwrap(),
            "real output\n",
            "{strategy}"
        );
    }
}

#[tokio::test]
async fn a_fenced_port_cannot_be_reached_while_other_ports_can() {
    let (_workspace, root) = outside_dir();
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (host_port, other_port) = (
        host.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let protection = SandboxProtection::new();
    let fence = protection.fence_port(host_port);
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let connect = |port: u16| format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let result = run_in(&fixture, &connect(host_port), &root, &[]).await;
        assert_ne!(result.exit_code, Some(0), "{strategy}: {result:?}");
        assert!(
            result.stderr.text.contains("Permission denied"),
            "{strategy}: {}",
            result.stderr.text
        );
        let result = run_in(&fixture, &connect(other_port), &root, &[]).await;
        assert_eq!(result.stdout.text, "connected\n", "{strategy}: {result:?}");
    }
    drop(fence);
    // Released, the port is reachable again (a new confinement is built).
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let result = run_in(&fixture, &connect(host_port), &root, &[]).await;
        assert_eq!(result.stdout.text, "connected\n", "{strategy}: {result:?}");
    }
}

#[tokio::test]
async fn signals_reach_the_command_s_own_processes_only() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let protection = SandboxProtection::new();
    let harness = std::process::id();
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let command = format!(
            "kill -0 {harness} 2>/dev/null && echo harness-reachable; \
             sleep 30 & kill $! && echo own-child-killed"
        );
        let result = run_in(&fixture, &command, &root, &[]).await;
        assert_eq!(
            result.stdout.text, "own-child-killed\n",
            "{strategy}: {result:?}"
        );
    }
    // A background job of one call can be stopped by a later call of the same confinement.
    let (_, fixture, _spill) = fenced(&standing, &protection).swap_remove(0);
    let spec = fixture
        .shell
        .resolve(ShellExecRequest {
            workdir: Some(root.clone()),
            ..ShellExecRequest::new("echo $$ > server.pid; exec sleep 30")
        })
        .unwrap();
    let server = fixture.shell.start(spec).unwrap();
    let pid_file = root.join("server.pid");
    let written = super::support::eventually(|| pid_file.exists()).await;
    assert!(written, "{:?} {:?}", server.read_output(), server.status());
    let result = run_in(
        &fixture,
        "kill \"$(cat server.pid)\" && echo stopped",
        &root,
        &[],
    )
    .await;
    assert_eq!(result.stdout.text, "stopped\n", "{result:?}");
    super::support::settle(&server).await;
}

#[tokio::test]
async fn inherited_descriptors_never_reach_a_command() {
    let (_workspace, root) = outside_dir();
    let (_outside, outside) = outside_dir();
    let target = outside.join("written-through-fd");
    let file = std::fs::File::create(&target).unwrap();
    // `dup` gives a descriptor without close-on-exec, as a caller's `9>>file` would.
    let leaked = nix::unistd::dup(file.as_fd()).unwrap();
    let number = leaked.as_raw_fd();
    let command = format!("echo x >&{number}; echo status=$?");
    for mode in [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ] {
        let standing = policy(mode, &root, NetworkPolicy::Allow);
        let protection = SandboxProtection::new();
        for (strategy, fixture, _spill) in fenced(&standing, &protection) {
            let result = run_in(&fixture, &command, &root, &[]).await;
            assert_eq!(
                result.stdout.text, "status=1\n",
                "{strategy} {mode:?}: {result:?}"
            );
            assert!(
                result.stderr.text.contains("Bad file descriptor"),
                "{strategy} {mode:?}: {}",
                result.stderr.text
            );
        }
    }
    let mut written = String::new();
    std::fs::File::open(&target)
        .unwrap()
        .read_to_string(&mut written)
        .unwrap();
    assert_eq!(written, "", "nothing went through the inherited descriptor");
    drop(leaked);
}

/// A listener that is never accepted from, and a registry fencing its port.
fn fenced_host() -> (
    TcpListener,
    u16,
    Arc<SandboxProtection>,
    dsh_shell::Protection,
) {
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let protection = SandboxProtection::new();
    let fence = protection.fence_port(port);
    (host, port, protection, fence)
}

#[tokio::test]
async fn read_only_commands_cannot_connect_to_a_fenced_port_either() {
    let (_workspace, root) = outside_dir();
    let (host, port, protection, _fence) = fenced_host();
    let standing = policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow);
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
        let result = run(
            &fixture,
            ShellExecRequest {
                workdir: Some(root.clone()),
                timeout_ms: Some(10_000.0),
                ..ShellExecRequest::new(command)
            },
        )
        .await
        .unwrap();
        assert_eq!(result.stdout.text, "", "{strategy}: {result:?}");
    }
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        host.accept().is_err(),
        "no connection reached the fenced port"
    );
    // The harness itself still can.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(b"x").unwrap();
}

#[tokio::test]
async fn no_device_node_can_be_made_in_a_writable_root() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let protection = SandboxProtection::new();
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        // As root this would be the raw disk behind /dev/sda, writable from the workspace.
        let result = run_in(
            &fixture,
            "mknod disk b 8 0; echo block=$?; mknod tty c 5 0; echo char=$?; mkfifo pipe && echo fifo=0",
            &root,
            &[],
        )
        .await;
        assert!(
            result.stdout.text.contains("block=1"),
            "{strategy}: {result:?}"
        );
        assert!(
            result.stdout.text.contains("char=1"),
            "{strategy}: {result:?}"
        );
        assert!(
            result.stdout.text.contains("fifo=0"),
            "{strategy}: {result:?}"
        );
        assert!(
            !root.join("disk").exists() && !root.join("tty").exists(),
            "{strategy}"
        );
        std::fs::remove_file(root.join("pipe")).unwrap();
    }
}

/// The launch thread a held confinement lives on, found among this process's threads.
fn launch_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let comm = std::fs::read_to_string(path.join("comm")).ok()?;
            (comm.trim() == "dsh-confined")
                .then(|| path.file_name()?.to_str().map(str::to_owned))?
        })
        .collect()
}

#[tokio::test]
async fn the_launch_thread_a_command_shares_its_domain_with_is_out_of_its_reach() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let protection = SandboxProtection::new();
    let (_, fixture, _spill) = fenced(&standing, &protection).swap_remove(0);
    // The first run builds the launch thread.
    let warm = run_in(&fixture, "true", &root, &[]).await;
    assert_eq!(warm.exit_code, Some(0));
    let threads = launch_threads();
    assert!(!threads.is_empty(), "no launch thread found");
    let harness = std::process::id();
    // A mapped address of ours (our heap), where a read of our memory would succeed.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mapped = maps
        .lines()
        .find(|line| line.ends_with("[heap]"))
        .or_else(|| maps.lines().next())
        .and_then(|line| line.split('-').next())
        .map(|start| u64::from_str_radix(start, 16).unwrap())
        .unwrap();
    for tid in threads {
        let command = format!(
            "kill -0 {tid} 2>/dev/null && echo signalled-thread; \
             kill -0 {harness} 2>/dev/null && echo signalled-harness; \
             kill -0 -1 2>/dev/null && echo signalled-everyone; \
             dd if=/proc/{harness}/task/{tid}/mem bs=1 skip={mapped} count=1 status=none \
             2>/dev/null | wc -c | grep -q 1 && echo read-memory; \
             ls -l /proc/{harness}/task/{tid}/fd/ 2>/dev/null | grep -q -- '->' && echo saw-fds; \
             grep CapEff /proc/self/status"
        );
        let result = run_in(&fixture, &command, &root, &[]).await;
        for reached in [
            "signalled-thread",
            "signalled-harness",
            "signalled-everyone",
            "read-memory",
            "saw-fds",
        ] {
            assert!(
                !result.stdout.text.contains(reached),
                "{reached}: {result:?}"
            );
        }
        let effective = result
            .stdout
            .text
            .lines()
            .find_map(|line| line.strip_prefix("CapEff:"))
            .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
            .unwrap();
        for (cap, name) in dsh_bash_sandbox::DROPPED_CAPABILITIES {
            assert_eq!(effective & (1 << cap), 0, "{name} kept: {result:?}");
        }
    }
}

#[tokio::test]
async fn a_fenced_port_is_closed_to_mptcp_smc_fast_open_and_raw_sockets_too() {
    let (_workspace, root) = outside_dir();
    let (host, port, protection, _fence) = fenced_host();
    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let probe = format!(
        r#"python3 - <<'PY'
import socket
tries = {{
    "mptcp": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).connect(("127.0.0.1", {port})),
    "fastopen": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", {port})),
    "smc": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 256).connect(("127.0.0.1", {port})),
    "packet": lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0),
    "raw": lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
}}
for name, attempt in tries.items():
    try:
        attempt()
        print(name, "reached")
    except OSError as error:
        print(name, "refused", error.errno)
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
print("netlink opens")
PY"#
    );
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let result = run_in(&fixture, &probe, &root, &[]).await;
        // Netlink sockets are raw too, and `ip`, `ss` and `getifaddrs` need them.
        assert!(
            result.stdout.text.contains("netlink opens\n"),
            "{strategy}: {result:?}"
        );
        // Refused by the filter (EPERM), not by what this kernel happens to lack.
        for attempt in ["mptcp", "fastopen", "smc", "packet", "raw"] {
            assert!(
                result
                    .stdout
                    .text
                    .contains(&format!("{attempt} refused 1\n")),
                "{strategy}: {attempt}: {result:?}"
            );
        }
        assert!(
            !result.stdout.text.contains("reached"),
            "{strategy}: {result:?}"
        );
    }
    std::thread::sleep(Duration::from_millis(50));
    assert!(host.accept().is_err(), "nothing reached the fenced port");
}

#[tokio::test]
async fn a_carve_out_cannot_be_replaced_by_moving_a_directory_above_it() {
    let (_workspace, root) = outside_dir();
    let home = root.join("sub/deeper/.dsh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("cordis.patch.yml"), "[]\n").unwrap();
    let mut standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    standing.protected_paths = vec![ProtectedPath::new(&home, "dsh's home ($DSH_HOME)")];
    let protection = SandboxProtection::new();
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        let result = run_in(
            &fixture,
            "mv sub sub-old; echo sub=$?; mv sub/deeper sub/elsewhere; echo deeper=$?; \
             mkdir -p sub/deeper/.dsh 2>/dev/null; echo planted > sub/deeper/.dsh/cordis.patch.yml; \
             echo planted=$?",
            &root,
            &[],
        )
        .await;
        for refused in ["sub=1", "deeper=1", "planted=1"] {
            assert!(
                result.stdout.text.contains(refused),
                "{strategy}: {refused}: {result:?}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(home.join("cordis.patch.yml")).unwrap(),
            "[]\n",
            "{strategy}"
        );
        assert!(!root.join("sub-old").exists(), "{strategy}");
    }
}

#[tokio::test]
async fn a_workspace_replaced_by_a_link_is_refused() {
    let (_outer, outer) = outside_dir();
    let (_target, target) = outside_dir();
    let workspace = outer.join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let standing = policy(
        SandboxMode::WorkspaceWrite,
        &workspace,
        NetworkPolicy::Allow,
    );
    let protection = SandboxProtection::new();
    let (_, fixture, _spill) = fenced(&standing, &protection).swap_remove(0);
    assert_eq!(
        run_in(&fixture, "true", &outer, &[]).await.exit_code,
        Some(0)
    );
    // What a command able to write the directory above the workspace could do.
    std::fs::rename(&workspace, outer.join("project-old")).unwrap();
    std::os::unix::fs::symlink(&target, &workspace).unwrap();
    let error = run(
        &fixture,
        ShellExecRequest {
            workdir: Some(outer.clone()),
            ..ShellExecRequest::new(format!("touch {}/planted", target.display()))
        },
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains(&format!(
            "workspace-write refused: the workspace {} resolves to {} through a symbolic link",
            workspace.display(),
            target.display()
        )),
        "{error}"
    );
    assert!(!target.join("planted").exists());
}

#[tokio::test]
async fn a_working_directory_entered_before_the_carve_outs_does_not_reach_beneath_them() {
    let (_workspace, root) = outside_dir();
    // `sub` is pinned in place above the carve-out, and `sub/dh` is the carve-out itself: a
    // process that entered either before they were mounted would see what lies beneath.
    let home = root.join("sub/dh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("settings.yml"), "kept\n").unwrap();
    let mut standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    standing.protected_paths = vec![ProtectedPath::new(&home, "dsh's home ($DSH_HOME)")];
    let protection = SandboxProtection::new();
    for (strategy, fixture, _spill) in fenced(&standing, &protection) {
        for (workdir, command) in [
            (root.join("sub"), "echo x >> dh/settings.yml"),
            (home.clone(), "echo x >> settings.yml"),
            (home.clone(), "touch planted"),
        ] {
            let result = run_in(&fixture, command, &workdir, &[]).await;
            assert_ne!(
                result.exit_code,
                Some(0),
                "{strategy}: {command} in {}: {result:?}",
                workdir.display()
            );
        }
        assert_eq!(
            std::fs::read_to_string(home.join("settings.yml")).unwrap(),
            "kept\n",
            "{strategy}"
        );
        assert!(!home.join("planted").exists(), "{strategy}");
        let beside = run_in(&fixture, "echo ok > beside.txt", &root.join("sub"), &[]).await;
        assert_eq!(beside.exit_code, Some(0), "{strategy}: {beside:?}");
    }
}
