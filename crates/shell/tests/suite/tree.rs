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
