//! Dispatch: unknown tools, argument and output validation, tool errors, cancellation and
//! `tools/execute` wrappers.

use std::sync::Arc;
use std::time::Duration;

use dsh_tools::{
    CancellationToken, ErrorInfo, FnTool, PostExecute, ToolDispatch, ToolError, ToolExecution,
    ToolExecutionResult, ToolFailure, ToolOutput, ToolsExecute, ToolsPostExecute, ToolsPreExecute,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Counter, ExecNext, Harness, Log, PostNext, PreNext, call, echo};

fn info(name: &str, code: &str) -> Option<ErrorInfo> {
    Some(ErrorInfo::new(name, code))
}

#[tokio::test]
async fn an_unknown_tool_fails_and_still_reaches_post_execute() {
    let h = Harness::new().await;
    let seen = Log::default();
    let post_seen = seen.clone();
    h.root()
        .on::<ToolsPostExecute>(move |args: Arc<PostExecute>, next: PostNext| {
            post_seen.push(args.result.code().map(str::to_owned));
            next.run(args)
        })
        .unwrap();
    let result = h.tools.execute(call("nope", json!({}))).await;
    assert_eq!(
        result,
        ToolExecutionResult::from_error(&ToolError::unknown_tool("nope"))
    );
    assert_eq!(result.text(), "Error: unknown tool \"nope\"");
    assert_eq!(
        result.error.unwrap().info,
        info("ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert_eq!(seen.entries(), [Some("UNKNOWN_TOOL".to_owned())]);
}

#[tokio::test]
async fn invalid_arguments_fail_with_every_violation_and_the_body_never_runs() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let result = h.tools.execute(call("echo", json!({"n": "5"}))).await;
    assert_eq!(
        result.text(),
        "Error: invalid arguments: missing required property \"text\"; \"n\" must be a number"
    );
    assert_eq!(
        result.error,
        Some(ToolFailure {
            message: "invalid arguments: missing required property \"text\"; \"n\" must be a \
                      number"
                .into(),
            info: info("ToolArgsError", "INVALID_ARGS"),
        })
    );
    let result = h.tools.execute(call("echo", json!("not an object"))).await;
    assert_eq!(
        result.text(),
        "Error: invalid arguments: \"arguments\" must be an object"
    );
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_value_outside_the_output_schema_is_invalid_output() {
    let h = Harness::new().await;
    h.add(
        FnTool::new(
            "num",
            "A number.",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolOutput::json(json!({"n": 1}))) },
        )
        .with_output_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "string"}, "m": {"type": "number"}},
            "required": ["n", "m"]
        })),
    );
    let result = h.tools.execute(call("num", json!({}))).await;
    assert_eq!(
        result.text(),
        "Error: tool \"num\" returned invalid output: missing required property \"value.m\"; \
         \"value.n\" must be a string"
    );
    assert_eq!(result.code(), Some("INVALID_TOOL_OUTPUT"));
}

#[tokio::test]
async fn tool_errors_keep_their_name_and_code_only_when_they_have_one() {
    let h = Harness::new().await;
    h.add(FnTool::new("disk", "Fails.", json!({}), |_, _| async {
        Err(ToolError::harness("HarnessError", "ENOSPC", "disk full"))
    }));
    h.add(FnTool::new("boom", "Fails.", json!({}), |_, _| async {
        Err(ToolError::new("exploded"))
    }));
    let result = h.tools.execute(call("disk", json!({}))).await;
    assert_eq!(result.text(), "Error: disk full");
    assert_eq!(result.error.unwrap().info, info("HarnessError", "ENOSPC"));
    let result = h.tools.execute(call("boom", json!({}))).await;
    assert_eq!(result.text(), "Error: exploded");
    assert_eq!(result.error.unwrap().info, None);
}

#[tokio::test]
async fn a_panicking_body_is_an_error_naming_the_tool_and_still_reaches_post_execute() {
    let h = Harness::new().await;
    h.add(FnTool::new("crash", "Panics.", json!({}), |_, _| async {
        panic!("index out of range")
    }));
    h.add(FnTool::new(
        "crash-fmt",
        "Panics.",
        json!({}),
        |_, run| async move { panic!("bad state in {}", run.call_id) },
    ));
    let seen = Log::default();
    let post_seen = seen.clone();
    h.root()
        .on::<ToolsPostExecute>(move |args: Arc<PostExecute>, next: PostNext| {
            post_seen.push((args.execution.name().to_owned(), args.result.text()));
            next.run(args)
        })
        .unwrap();

    let result = h.tools.execute(call("crash", json!({}))).await;
    let message = "tool \"crash\" (call call-1) panicked: index out of range";
    assert_eq!(
        result,
        ToolExecutionResult::from_error(&ToolError::new(message))
    );
    assert!(result.is_error);
    assert_eq!(result.text(), format!("Error: {message}"));

    let result = h.tools.execute(call("crash-fmt", json!({}))).await;
    assert_eq!(
        result.text(),
        "Error: tool \"crash-fmt\" (call call-1) panicked: bad state in call-1"
    );
    assert_eq!(
        seen.entries(),
        [
            ("crash".to_owned(), format!("Error: {message}")),
            (
                "crash-fmt".to_owned(),
                "Error: tool \"crash-fmt\" (call call-1) panicked: bad state in call-1".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_cancelled_call_is_aborted_before_dispatch_without_any_policy() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let pre = Counter::default();
    let pre_runs = pre.clone();
    h.root()
        .on::<ToolsPreExecute>(move |exec: ToolExecution, next: PreNext| {
            pre_runs.bump();
            next.run(exec)
        })
        .unwrap();
    let input = call("echo", json!({"text": "hi"}));
    input.signal.cancel();
    let result = h.tools.execute(input).await;
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(
        result.error.unwrap().info,
        info("AbortError", "ABORTED_BEFORE_DISPATCH")
    );
    assert_eq!((runs.get(), pre.get()), (0, 0));
}

#[tokio::test]
async fn cancellation_during_pre_execute_skips_the_body() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    h.root()
        .on::<ToolsPreExecute>(|exec: ToolExecution, next: PreNext| {
            exec.signal().cancel();
            next.run(exec)
        })
        .unwrap();
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(runs.get(), 0);
}

/// `slow`: waits until its signal is cancelled, then (uncooperatively) succeeds, or with
/// `{"cooperate": true}` fails with its own error.
fn slow(started: &Arc<tokio::sync::Notify>, finished: &Counter) -> FnTool {
    let started = Arc::clone(started);
    let finished = finished.clone();
    FnTool::new(
        "slow",
        "Waits.",
        json!({"type": "object"}),
        move |args, run| {
            let started = Arc::clone(&started);
            let finished = finished.clone();
            async move {
                started.notify_one();
                run.signal.cancelled().await;
                tokio::time::sleep(Duration::from_millis(10)).await;
                finished.bump();
                if args["cooperate"] == true {
                    Err(ToolError::new("stopped on request"))
                } else {
                    Ok(ToolOutput::text("done anyway"))
                }
            }
        },
    )
}

#[tokio::test]
async fn cancellation_while_the_body_runs_replaces_a_success_after_the_body_settles() {
    let h = Harness::new().await;
    let started = Arc::new(tokio::sync::Notify::new());
    let finished = Counter::default();
    h.add(slow(&started, &finished));

    let input = call("slow", json!({}));
    let signal = input.signal.clone();
    let cancel = tokio::spawn({
        let started = Arc::clone(&started);
        async move {
            started.notified().await;
            signal.cancel();
        }
    });
    let result = h.tools.execute(input).await;
    cancel.await.unwrap();
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_eq!(result.error.unwrap().info, info("AbortError", "ABORTED"));
    assert_eq!(finished.get(), 1, "the body ran to completion");

    // A tool-owned failure stands.
    let input = call("slow", json!({"cooperate": true}));
    let signal = input.signal.clone();
    let cancel = tokio::spawn({
        let started = Arc::clone(&started);
        async move {
            started.notified().await;
            signal.cancel();
        }
    });
    let result = h.tools.execute(input).await;
    cancel.await.unwrap();
    assert_eq!(result.text(), "Error: stopped on request");
    assert_eq!(result.error.unwrap().info, None);
}

#[tokio::test]
async fn a_wrapper_signal_is_fused_with_the_callers() {
    let h = Harness::new().await;
    let started = Arc::new(tokio::sync::Notify::new());
    let finished = Counter::default();
    h.add(slow(&started, &finished));
    // A timeout-like wrapper: its own signal replaces the caller's for the body.
    let wrapper_signal = CancellationToken::new();
    let replacement = wrapper_signal.clone();
    h.root()
        .on::<ToolsExecute>(move |mut dispatch: ToolDispatch, next: ExecNext| {
            dispatch.set_signal(replacement.clone());
            next.run(dispatch)
        })
        .unwrap();

    // The wrapper's signal fires: the body sees it.
    let cancel = tokio::spawn({
        let started = Arc::clone(&started);
        let signal = wrapper_signal.clone();
        async move {
            started.notified().await;
            signal.cancel();
        }
    });
    let result = h.tools.execute(call("slow", json!({}))).await;
    cancel.await.unwrap();
    assert_eq!(result.code(), Some("ABORTED"));

    // An already-cancelled wrapper signal: the body never starts.
    let result = h.tools.execute(call("slow", json!({}))).await;
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(finished.get(), 1);
}

#[tokio::test]
async fn the_callers_cancellation_reaches_a_body_under_a_replaced_signal() {
    let h = Harness::new().await;
    let started = Arc::new(tokio::sync::Notify::new());
    let finished = Counter::default();
    h.add(slow(&started, &finished));
    h.root()
        .on::<ToolsExecute>(|mut dispatch: ToolDispatch, next: ExecNext| {
            dispatch.set_signal(CancellationToken::new());
            next.run(dispatch)
        })
        .unwrap();
    let input = call("slow", json!({}));
    let signal = input.signal.clone();
    let cancel = tokio::spawn({
        let started = Arc::clone(&started);
        async move {
            started.notified().await;
            signal.cancel();
        }
    });
    let result = tokio::time::timeout(Duration::from_secs(5), h.tools.execute(input))
        .await
        .expect("the caller's cancellation reached the body");
    cancel.await.unwrap();
    assert_eq!(result.code(), Some("ABORTED"));
}

#[tokio::test]
async fn wrappers_may_answer_for_the_body_or_fail_the_call() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs).with_output_schema(json!({"type": "string"})));
    let mode = Arc::new(std::sync::Mutex::new("answer"));
    let wrapper_mode = Arc::clone(&mode);
    h.root()
        .on::<ToolsExecute>(move |dispatch: ToolDispatch, next: ExecNext| {
            let mode = *wrapper_mode.lock().unwrap();
            async move {
                match mode {
                    "answer" => Ok(ToolExecutionResult::success(ToolOutput::text("cached"))),
                    "bad" => Ok(ToolExecutionResult::success(ToolOutput::json(json!(42)))),
                    "fail" => Err(ToolError::new("wrapper failed")),
                    _ => next.run(dispatch).await,
                }
            }
        })
        .unwrap();
    let post = Counter::default();
    let post_runs = post.clone();
    h.root()
        .on::<ToolsPostExecute>(move |args: Arc<PostExecute>, next: PostNext| {
            post_runs.bump();
            next.run(args)
        })
        .unwrap();

    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        (result.text(), result.value.clone()),
        ("cached".into(), Some(json!("cached")))
    );
    assert_eq!((runs.get(), post.get()), (0, 1));

    *mode.lock().unwrap() = "bad";
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        result.text(),
        "Error: tool \"echo\" returned invalid output: \"value\" must be a string"
    );
    assert_eq!(post.get(), 1, "a result that cannot be normalized is final");

    *mode.lock().unwrap() = "fail";
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.text(), "Error: wrapper failed");
    assert_eq!(post.get(), 1, "a failing wrapper is final");

    *mode.lock().unwrap() = "through";
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.text(), "hi");
    assert_eq!((runs.get(), post.get()), (1, 2));
}

#[tokio::test]
async fn arguments_that_are_not_lossless_json_are_refused() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let result = h
        .tools
        .execute(call("echo", json!({"text": "x", "n": -0.0})))
        .await;
    assert_eq!(
        result.text(),
        "Error: tool execution arguments must be losslessly JSON-serializable"
    );
    assert_eq!(result.error.unwrap().info, None);
    // A pre-execute rewrite is held to the same rule.
    h.root()
        .on::<ToolsPreExecute>(|exec: ToolExecution, next: PreNext| {
            next.run(exec.with_arguments(json!({"text": "x", "n": -0.0})))
        })
        .unwrap();
    let result = h.tools.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(
        result.text(),
        "Error: tool execution arguments must be losslessly JSON-serializable"
    );
    assert_eq!(runs.get(), 0);
}
