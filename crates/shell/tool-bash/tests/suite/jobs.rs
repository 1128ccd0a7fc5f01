//! Background jobs: start, read, list, kill.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{harness, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_is_started_read_and_listed() {
    let harness = harness().await;
    let started = harness
        .call(
            "bash",
            json!({"command": "echo one; echo two >&2", "description": "d", "run_in_background": true}),
        )
        .await;
    assert_eq!(text(&started), "started background job bash-1");
    assert_eq!(
        started.value.unwrap(),
        json!({"kind": "background", "jobId": "bash-1"})
    );
    let output = harness
        .call(
            "job_output",
            json!({"job_id": "bash-1", "wait": true, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(
        text(&output),
        "one\n[stderr]\ntwo\n[status: completed, exit code: 0]"
    );
    let again = harness
        .call("job_output", json!({"job_id": "bash-1"}))
        .await;
    assert_eq!(
        text(&again),
        "(no new output)\n[status: completed, exit code: 0]"
    );
    let list = harness.call("job_list", json!({})).await;
    assert_eq!(
        text(&list),
        "bash-1 [bash] completed — echo one; echo two >&2"
    );
    let kill = harness.call("job_kill", json!({"job_id": "bash-1"})).await;
    assert_eq!(
        text(&kill),
        "job bash-1 had already finished [status: completed, exit code: 0]"
    );
    let unknown = harness
        .call("job_output", json!({"job_id": "bash-9"}))
        .await;
    assert_eq!(text(&unknown), "Error: unknown job bash-9");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_job_is_killed() {
    let harness = harness().await;
    harness
        .call(
            "bash",
            json!({"command": "sleep 600", "description": "d", "run_in_background": true}),
        )
        .await;
    let kill = harness.call("job_kill", json!({"job_id": "bash-1"})).await;
    assert_eq!(text(&kill), "requested cancellation of job bash-1");
    let output = harness
        .call(
            "job_output",
            json!({"job_id": "bash-1", "wait": true, "timeout_ms": 10000}),
        )
        .await;
    let shown = text(&output);
    assert!(
        shown.starts_with("(no new output)\n[status: killed"),
        "{shown}"
    );
    assert_eq!(
        text(&harness.call("job_list", json!({})).await),
        "bash-1 [bash] killed — sleep 600"
    );
}
