//! Fail closed: no usable backend, a failing probe or a failing runner refuses the call with
//! dsh's `SANDBOX_UNAVAILABLE` message, and nothing runs unconfined.

use std::time::Duration;

use dsh_bash_sandbox::{Backend, Enforcement, SandboxOptions, SandboxRunner};
use dsh_shell::{
    NetworkPolicy, SANDBOX_UNAVAILABLE, SandboxMode, ShellError, ShellExecRequest,
    sandbox_unavailable_message,
};

use super::support::{
    EXEC_AFTER_SEPARATOR, FIND_STATUS_FD, both, executor, executor_with, fake_runner, options,
    outside_dir, policy, run, runner, shell_quote,
};

fn request(command: String, workdir: &std::path::Path) -> ShellExecRequest {
    ShellExecRequest {
        workdir: Some(workdir.to_path_buf()),
        timeout_ms: Some(30_000.0),
        ..ShellExecRequest::new(command)
    }
}

fn unavailable_message(error: ShellError) -> String {
    match error {
        ShellError::SandboxUnavailable { message } => message,
        other => panic!("expected SandboxUnavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn no_backend_refuses_and_runs_nothing() {
    let (_workspace, root) = outside_dir();
    let marker = root.join("ran");
    let missing = SandboxRunner::new("/nonexistent/dsh", vec!["__sandbox-run".to_owned()]);
    for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        let fixture = executor_with(
            policy(mode, &root, NetworkPolicy::Allow),
            SandboxOptions {
                bwrap: Some(SandboxRunner::new("/nonexistent/bwrap", Vec::new())),
                ..options(missing.clone())
            },
        );
        // The executor still says it confines.
        assert_eq!(fixture.shell.sandbox_mode().as_deref(), Some(mode.as_str()));
        let command = format!("touch {}", shell_quote(&marker));
        let error = run(&fixture, request(command.clone(), &root))
            .await
            .unwrap_err();
        let message = unavailable_message(error);
        assert_eq!(message, sandbox_unavailable_message(mode, None));
        assert!(message.starts_with(&format!(
            "sandbox mode \"{}\" is requested but no sandbox backend is usable on this host; \
             refusing to run the command unconfined.",
            mode.as_str()
        )));
        assert!(message.ends_with("otherwise switch the consumer to danger-full-access."));
        assert_eq!(SANDBOX_UNAVAILABLE, "SANDBOX_UNAVAILABLE");

        let spec = fixture.shell.resolve(request(command, &root)).unwrap();
        let error = fixture.shell.start(spec).unwrap_err();
        assert_eq!(
            unavailable_message(error),
            sandbox_unavailable_message(mode, None)
        );
        assert_eq!(fixture.executor.bash().process_runner().live_processes(), 0);
        assert!(!marker.exists(), "the command ran unconfined");
        assert_eq!(fixture.executor.backend(), None);
    }
}

#[tokio::test]
async fn a_failing_probe_refuses_and_the_verdict_is_kept() {
    let (_workspace, root) = outside_dir();
    let probes = root.join("probes");
    let marker = root.join("ran");
    let script = format!(
        "echo probe >> {probes}; if [ \"$1\" = --probe ]; then echo 'landlock-run: no' >&2; exit 125; fi; touch {marker}",
        probes = shell_quote(&probes),
        marker = shell_quote(&marker)
    );
    let fixture = executor_with(
        policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    for _ in 0..3 {
        let error = run(&fixture, request("true".to_owned(), &root))
            .await
            .unwrap_err();
        assert_eq!(
            unavailable_message(error),
            sandbox_unavailable_message(SandboxMode::WorkspaceWrite, None)
        );
    }
    let spec = fixture
        .shell
        .resolve(request("true".to_owned(), &root))
        .unwrap();
    assert!(fixture.shell.start(spec).is_err());
    assert_eq!(std::fs::read_to_string(&probes).unwrap(), "probe\n");
    assert!(!marker.exists());
}

#[tokio::test]
async fn the_working_verdict_is_probed_once() {
    let (_workspace, root) = outside_dir();
    let probes = root.join("probes");
    let script = format!(
        "if [ \"$1\" = --probe ]; then echo probe >> {probes}; exit 0; fi; {EXEC_AFTER_SEPARATOR}",
        probes = shell_quote(&probes)
    );
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    for _ in 0..3 {
        let result = run(&fixture, request("echo hi".to_owned(), &root))
            .await
            .unwrap();
        assert_eq!(result.stdout.text, "hi\n");
    }
    assert_eq!(std::fs::read_to_string(&probes).unwrap(), "probe\n");
    assert!(matches!(
        fixture.executor.backend(),
        Some(Backend::Landlock {
            enforcement: Enforcement::Full,
            ..
        })
    ));
}

#[tokio::test]
async fn a_runner_failure_is_sandbox_unavailable_with_its_detail() {
    let (_workspace, root) = outside_dir();
    let marker = root.join("ran");
    let script = format!(
        "if [ \"$1\" = --probe ]; then exit 0; fi; {FIND_STATUS_FD}; \
         echo 'landlock-run: partial enforcement (older Landlock ABI)' >&2; \
         echo 'landlock ruleset error: Permission denied' >&\"$status_fd\"; \
         echo 'landlock-run: landlock ruleset error: Permission denied' >&2; exit 125"
    );
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    let error = run(
        &fixture,
        request(format!("touch {}", shell_quote(&marker)), &root),
    )
    .await
    .unwrap_err();
    // The runner failure outranks the denial wording, and names the runner's own detail.
    assert_eq!(
        unavailable_message(error),
        "sandbox mode \"read-only\": the command was not run because its confinement could \
         not be set up: landlock-run: landlock ruleset error: Permission denied"
    );
    assert!(!marker.exists());
}

#[tokio::test]
async fn what_a_command_prints_never_passes_for_a_runner_failure() {
    let (_workspace, root) = outside_dir();
    let standing = policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow);
    for (strategy, fixture) in both(&standing) {
        let command = "echo 'landlock-run: cannot open rule path: /x: gone' >&2; \
                       echo kept; exit 125";
        let result = run(&fixture, request(command.to_owned(), &root))
            .await
            .unwrap_or_else(|error| panic!("{strategy}: {error}"));
        assert_eq!(result.exit_code, Some(125), "{strategy}");
        assert_eq!(
            result.stdout.text, "kept\n",
            "{strategy}: the output is kept"
        );
        assert!(
            result
                .stderr
                .text
                .contains("landlock-run: cannot open rule path"),
            "{strategy}"
        );
        assert_eq!(result.sandbox.unwrap().runner_failed, None, "{strategy}");
    }
}

#[tokio::test]
async fn the_command_s_own_exit_125_is_a_result() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));
    let result = run(&fixture, request("exit 125".to_owned(), &root))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(125));
    // A line that looks like the runner's, under another exit code, is the command's.
    let result = run(
        &fixture,
        request("echo 'landlock-run: fake' >&2; exit 3".to_owned(), &root),
    )
    .await
    .unwrap();
    assert_eq!(result.exit_code, Some(3));
    assert!(!result.sandbox.unwrap().denied);
}

#[tokio::test]
async fn the_real_runner_fails_closed_on_a_missing_workspace() {
    let (_workspace, root) = outside_dir();
    let gone = root.join("gone");
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &gone,
        NetworkPolicy::Allow,
    ));
    let error = run(&fixture, request("echo ran".to_owned(), &root))
        .await
        .unwrap_err();
    let message = unavailable_message(error);
    assert_eq!(
        message,
        format!(
            "workspace-write refused: the workspace {} is not an existing directory",
            gone.display()
        ),
        "the message names the real cause, not the host"
    );
}

#[tokio::test]
async fn a_partial_notice_with_a_child_failure_is_a_denial() {
    let (_workspace, root) = outside_dir();
    let script = format!(
        "if [ \"$1\" = --probe ]; then echo 'landlock: partially enforced (older ABI)'; exit 0; fi; \
         echo 'landlock-run: partial enforcement (older Landlock ABI)' >&2; {EXEC_AFTER_SEPARATOR}"
    );
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(fake_runner(&script)),
    );
    let result = run(
        &fixture,
        request(
            "echo 'bash: x: Permission denied' >&2; exit 125".to_owned(),
            &root,
        ),
    )
    .await
    .unwrap();
    assert_eq!(result.exit_code, Some(125));
    let sandbox = result.sandbox.unwrap();
    assert!(sandbox.denied);
    assert_eq!(sandbox.enforcement.as_deref(), Some("partial"));
    let result = run(&fixture, request("echo fine".to_owned(), &root))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0));
    let sandbox = result.sandbox.unwrap();
    assert!(!sandbox.denied);
    assert_eq!(sandbox.enforcement.as_deref(), Some("partial"));
}

#[tokio::test]
async fn a_runner_that_vanishes_after_the_probe_is_a_runner_spawn_failure() {
    let (_workspace, root) = outside_dir();
    let link = root.join("runner-link");
    std::os::unix::fs::symlink(runner().program, &link).unwrap();
    let fixture = executor_with(
        policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow),
        options(SandboxRunner::new(&link, Vec::new())),
    );
    let result = run(&fixture, request("echo ok".to_owned(), &root))
        .await
        .unwrap();
    assert_eq!(result.stdout.text, "ok\n");
    std::fs::remove_file(&link).unwrap();

    let error = run(&fixture, request("echo ok".to_owned(), &root))
        .await
        .unwrap_err();
    let message = unavailable_message(error);
    assert!(
        message.contains(&format!(" Runner failure: spawn {} in ", link.display())),
        "{message}"
    );

    // A bad working directory is the caller's failure, not the runner's.
    let error = run(
        &fixture,
        request("echo ok".to_owned(), &root.join("nowhere")),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ShellError::Spawn { .. }), "{error:?}");

    // In the background the same failure is marked `runnerFailed`.
    let spec = fixture
        .shell
        .resolve(request("echo ok".to_owned(), &root))
        .unwrap();
    let process = fixture.shell.start(spec).unwrap();
    super::support::settle(&process).await;
    let sandbox = process.sandbox().unwrap();
    assert_eq!(sandbox.runner_failed, Some(true));
    assert!(!sandbox.denied);
}

#[tokio::test]
async fn bwrap_is_the_fallback_when_landlock_is_unusable() {
    let (_workspace, root) = outside_dir();
    let missing = SandboxRunner::new("/nonexistent/dsh", Vec::new());
    // A stand-in for bwrap: the probe (`… -- true`) passes; a run records its arguments,
    // reports the child on its info descriptor as bwrap does, and runs the command.
    let bwrap = fake_runner(&format!(
        "args=\"$*\"; case \"$args\" in *'--new-session -- true') exit 0;; esac; \
         {FIND_STATUS_FD}; echo \"{{\\\"child-pid\\\": $$}}\" >&\"$status_fd\"; \
         case \"$args\" in *'--bind'*) echo \"${{args/--info-fd $status_fd/--info-fd N}}\" > bwrap-args;; esac; \
         {EXEC_AFTER_SEPARATOR}"
    ));
    let fixture = executor_with(
        policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow),
        SandboxOptions {
            bwrap: Some(bwrap),
            probe_timeout: Duration::from_secs(5),
            ..options(missing.clone())
        },
    );
    assert_eq!(fixture.executor.backend(), Some(Backend::Bwrap));
    let result = run(
        &fixture,
        request(
            "echo 'touch: /etc/x: Read-only file system' >&2; exit 1".to_owned(),
            &root,
        ),
    )
    .await
    .unwrap();
    let sandbox = result.sandbox.unwrap();
    assert!(sandbox.denied);
    assert_eq!(sandbox.enforcement.as_deref(), Some("full"));
    let root_text = root.display().to_string();
    assert_eq!(
        std::fs::read_to_string(root.join("bwrap-args")).unwrap(),
        format!(
            "--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --new-session \
             --tmpfs /tmp --bind {root_text} {root_text} --info-fd N -- bash -c echo 'touch: /etc/x: Read-only file system' >&2; exit 1\n"
        )
    );

    // Once bwrap reported the child, a `bwrap: ` line is the command's own output.
    let result = run(
        &fixture,
        request(
            "echo 'bwrap: Can'\"'\"'t mount proc' >&2; exit 1".to_owned(),
            &root,
        ),
    )
    .await
    .unwrap();
    assert_eq!(result.exit_code, Some(1));
    assert!(result.sandbox.unwrap().runner_failed.is_none());

    // A bwrap that fails before starting the command is a launcher failure.
    let failing = fake_runner(
        "args=\"$*\"; case \"$args\" in *'--new-session -- true') exit 0;; esac; \
         echo \"bwrap: Can't mount proc\" >&2; exit 1",
    );
    let fixture = executor_with(
        policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow),
        SandboxOptions {
            bwrap: Some(failing),
            probe_timeout: Duration::from_secs(5),
            ..options(missing)
        },
    );
    let error = run(&fixture, request("echo ran".to_owned(), &root))
        .await
        .unwrap_err();
    assert_eq!(
        unavailable_message(error),
        "sandbox mode \"workspace-write\": the command was not run because its confinement \
         could not be set up: bwrap: Can't mount proc"
    );
}
