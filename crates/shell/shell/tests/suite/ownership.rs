//! The runner owns its process trees: shutdown terminates and awaits them, drop kills them.

use std::time::{Duration, Instant};

use dsh_shell::{ShellError, ShellProcessStatus, bash_argv};

use super::support::{fixture, pid_running, pids, read_until, spec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_terminates_background_processes_and_waits_for_them() {
    let f = fixture();
    let finished = f
        .runner
        .start(&bash_argv("echo done"), &spec("echo done"), None)
        .unwrap();
    finished.done().await;
    let command = "echo $$; sleep 60";
    let sleeper = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    let command = "trap '' TERM; echo $$; echo armed; sleep 60";
    let trapper = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    let sleeper_pid = pids(&read_until(&sleeper, "\n").await)[0];
    let trapper_pid = pids(&read_until(&trapper, "armed").await)[0];
    assert_eq!(f.runner.live_processes(), 2);

    let started = Instant::now();
    f.runner.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!pid_running(sleeper_pid));
    assert!(!pid_running(trapper_pid));
    assert_eq!(f.runner.live_processes(), 0);

    sleeper.done().await;
    trapper.done().await;
    assert_eq!(finished.status(), ShellProcessStatus::Completed);
    assert_eq!(sleeper.status(), ShellProcessStatus::Killed);
    assert_eq!(trapper.status(), ShellProcessStatus::Killed);
    assert_eq!(trapper.signal().as_deref(), Some("SIGKILL"));
}

#[tokio::test]
async fn nothing_starts_after_shutdown() {
    let f = fixture();
    f.runner.shutdown().await;
    let error = f
        .runner
        .run(&bash_argv("true"), &spec("true"))
        .await
        .unwrap_err();
    assert!(matches!(error, ShellError::Closed));
    let error = f
        .runner
        .start(&bash_argv("true"), &spec("true"), None)
        .unwrap_err();
    assert!(matches!(error, ShellError::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_runner_kills_its_processes() {
    let f = fixture();
    let command = "trap '' TERM; echo $$; sleep 60";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    let pid = pids(&read_until(&process, "\n").await)[0];
    drop(f);
    process.done().await;
    assert_eq!(process.signal().as_deref(), Some("SIGKILL"));
    let deadline = Instant::now() + Duration::from_secs(2);
    while pid_running(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!pid_running(pid));
}
