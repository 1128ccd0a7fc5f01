//! Process-group liveness as the runner sees it.

use dsh_shell::{bash_argv, process_group_alive};

use super::support::{fixture, pids, read_until, spec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_is_alive_until_its_last_member_is_gone() {
    let f = fixture();
    let command = "echo $$; sleep 60";
    let process = f
        .runner
        .start(&bash_argv(command), &spec(command), None)
        .unwrap();
    let pgid = pids(&read_until(&process, "\n").await)[0];
    assert_eq!(process.pid(), Some(pgid as u32));
    assert!(process_group_alive(pgid));
    assert!(process.kill());
    process.done().await;
    f.runner.shutdown().await;
    assert!(!process_group_alive(pgid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_that_left_the_session_is_collected_once_it_exits() {
    let f = fixture();
    let command = "setsid sh -c 'echo $$; sleep 0.3' & wait";
    let first = f
        .runner
        .run(&bash_argv(command), &spec(command))
        .await
        .unwrap();
    let daemon = pids(&first.stdout.text)[0];
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    // The next command's supervision collects the exited daemon (handed to us as subreaper).
    let next = "true";
    f.runner.run(&bash_argv(next), &spec(next)).await.unwrap();
    assert!(
        !std::path::Path::new(&format!("/proc/{daemon}")).exists(),
        "daemon {daemon} is left as a zombie"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_command_leads_a_session_of_its_own() {
    let f = fixture();
    let command = r#"read -r s < /proc/$$/stat; s=${s##*) }; set -- $s; echo "$$ $3 $4""#;
    let result = f
        .runner
        .run(&bash_argv(command), &spec(command))
        .await
        .unwrap();
    let ids: Vec<i32> = result
        .stdout
        .text
        .split_whitespace()
        .map(|id| id.parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{result:?}");
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "pid, group and session differ: {ids:?}"
    );
    assert_ne!(ids[0], nix::unistd::getsid(None).unwrap().as_raw());
}

/// Runs `command` (which prints a job's pid first) with a 400 ms timeout; the job's pid.
async fn timed_out_job(command: &str) -> i32 {
    let f = fixture();
    let request = dsh_shell::ShellExecRequest {
        timeout_ms: Some(400.0),
        ..dsh_shell::ShellExecRequest::new(command)
    };
    let result = f
        .runner
        .run(&bash_argv(command), &super::support::spec_with(request))
        .await
        .unwrap();
    assert!(result.timed_out, "{result:?}");
    pids(&result.stdout.text)[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_left_its_group_dies_with_a_timed_out_command() {
    // Job control gives the background job a process group of its own, as `timeout` or
    // Python's `process_group=0` would.
    let stray = timed_out_job("set -m; sleep 60 & echo $!; wait").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while super::support::pid_running(stray) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !super::support::pid_running(stray),
        "the job that left the group outlived its command"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_left_its_group_and_ignores_sigterm_gets_sigkill() {
    // The job leaves the group and ignores SIGTERM: only a tree that still counts it as
    // alive sends the SIGKILL after the grace.
    let stray = timed_out_job("set -m; (trap '' TERM; exec sleep 60) & echo $!; wait").await;
    assert!(
        !super::support::pid_running(stray),
        "the run ended while the job that left the group still ran"
    );
}
