//! After dispatch: `tools/post-execute` accepts, replaces or blocks.

use std::sync::{Arc, Mutex};

use dsh_tools::{
    ContentBlock, PostExecute, PostToolDecision, ToolError, ToolFailure, ToolOutput,
    ToolsPostExecute,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Counter, Harness, PostNext, call, echo};

/// A harness whose single post-execute listener answers `decision`.
async fn deciding(decision: PostToolDecision) -> Harness {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()).with_output_schema(json!({"type": "string"})));
    let decision = Arc::new(Mutex::new(decision));
    h.root()
        .on::<ToolsPostExecute>(move |_args: Arc<PostExecute>, _next: PostNext| {
            let decision = decision.lock().unwrap().clone();
            async move { Ok(decision) }
        })
        .unwrap();
    h
}

#[tokio::test]
async fn block_turns_the_result_into_a_valueless_failure_with_the_feedback() {
    let h = deciding(PostToolDecision::Block {
        feedback: vec![ContentBlock::text("output rejected: try again")],
    })
    .await;
    let result = h
        .tools
        .execute(call("echo", json!({"text": "secret"})))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        [ContentBlock::text("output rejected: try again")]
    );
    assert_eq!(
        result.error,
        Some(ToolFailure {
            message: "output rejected: try again".into(),
            info: None
        })
    );
    assert_eq!(result.value, None);
}

#[tokio::test]
async fn accept_may_replace_the_content_and_keep_the_value() {
    let h = deciding(PostToolDecision::Accept {
        content: Some(vec![ContentBlock::text("rewritten")]),
        value: None,
    })
    .await;
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert!(!result.is_error);
    assert_eq!(result.text(), "rewritten");
    assert_eq!(result.value, Some(json!("hi")));
}

#[tokio::test]
async fn accept_may_replace_the_value_which_is_checked_and_rendered_again() {
    let h = deciding(PostToolDecision::Accept {
        content: None,
        value: Some(json!("replacement")),
    })
    .await;
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.value, Some(json!("replacement")));
    assert_eq!(result.text(), "replacement");

    let h = deciding(PostToolDecision::Accept {
        content: None,
        value: Some(json!(1)),
    })
    .await;
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.code(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(result.value, None);
}

#[tokio::test]
async fn accept_may_not_replace_both_nor_the_value_of_a_failure() {
    let h = deciding(PostToolDecision::Accept {
        content: Some(vec![ContentBlock::text("also")]),
        value: Some(json!("replacement")),
    })
    .await;
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        result.error.unwrap().message,
        "tools/post-execute accept decision cannot replace both value and content"
    );

    let h = deciding(PostToolDecision::Accept {
        content: None,
        value: Some(json!("replacement")),
    })
    .await;
    let result = h.tools.execute(call("nope", json!({}))).await;
    assert_eq!(
        result.text(),
        "Error: tools/post-execute cannot replace the value of a failed result"
    );
}

#[tokio::test]
async fn a_replaced_value_is_rendered_by_the_tool() {
    struct Shouting;
    #[dsh_tools::async_trait]
    impl dsh_tools::ToolDefinition for Shouting {
        fn name(&self) -> &str {
            "shout"
        }
        fn description(&self) -> &str {
            "Shouts."
        }
        fn parameters(&self) -> &serde_json::Value {
            static PARAMETERS: std::sync::LazyLock<serde_json::Value> =
                std::sync::LazyLock::new(|| json!({"type": "object"}));
            &PARAMETERS
        }
        async fn execute(
            &self,
            _args: serde_json::Value,
            _run: dsh_tools::ToolRunContext,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("quiet"))
        }
        fn render(
            &self,
            _args: &serde_json::Value,
            value: serde_json::Value,
        ) -> Result<ToolOutput, ToolError> {
            let text = value.as_str().unwrap_or_default().to_uppercase();
            Ok(ToolOutput::new(value, vec![ContentBlock::text(text)]))
        }
    }
    let h = Harness::new().await;
    h.tools.register(&h.root(), Arc::new(Shouting)).unwrap();
    h.root()
        .on::<ToolsPostExecute>(|_args: Arc<PostExecute>, _next: PostNext| async {
            Ok(PostToolDecision::Accept {
                content: None,
                value: Some(json!("loud")),
            })
        })
        .unwrap();
    let result = h.tools.execute(call("shout", json!({}))).await;
    assert_eq!(
        (result.text(), result.value),
        ("LOUD".into(), Some(json!("loud")))
    );
}

#[tokio::test]
async fn a_failing_post_execute_listener_fails_the_call() {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()));
    h.root()
        .on::<ToolsPostExecute>(|_args: Arc<PostExecute>, _next: PostNext| async {
            Err(ToolError::harness(
                "PolicyError",
                "POST",
                "post policy exploded",
            ))
        })
        .unwrap();
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.text(), "Error: post policy exploded");
    assert_eq!(result.code(), Some("POST"));
}
