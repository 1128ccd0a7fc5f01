//! Background processes: confined like foreground ones, their sandbox facts stamped when
//! they settle.

use dsh_shell::{NetworkPolicy, SandboxMode, ShellExecRequest, ShellProcessStatus};

use super::support::{
    EXEC_AFTER_SEPARATOR, FIND_STATUS_FD, both, executor, executor_with, fake_runner, options,
    outside_dir, policy, settle, shell_quote,
};

fn request(command: String, workdir: &std::path::Path) -> ShellExecRequest {
    ShellExecRequest {
        workdir: Some(workdir.to_path_buf()),
        ..ShellExecRequest::new(command)
    }
}

#[tokio::test]
async fn background_denials_and_successes_carry_facts() {
    let (_workspace, root) = outside_dir();
    let (_other, other) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Allow,
    ));

    let denied = format!("sleep 0.1; touch {}", shell_quote(&other.join("bg")));
    let spec = fixture.shell.resolve(request(denied, &root)).unwrap();
    let process = fixture.shell.start(spec).unwrap();
    assert!(process.sandbox().is_none(), "facts come at settlement");
    settle(&process).await;
    assert_eq!(process.status(), ShellProcessStatus::Completed);
    assert_eq!(process.exit_code(), Some(1));
    let sandbox = process.sandbox().unwrap();
    assert!(sandbox.denied);
    assert_eq!(sandbox.mode, "workspace-write");
    assert_eq!(sandbox.enforcement.as_deref(), Some("full"));
    assert_eq!(sandbox.runner_failed, None);
    assert!(!other.join("bg").exists());
    assert!(process.read_output().delta.contains("Permission denied"));

    let spec = fixture
        .shell
        .resolve(request("echo bg > bg.txt; echo done".to_owned(), &root))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    settle(&process).await;
    assert_eq!(process.exit_code(), Some(0));
    let sandbox = process.sandbox().unwrap();
    assert!(!sandbox.denied);
    assert_eq!(sandbox.runner_failed, None);
    assert_eq!(process.read_output().delta, "done\n");
    assert!(root.join("bg.txt").exists());
}

#[tokio::test]
async fn a_background_runner_failure_is_marked_not_denied() {
    let (_workspace, root) = outside_dir();
    let script = format!(
        "if [ \"$1\" = --probe ]; then exit 0; fi; {FIND_STATUS_FD}; \
         echo 'cannot open rule path: /w: Permission denied' >&\"$status_fd\"; \
         echo 'landlock-run: cannot open rule path: /w: Permission denied' >&2; exit 125"
    );
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    let spec = fixture
        .shell
        .resolve(request("true".to_owned(), &root))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    settle(&process).await;
    let sandbox = process.sandbox().unwrap();
    assert_eq!(sandbox.runner_failed, Some(true));
    assert!(!sandbox.denied, "a runner failure is never a denial");
    assert_eq!(process.exit_code(), Some(125));
}

#[tokio::test]
async fn a_background_command_cannot_pass_for_a_runner_failure() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow);
    for (strategy, fixture) in both(&standing) {
        let command = "echo 'landlock-run: cannot open rule path: /x: gone' >&2; exit 125";
        let spec = fixture
            .shell
            .resolve(request(command.to_owned(), &root))
            .unwrap();
        let process = fixture.shell.start(spec).unwrap();
        settle(&process).await;
        let sandbox = process.sandbox().unwrap();
        assert_eq!(sandbox.runner_failed, None, "{strategy}");
        assert_eq!(process.exit_code(), Some(125), "{strategy}");
        assert!(
            process
                .read_output()
                .delta
                .contains("landlock-run: cannot open rule path"),
            "{strategy}: the command's output is kept"
        );
    }
}

#[tokio::test]
async fn a_partial_background_run_reports_partial() {
    let (_workspace, root) = outside_dir();
    let script = format!(
        "if [ \"$1\" = --probe ]; then echo 'landlock: partially enforced (older ABI)'; exit 0; fi; \
         echo 'landlock-run: partial enforcement (older Landlock ABI)' >&2; {EXEC_AFTER_SEPARATOR}"
    );
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    let spec = fixture
        .shell
        .resolve(request(
            "echo 'x: permission denied' >&2; exit 125".to_owned(),
            &root,
        ))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    settle(&process).await;
    let sandbox = process.sandbox().unwrap();
    assert_eq!(sandbox.enforcement.as_deref(), Some("partial"));
    assert!(sandbox.denied);
    assert_eq!(sandbox.runner_failed, None);
}

#[tokio::test]
async fn danger_full_access_background_has_no_facts() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::DangerFullAccess,
        &root,
        NetworkPolicy::Allow,
    ));
    let spec = fixture
        .shell
        .resolve(request("echo free".to_owned(), &root))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    settle(&process).await;
    assert_eq!(process.sandbox(), None);
    assert_eq!(process.read_output().delta, "free\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_confined_background_processes() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));
    let spec = fixture
        .shell
        .resolve(request("trap '' TERM; sleep 60".to_owned(), &root))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    let started = std::time::Instant::now();
    fixture.executor.shutdown().await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    settle(&process).await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(fixture.executor.bash().process_runner().live_processes(), 0);
}
