//! Background processes: status, consuming reads, kill, cancellation, spawn failures, hooks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_shell::{
    CancellationToken, ProcessSettlement, SettleHook, ShellError, ShellExecRequest,
    ShellProcessStatus, ShellSandboxInfo, bash_argv,
};

use super::support::{fixture, fixture_with, limits, parent_env, read_until, spec, spec_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_returns_at_once_and_settles_as_completed() {
    let f = fixture();
    let command = "sleep 1; echo done";
    let started = Instant::now();
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(process.status(), ShellProcessStatus::Running);
    assert!(process.pid().is_some());
    assert!(!process.is_done());
    process.done().await;
    assert!(process.is_done());
    assert_eq!(process.status(), ShellProcessStatus::Completed);
    assert_eq!(process.exit_code(), Some(0));
    assert_eq!(process.signal(), None);
    assert_eq!(process.read_output().delta, "done\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_consuming_and_work_after_exit() {
    let f = fixture();
    let command = "echo first; sleep 0.5; echo second";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    assert_eq!(read_until(&process, "first\n").await, "first\n");
    process.done().await;
    let read = process.read_output();
    assert_eq!(read.delta, "second\n");
    assert!(!read.lossy);
    assert_eq!(process.read_output().delta, "");
}

#[tokio::test]
async fn stderr_gets_a_marked_section() {
    let f = fixture();
    for (command, expected) in [
        ("echo out; echo err >&2", "out\n[stderr]\nerr\n"),
        ("echo err >&2", "[stderr]\nerr\n"),
        ("printf out; echo err >&2", "out\n[stderr]\nerr\n"),
        ("printf out", "out"),
    ] {
        let process = f
            .runner
            .start(&bash_argv(command), &spec(command), None)
            .unwrap();
        process.done().await;
        assert_eq!(process.read_output().delta, expected, "{command}");
    }
}

#[tokio::test]
async fn lossy_reads_point_at_spill_files() {
    let f = fixture_with(limits(100), parent_env(&[]));
    let command = "for i in $(seq 1 100); do printf 'line-%04d\\n' $i; done";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    process.done().await;
    let read = process.read_output();
    assert!(read.lossy);
    assert!(read.delta.ends_with("line-0100\n"));
    let spill = read.stdout_spill_path.unwrap();
    assert_eq!(std::fs::read(spill).unwrap().len(), 1_000);
    assert_eq!(read.stderr_spill_path, None);

    let command = "for i in $(seq 1 100); do printf 'line-%04d\\n' $i >&2; done";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    process.done().await;
    let read = process.read_output();
    assert!(read.lossy);
    assert!(read.delta.starts_with("[stderr]\n"));
    assert!(read.stderr_spill_path.is_some());
}

#[tokio::test]
async fn background_stdout_uses_the_runner_budget() {
    let f = fixture_with(limits(100), parent_env(&[]));
    let command = "seq 1 300";
    let request = ShellExecRequest {
        stdout_max_bytes: Some(100_000),
        ..ShellExecRequest::new(command)
    };
    let process = f
        .runner
        .start(&bash_argv(command), &spec_with(request), None)
        .unwrap();
    process.done().await;
    assert!(process.read_output().lossy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_is_true_once_then_false() {
    let f = fixture();
    let process = f
        .runner
        .start(&bash_argv("sleep 60"), &spec("sleep 60"), None)
        .unwrap();
    assert!(process.kill());
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.signal().as_deref(), Some("SIGTERM"));
    assert!(!process.kill());

    let process = f
        .runner
        .start(&bash_argv("true"), &spec("true"), None)
        .unwrap();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Completed);
    assert!(!process.kill());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_escalates_to_sigkill_after_the_grace() {
    let f = fixture();
    let command = "trap '' TERM; echo armed; sleep 60";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    read_until(&process, "armed").await;
    let started = Instant::now();
    assert!(process.kill());
    process.done().await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.signal().as_deref(), Some("SIGKILL"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_and_self_signals_settle_as_killed() {
    let f = fixture();
    let token = CancellationToken::new();
    let request = ShellExecRequest {
        signal: Some(token.clone()),
        ..ShellExecRequest::new("sleep 60")
    };
    let process = f
        .runner
        .start(&bash_argv("sleep 60"), &spec_with(request), None)
        .unwrap();
    token.cancel();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.signal().as_deref(), Some("SIGTERM"));

    let command = "kill -TERM $$";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.exit_code(), None);
    assert_eq!(process.signal().as_deref(), Some("SIGTERM"));
}

#[tokio::test]
async fn a_spawn_failure_settles_as_killed_with_the_error_on_stderr() {
    let f = fixture();
    let request = ShellExecRequest {
        workdir: Some("/nonexistent-dsh".into()),
        ..ShellExecRequest::new("true")
    };
    let process = f
        .runner
        .start(&bash_argv("true"), &spec_with(request), None)
        .unwrap();
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    assert_eq!(process.pid(), None);
    let read = process.read_output();
    assert!(
        read.delta
            .starts_with("[stderr]\nspawn failed: spawn bash in /nonexistent-dsh: "),
        "{}",
        read.delta
    );
    assert_eq!(process.read_output().delta, "");
    assert!(!process.kill());
}

#[tokio::test]
async fn an_abort_before_spawn_is_an_error() {
    let f = fixture();
    let token = CancellationToken::new();
    token.cancel();
    let request = ShellExecRequest {
        signal: Some(token),
        ..ShellExecRequest::new("true")
    };
    let error = f
        .runner
        .start(&bash_argv("true"), &spec_with(request), None)
        .unwrap_err();
    assert!(matches!(error, ShellError::AbortedBeforeSpawn { .. }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_and_env_reach_a_background_process() {
    let f = fixture();
    let command = "cat; echo \"[$BG_VAR][$DSH_BG_VAR]\"";
    let mut request = ShellExecRequest {
        stdin: Some("bg-stdin\n".into()),
        ..ShellExecRequest::new(command)
    };
    request.env.insert("BG_VAR".into(), "bg-env".into());
    request
        .dsh_env
        .insert("DSH_BG_VAR".into(), "bg-dsh-env".into());
    let process = f
        .runner
        .start(&bash_argv(command), &spec_with(request), None)
        .unwrap();
    let output = read_until(&process, "[bg-env][bg-dsh-env]").await;
    assert!(output.starts_with("bg-stdin\n"));
    process.done().await;
    assert_eq!(process.exit_code(), Some(0));
}

type Seen = Arc<Mutex<Vec<(ShellProcessStatus, Option<i32>, String, bool)>>>;

fn recording_hook(seen: &Seen) -> SettleHook {
    let seen = Arc::clone(seen);
    Box::new(move |settlement: &ProcessSettlement<'_>| {
        seen.lock().unwrap().push((
            settlement.status,
            settlement.exit_code,
            settlement.stderr.to_owned(),
            settlement.spawn_error.is_some(),
        ));
        Some(ShellSandboxInfo {
            mode: "read-only".into(),
            denied: settlement.stderr.contains("Read-only file system"),
            enforcement: Some("full".into()),
            runner_failed: None,
        })
    })
}

#[tokio::test]
async fn the_settle_hook_stamps_sandbox_facts_before_done() {
    let f = fixture();
    let seen: Seen = Arc::default();
    let command = "echo 'touch: Read-only file system' >&2; exit 1";
    let process = f
        .runner
        .start(
            &bash_argv(command),
            &spec(command),
            Some(recording_hook(&seen)),
        )
        .unwrap();
    process.done().await;
    let sandbox = process.sandbox().unwrap();
    assert!(sandbox.denied);
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [(
            ShellProcessStatus::Completed,
            Some(1),
            "touch: Read-only file system\n".to_owned(),
            false
        )]
    );

    let seen: Seen = Arc::default();
    let request = ShellExecRequest {
        workdir: Some("/nonexistent-dsh".into()),
        ..ShellExecRequest::new("true")
    };
    let process = f
        .runner
        .start(
            &bash_argv("true"),
            &spec_with(request),
            Some(recording_hook(&seen)),
        )
        .unwrap();
    process.done().await;
    assert!(process.sandbox().is_some());
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, ShellProcessStatus::Killed);
    assert!(seen[0].2.starts_with("spawn failed: "));
    assert!(seen[0].3);
}
