//! The `bash` tool under pipeline listeners: a policy that denies before anything runs, and a
//! post-execute listener whose replaced value the tool renders again.

use std::sync::Arc;

use dsh_tools::{
    PostExecute, PostToolDecision, PreToolDecision, ToolsPostExecute, ToolsPreExecute,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{bash, harness, text};

type PreNext =
    dsh_kernel::Next<dsh_tools::ToolExecution, Result<PreToolDecision, dsh_tools::ToolError>>;
type PostNext = dsh_kernel::Next<Arc<PostExecute>, Result<PostToolDecision, dsh_tools::ToolError>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denying_policy_stops_the_command_before_it_runs() {
    let harness = harness().await;
    let marker = harness.home.path().join("ran");
    harness
        .kernel
        .root()
        .on::<ToolsPreExecute>(
            |execution: dsh_tools::ToolExecution, next: PreNext| async move {
                let command = execution.arguments()["command"]
                    .as_str()
                    .unwrap_or_default();
                if command.contains("touch") {
                    return Ok(PreToolDecision::Deny {
                        reason: "no touching".into(),
                    });
                }
                next.run(execution).await
            },
        )
        .unwrap();
    let result = harness
        .call("bash", bash(&format!("touch {}", marker.display())))
        .await;
    assert_eq!(text(&result), "Error: no touching");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_value_is_rendered_as_bash_renders_it() {
    let harness = harness().await;
    harness
        .kernel
        .root()
        .on::<ToolsPostExecute>(|post: Arc<PostExecute>, _next: PostNext| async move {
            let mut value = post.result.value.clone().unwrap();
            value["stdout"]["text"] = json!("redacted\n");
            Ok(PostToolDecision::Accept {
                content: None,
                value: Some(value),
            })
        })
        .unwrap();
    let result = harness.call("bash", bash("echo secret; exit 2")).await;
    assert_eq!(text(&result), "redacted\n[exit code: 2]");
}
