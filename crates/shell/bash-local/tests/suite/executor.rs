//! The unconfined executor this crate provides (`dsh_shell::BashRunner`) through the
//! `ShellExecutor` trait.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dsh_shell::{CancellationToken, ShellConfig, ShellError, ShellExecRequest, ShellProcessStatus};

use super::support::{executor, quick, read_until};

#[tokio::test]
async fn runs_with_output_and_the_effective_timeout() {
    let (shell, _spill) = executor(ShellConfig {
        timeout_ms: 5_000,
        ..quick()
    });
    let result = shell
        .run(shell.resolve(ShellExecRequest::new("echo hi")).unwrap())
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.stdout.text, "hi\n");
    assert_eq!(result.timeout_ms, 5_000);
    assert_eq!(shell.sandbox_mode(), None);
}

#[tokio::test]
async fn uses_the_config_cwd_overridable_per_call_else_the_current_directory() {
    let (shell, _spill) = executor(ShellConfig {
        cwd: Some(PathBuf::from("/tmp")),
        ..quick()
    });
    let pwd = |request| {
        let shell = &shell;
        async move {
            let spec = shell.resolve(request).unwrap();
            shell.run(spec).await.unwrap().stdout.text.trim().to_owned()
        }
    };
    assert!(pwd(ShellExecRequest::new("pwd")).await.ends_with("/tmp"));
    let request = ShellExecRequest {
        workdir: Some(PathBuf::from("/")),
        ..ShellExecRequest::new("pwd")
    };
    assert_eq!(pwd(request).await, "/");

    let (shell, _spill) = executor(quick());
    let spec = shell.resolve(ShellExecRequest::new("pwd")).unwrap();
    let result = shell.run(spec).await.unwrap();
    assert_eq!(
        PathBuf::from(result.stdout.text.trim()),
        std::env::current_dir().unwrap()
    );
}

#[tokio::test]
async fn caps_timeouts_and_refuses_bad_overrides() {
    let (shell, _spill) = executor(ShellConfig {
        timeout_ms: 1_000,
        max_timeout_ms: 2_000,
        ..quick()
    });
    let request = ShellExecRequest {
        timeout_ms: Some(99_999.0),
        ..ShellExecRequest::new("true")
    };
    let result = shell.run(shell.resolve(request).unwrap()).await.unwrap();
    assert_eq!(result.timeout_ms, 2_000);
    for timeout in [f64::NAN, -1.0] {
        let request = ShellExecRequest {
            timeout_ms: Some(timeout),
            ..ShellExecRequest::new("true")
        };
        assert!(
            shell
                .resolve(request)
                .unwrap_err()
                .to_string()
                .contains("request.timeoutMs")
        );
    }
}

#[tokio::test]
async fn foreground_callers_may_raise_the_stdout_budget_only() {
    let (shell, _spill) = executor(ShellConfig {
        max_output_bytes: 100,
        ..quick()
    });
    assert_eq!(
        shell
            .resolve(ShellExecRequest::new("true"))
            .unwrap()
            .stdout_max_bytes,
        100
    );
    let command = "printf 'x%.0s' $(seq 1 500); printf 'e%.0s' $(seq 1 500) >&2";
    let request = ShellExecRequest {
        stdout_max_bytes: Some(500),
        ..ShellExecRequest::new(command)
    };
    let result = shell.run(shell.resolve(request).unwrap()).await.unwrap();
    assert!(!result.stdout.truncated);
    assert_eq!(result.stdout.text, "x".repeat(500));
    assert!(result.stderr.truncated);
    assert_eq!(result.stderr.text.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_aborts_are_results() {
    let (shell, _spill) = executor(ShellConfig {
        timeout_ms: 60_000,
        ..quick()
    });
    let request = ShellExecRequest {
        timeout_ms: Some(100.0),
        ..ShellExecRequest::new("sleep 60")
    };
    let result = shell.run(shell.resolve(request).unwrap()).await.unwrap();
    assert!(result.timed_out && !result.aborted);
    assert_eq!(result.timeout_ms, 100);

    let token = CancellationToken::new();
    let request = ShellExecRequest {
        signal: Some(token.clone()),
        ..ShellExecRequest::new("sleep 60")
    };
    let spec = shell.resolve(request).unwrap();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let started = Instant::now();
    let result = shell.run(spec).await.unwrap();
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(result.aborted && !result.timed_out);
}

#[tokio::test]
async fn a_bad_workdir_rejects_the_run() {
    let (shell, _spill) = executor(quick());
    let request = ShellExecRequest {
        workdir: Some(PathBuf::from("/nonexistent-dsh")),
        ..ShellExecRequest::new("true")
    };
    let error = shell
        .run(shell.resolve(request).unwrap())
        .await
        .unwrap_err();
    assert!(matches!(error, ShellError::Spawn { .. }));
    assert!(error.to_string().contains("/nonexistent-dsh"));
}

#[tokio::test]
async fn resolve_carries_stdin_env_and_dsh_env_and_run_threads_them() {
    let (shell, _spill) = executor(quick());
    let mut request = ShellExecRequest {
        stdin: Some("piped\n".into()),
        ..ShellExecRequest::new("cat; echo \"[$SEAM_VAR][$DSH_SEAM_VAR]\"")
    };
    request.env.insert("SEAM_VAR".into(), "env-ok".into());
    request
        .dsh_env
        .insert("DSH_SEAM_VAR".into(), "dsh-ok".into());
    let spec = shell.resolve(request).unwrap();
    assert_eq!(spec.stdin.as_deref(), Some("piped\n"));
    assert_eq!(spec.env["SEAM_VAR"], "env-ok");
    assert_eq!(spec.dsh_env["DSH_SEAM_VAR"], "dsh-ok");
    let result = shell.run(spec).await.unwrap();
    assert_eq!(result.stdout.text, "piped\n[env-ok][dsh-ok]\n");

    let spec = shell.resolve(ShellExecRequest::new("true")).unwrap();
    assert!(spec.stdin.is_none() && spec.env.is_empty() && spec.dsh_env.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_processes_through_the_trait() {
    let (shell, _spill) = executor(quick());
    let process = shell
        .start(
            shell
                .resolve(ShellExecRequest::new("echo out; echo err >&2"))
                .unwrap(),
        )
        .unwrap();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Completed);
    assert_eq!(process.read_output().delta, "out\n[stderr]\nerr\n");

    let command = "trap '' TERM; echo armed; sleep 60";
    let process = shell
        .start(shell.resolve(ShellExecRequest::new(command)).unwrap())
        .unwrap();
    read_until(&process, "armed").await;
    assert!(process.kill());
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.signal().as_deref(), Some("SIGKILL"));
    assert!(!process.kill());

    let request = ShellExecRequest {
        workdir: Some(PathBuf::from("/nonexistent-dsh")),
        ..ShellExecRequest::new("true")
    };
    let process = shell.start(shell.resolve(request).unwrap()).unwrap();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert!(process.read_output().delta.contains("spawn failed:"));
}
