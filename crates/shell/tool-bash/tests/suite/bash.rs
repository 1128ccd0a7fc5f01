//! The `bash` tool's results, environment and working directories.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{bash, harness, harness_with, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_stderr_and_the_exit_code_read_as_dsh_renders_them() {
    let harness = harness().await;
    let result = harness
        .call("bash", bash("echo hi; echo oops >&2; exit 3"))
        .await;
    assert!(!result.is_error, "a nonzero exit is a result");
    assert_eq!(text(&result), "hi\n[stderr]\noops\n[exit code: 3]");
    let value = result.value.unwrap();
    assert_eq!(value["kind"], "foreground");
    assert_eq!(value["exitCode"], 3);
    assert_eq!(
        text(&harness.call("bash", bash("true")).await),
        "(no output)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabytes_keep_the_tail_and_a_spill_file_holds_everything() {
    let harness = harness().await;
    let result = harness
        .call(
            "bash",
            bash("head -c 10000000 /dev/zero | tr '\\0' 'x'; printf END"),
        )
        .await;
    let value = result.value.clone().unwrap();
    let stdout = &value["stdout"];
    assert_eq!(stdout["truncated"], true);
    assert_eq!(stdout["text"].as_str().unwrap().len(), 64_000);
    assert!(stdout["text"].as_str().unwrap().ends_with("xxEND"));
    let spill = stdout["spillPath"].as_str().unwrap();
    assert_eq!(std::fs::metadata(spill).unwrap().len(), 10_000_003);
    let shown = text(&result);
    assert!(
        shown.ends_with(&format!("xxEND\n[output truncated; full output: {spill}]")),
        "{}",
        &shown[shown.len() - 200..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_returns_promptly_and_leaves_no_process_of_the_group() {
    let harness = harness().await;
    let started = Instant::now();
    let result = harness
        .call(
            "bash",
            json!({
                "command": "echo $$; trap '' TERM; (trap '' TERM; sleep 600) & sleep 600",
                "description": "sleep forever",
                "timeoutMs": 500
            }),
        )
        .await;
    let elapsed = started.elapsed();
    let shown = text(&result);
    assert!(shown.contains("[timed out after 500ms]"), "{shown}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let pgid: i32 = shown.lines().next().unwrap().trim().parse().unwrap();
    // Not even a zombie is left: orphans are handed to us (subreaper) and collected.
    let left = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None);
    assert_eq!(
        left,
        Err(nix::errno::Errno::ESRCH),
        "process group {pgid} is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_variables_arrive_and_caller_or_model_ones_do_not() {
    let harness = harness().await;
    let result = harness
        .call(
            "bash",
            json!({
                "command": "env | grep -E '^(DSH_|NO_COLOR|TERM|PAGER|GIT_PAGER)' | sort",
                "description": "show env",
                "env": {"DSH_INJECTED": "1"},
                "dshEnv": {"DSH_HOME": "/model/home"}
            }),
        )
        .await;
    let shown = text(&result);
    let home = std::fs::canonicalize(harness.home.path()).unwrap_or(harness.home.path().into());
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines.contains(&format!("DSH_HOME={}", harness.home.path().display()).as_str())
            || lines.contains(&format!("DSH_HOME={}", home.display()).as_str()),
        "{shown}"
    );
    assert!(lines.contains(&"DSH_SHELL=1"), "{shown}");
    assert!(
        !shown.contains("DSH_INJECTED") && !shown.contains("/model/home"),
        "{shown}"
    );
    assert!(
        !shown.contains("DSH_SESSION_ID"),
        "no session, no id: {shown}"
    );
    for fixed in ["NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"] {
        assert!(lines.contains(&fixed), "{fixed} in {shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_gives_its_id_and_its_workspace() {
    let harness = harness().await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join("sub")).unwrap();
    let cwd = workspace.path().to_str().unwrap();
    let real = std::fs::canonicalize(workspace.path()).unwrap();
    let result = harness
        .call_in_session(cwd, bash("pwd; echo $DSH_SESSION_ID"))
        .await;
    assert_eq!(text(&result), format!("{}\nsession-1\n", real.display()));
    let result = harness
        .call_in_session(
            cwd,
            json!({"command": "pwd", "description": "d", "workdir": "sub"}),
        )
        .await;
    assert_eq!(text(&result), format!("{}\n", real.join("sub").display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_errors_the_model_reads() {
    let harness = harness().await;
    let missing = harness.call("bash", json!({"command": "ls"})).await;
    assert!(missing.is_error);
    assert!(
        text(&missing).starts_with("Error: invalid arguments: "),
        "{}",
        text(&missing)
    );
    assert!(text(&missing).contains("description"), "{}", text(&missing));
    let blank = harness
        .call("bash", json!({"command": " ", "description": "d"}))
        .await;
    assert_eq!(
        text(&blank),
        "Error: invalid command: expected a non-empty string"
    );
    let escalation = harness
        .call(
            "bash",
            json!({"command": "ls", "description": "d", "sandbox_permissions": "danger-full-access", "justification": "because"}),
        )
        .await;
    assert_eq!(
        text(&escalation),
        "Error: sandbox_permissions is not available in this composition (no sandboxing \
         executor to escalate)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_can_be_turned_off() {
    let harness = harness_with(json!({}), json!({"enableRunInBackground": false})).await;
    let names = harness.tools.names();
    assert_eq!(names, ["bash"]);
    let result = harness
        .call(
            "bash",
            json!({"command": "sleep 1", "description": "d", "run_in_background": true}),
        )
        .await;
    assert_eq!(
        text(&result),
        "Error: run_in_background is disabled for this deployment (enableRunInBackground: false)"
    );
}
