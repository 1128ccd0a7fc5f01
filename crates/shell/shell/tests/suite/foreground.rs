//! Foreground runs: outcomes, working directory, stdin, spawn failures, timeouts, aborts.

use std::time::{Duration, Instant};

use dsh_shell::{CancellationToken, ShellError, ShellExecRequest, bash_argv, process_group_alive};

use super::support::{GRACE, fixture, pid_running, pids, spec, spec_with};

#[tokio::test]
async fn reports_the_exit_code_and_both_streams() {
    let f = fixture();
    let command = "echo out; echo err >&2; exit 3";
    let result = f
        .runner
        .run(&bash_argv(command), &spec(command))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.signal, None);
    assert_eq!(result.stdout.text, "out\n");
    assert_eq!(result.stderr.text, "err\n");
    assert!(!result.stdout.truncated && result.stdout.spill_path.is_none());
    assert!(!result.timed_out && !result.aborted);
    assert_eq!(result.timeout_ms, 120_000);
    assert_eq!(result.sandbox, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_the_argv_it_is_given() {
    let f = fixture();
    let argv = ["sh", "-c", "echo from-argv"].map(String::from);
    let result = f.runner.run(&argv, &spec("echo from-spec")).await.unwrap();
    assert_eq!(result.stdout.text, "from-argv\n");
}

#[tokio::test]
async fn runs_in_the_workdir() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let request = ShellExecRequest {
        workdir: Some(dir.path().to_path_buf()),
        ..ShellExecRequest::new("pwd")
    };
    let result = f
        .runner
        .run(&bash_argv("pwd"), &spec_with(request))
        .await
        .unwrap();
    assert_eq!(
        std::fs::canonicalize(result.stdout.text.trim()).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

#[tokio::test]
async fn a_bad_workdir_or_program_is_a_spawn_error_naming_the_cwd() {
    let f = fixture();
    let request = ShellExecRequest {
        workdir: Some("/nonexistent-dsh".into()),
        ..ShellExecRequest::new("true")
    };
    let error = f
        .runner
        .run(&bash_argv("true"), &spec_with(request))
        .await
        .unwrap_err();
    assert!(matches!(error, ShellError::Spawn { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("/nonexistent-dsh") && message.contains("No such file"),
        "{message}"
    );

    let argv = vec!["dsh-no-such-program".to_owned()];
    let error = f.runner.run(&argv, &spec("x")).await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("spawn dsh-no-such-program in "),
        "{error}"
    );
}

#[tokio::test]
async fn an_empty_argv_is_refused() {
    let f = fixture();
    for argv in [vec![], vec![String::new()]] {
        let error = f.runner.run(&argv, &spec("true")).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid argv: expected a non-empty program name at argv[0]"
        );
    }
}

#[tokio::test]
async fn an_abort_before_spawn_is_an_error() {
    let f = fixture();
    let token = CancellationToken::new();
    token.cancel();
    let request = ShellExecRequest {
        signal: Some(token),
        ..ShellExecRequest::new("echo never")
    };
    let error = f
        .runner
        .run(&bash_argv("echo never"), &spec_with(request))
        .await
        .unwrap_err();
    assert!(matches!(error, ShellError::AbortedBeforeSpawn { .. }));
    assert_eq!(error.to_string(), "aborted before spawn: aborted");
    assert_eq!(f.runner.live_processes(), 0);
}

#[tokio::test]
async fn stdin_reaches_the_command_and_is_closed() {
    let f = fixture();
    let command = "cat; echo done";
    let request = ShellExecRequest {
        stdin: Some("piped\n".into()),
        ..ShellExecRequest::new(command)
    };
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    assert_eq!(result.stdout.text, "piped\ndone\n");

    // Without stdin the command reads /dev/null: immediate end of input.
    let result = f
        .runner
        .run(&bash_argv("cat; echo eof"), &spec("cat"))
        .await
        .unwrap();
    assert_eq!(result.stdout.text, "eof\n");

    // A command that ignores a large stdin is fine (EPIPE is not an error).
    let request = ShellExecRequest {
        stdin: Some("x".repeat(4 << 20)),
        ..ShellExecRequest::new("true")
    };
    let result = f
        .runner
        .run(&bash_argv("true"), &spec_with(request))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_group_promptly() {
    let f = fixture();
    let command = "echo $$; sleep 600";
    let request = ShellExecRequest {
        timeout_ms: Some(500.0),
        ..ShellExecRequest::new(command)
    };
    let started = Instant::now();
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(490), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1_500), "{elapsed:?}");
    assert!(result.timed_out && !result.aborted);
    assert_eq!(result.timeout_ms, 500);
    assert_eq!(result.exit_code, None);
    assert_eq!(result.signal.as_deref(), Some("SIGTERM"));
    let pgid = pids(&result.stdout.text)[0];
    assert!(!process_group_alive(pgid));
    assert_eq!(f.runner.live_processes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_process_of_the_group_outlives_a_timeout_even_when_ignoring_term() {
    let f = fixture();
    // Everything ignores SIGTERM (an ignored signal stays ignored across exec), and a
    // grandchild subshell forks a grandgrandchild.
    let command = "trap '' TERM; echo $$; (trap '' TERM; echo $BASHPID; sleep 600 & echo $!; \
                   wait; :) & sleep 600; :";
    let request = ShellExecRequest {
        timeout_ms: Some(500.0),
        ..ShellExecRequest::new(command)
    };
    let started = Instant::now();
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(500) + GRACE, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert!(result.timed_out && !result.aborted);
    assert_eq!(result.signal.as_deref(), Some("SIGKILL"));
    let pids = pids(&result.stdout.text);
    assert_eq!(pids.len(), 3, "{:?}", result.stdout.text);
    for pid in &pids {
        assert!(!pid_running(*pid), "pid {pid} survived");
    }
    assert!(!process_group_alive(pids[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_that_forks_on_term_dies_too() {
    let f = fixture();
    // The grandchild answers SIGTERM by forking another sleeper (which never saw the TERM).
    let command = "echo $$; (trap 'sleep 600 & echo $!' TERM; echo $BASHPID; \
                   while :; do sleep 0.05; done) & sleep 600";
    let request = ShellExecRequest {
        timeout_ms: Some(400.0),
        ..ShellExecRequest::new(command)
    };
    let started = Instant::now();
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(result.timed_out);
    let pids = pids(&result.stdout.text);
    assert!(pids.len() >= 3, "{:?}", result.stdout.text);
    for pid in &pids {
        assert!(!pid_running(*pid), "pid {pid} survived");
    }
    assert!(!process_group_alive(pids[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_mid_run_is_reported_as_aborted() {
    let f = fixture();
    let token = CancellationToken::new();
    let request = ShellExecRequest {
        signal: Some(token.clone()),
        timeout_ms: Some(5_000.0),
        ..ShellExecRequest::new("sleep 600")
    };
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let started = Instant::now();
    let result = f
        .runner
        .run(&bash_argv("sleep 600"), &spec_with(request))
        .await
        .unwrap();
    cancel.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(result.aborted && !result.timed_out);
    assert_eq!(result.signal.as_deref(), Some("SIGTERM"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_cause_wins() {
    let f = fixture();
    // The timeout fires first; the command traps TERM, exits 0, and the abort comes later.
    let command = "trap 'exit 0' TERM; sleep 600 & wait";
    let token = CancellationToken::new();
    let request = ShellExecRequest {
        signal: Some(token.clone()),
        timeout_ms: Some(200.0),
        ..ShellExecRequest::new(command)
    };
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        token.cancel();
    });
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    late.await.unwrap();
    assert!(result.timed_out && !result.aborted);
    assert_eq!(result.exit_code, Some(0));
}

#[tokio::test]
async fn a_self_killed_command_is_neither_timed_out_nor_aborted() {
    let f = fixture();
    let result = f
        .runner
        .run(&bash_argv("kill -TERM $$"), &spec("kill"))
        .await
        .unwrap();
    assert_eq!(result.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(result.exit_code, None);
    assert!(!result.timed_out && !result.aborted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_descendant_holding_the_pipes_delays_settlement_by_the_grace_only() {
    let f = fixture();
    let command = "sleep 600 & echo $!";
    let started = Instant::now();
    let result = f
        .runner
        .run(&bash_argv(command), &spec(command))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed >= GRACE, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert_eq!(result.exit_code, Some(0));
    let leftover = pids(&result.stdout.text)[0];
    // Left running on purpose, but still owned: shutdown ends it.
    assert!(pid_running(leftover));
    assert_eq!(f.runner.live_processes(), 1);
    f.runner.shutdown().await;
    assert!(!pid_running(leftover));
    assert_eq!(f.runner.live_processes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_future_terminates_the_command() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let command = format!("echo $$ > {}; sleep 600", pid_file.display());
    let (argv, spec) = (bash_argv(&command), spec(&command));
    let mut run = Box::pin(f.runner.run(&argv, &spec));
    let pgid: i32 = loop {
        tokio::select! {
            _ = &mut run => panic!("the command finished"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {
                let written = std::fs::read_to_string(&pid_file).unwrap_or_default();
                if let Ok(pgid) = written.trim().parse() {
                    break pgid;
                }
            }
        }
    };
    assert!(process_group_alive(pgid));
    drop(run);
    let deadline = Instant::now() + Duration::from_secs(2);
    while process_group_alive(pgid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!process_group_alive(pgid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_keep_their_outputs_apart() {
    let f = std::sync::Arc::new(fixture());
    let mut set = tokio::task::JoinSet::new();
    for i in 0..16 {
        let f = std::sync::Arc::clone(&f);
        set.spawn(async move {
            let command = format!("echo {i}; echo e{i} >&2; exit {}", i % 4);
            let result = f
                .runner
                .run(&bash_argv(&command), &spec(&command))
                .await
                .unwrap();
            (i, result)
        });
    }
    let mut seen = 0;
    while let Some(joined) = set.join_next().await {
        let (i, result) = joined.unwrap();
        assert_eq!(result.stdout.text, format!("{i}\n"));
        assert_eq!(result.stderr.text, format!("e{i}\n"));
        assert_eq!(result.exit_code, Some(i % 4));
        seen += 1;
    }
    assert_eq!(seen, 16);
}
