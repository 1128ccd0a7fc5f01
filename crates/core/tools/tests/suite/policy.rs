//! Before dispatch: `tools/pre-execute` (deny, rewrite, ask), approval and guards.

use std::sync::Arc;

use dsh_tools::{
    APPROVAL, ApprovalOutcome, ApprovalRequest, ApprovalService, ErrorInfo, PostExecute,
    PostToolDecision, PreToolDecision, ToolCaller, ToolError, ToolExecution, ToolExecutionResult,
    ToolFailure, ToolsPostExecute, ToolsPreExecute, async_trait,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Counter, Harness, Log, PostNext, PreNext, call, echo};

#[tokio::test]
async fn a_denial_skips_the_body_and_still_reaches_post_execute() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    h.root()
        .on::<ToolsPreExecute>(|exec: ToolExecution, next: PreNext| async move {
            if exec.name() == "echo" {
                return Ok(PreToolDecision::Deny {
                    reason: "denied by policy".into(),
                });
            }
            next.run(exec).await
        })
        .unwrap();
    let seen = Log::default();
    let post_seen = seen.clone();
    h.root()
        .on::<ToolsPostExecute>(move |args: Arc<PostExecute>, next: PostNext| {
            post_seen.push(args.result.text());
            next.run(args)
        })
        .unwrap();

    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert!(result.is_error);
    assert_eq!(result.text(), "Error: denied by policy");
    assert_eq!(
        result.error,
        Some(ToolFailure {
            message: "denied by policy".into(),
            info: None
        })
    );
    assert_eq!(result.value, None);
    assert_eq!(runs.get(), 0);
    assert_eq!(seen.entries(), ["Error: denied by policy"]);
}

#[tokio::test]
async fn rewritten_arguments_flow_down_the_chain_to_guards_and_the_body() {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()));
    h.root()
        .on::<ToolsPreExecute>(|exec: ToolExecution, next: PreNext| {
            next.run(exec.with_arguments(json!({"text": "rewritten"})))
        })
        .unwrap();
    let seen: Log<Value> = Log::default();
    let inner_seen = seen.clone();
    h.root()
        .on::<ToolsPreExecute>(move |exec: ToolExecution, next: PreNext| {
            inner_seen.push(exec.arguments().clone());
            next.run(exec)
        })
        .unwrap();
    let guard_seen = seen.clone();
    h.tools
        .register_guard(&h.root(), move |exec| {
            guard_seen.push(exec.arguments().clone());
            None
        })
        .unwrap();

    let result = h
        .tools
        .execute(call("echo", json!({"text": "original"})))
        .await;
    assert_eq!(result.text(), "rewritten");
    assert_eq!(
        seen.entries(),
        [json!({"text": "rewritten"}), json!({"text": "rewritten"})]
    );
}

#[tokio::test]
async fn ask_without_an_approval_service_is_denied() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let reason = Arc::new(std::sync::Mutex::new(Some("needs approval".to_owned())));
    let listener_reason = Arc::clone(&reason);
    h.root()
        .on::<ToolsPreExecute>(move |_exec: ToolExecution, _next: PreNext| {
            let reason = listener_reason.lock().unwrap().clone();
            async move { Ok(PreToolDecision::Ask { reason }) }
        })
        .unwrap();

    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.text(), "Error: needs approval");
    *reason.lock().unwrap() = None;
    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        result.text(),
        "Error: tool \"echo\" requires approval (not yet supported)"
    );
    assert_eq!(result.error.unwrap().info, None);
    assert_eq!(runs.get(), 0);
}

/// What an approver was asked: tool, call, reason, session.
type Asked = (String, String, Option<String>, Option<String>);

/// Answers every request with a fixed outcome and records what it was asked.
struct Approver {
    outcome: ApprovalOutcome,
    asked: Log<Asked>,
    cancel_caller: bool,
}

#[async_trait]
impl ApprovalService for Approver {
    async fn request(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError> {
        self.asked.push((
            request.tool_name,
            request.call_id,
            request.reason,
            request.caller.session_id,
        ));
        if self.cancel_caller {
            request.signal.cancel();
        }
        Ok(self.outcome)
    }
}

async fn ask_with(
    outcome: ApprovalOutcome,
    caller: bool,
    cancel_caller: bool,
) -> (ToolExecutionResult, usize, Vec<Asked>) {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let asked = Log::default();
    let approver: Arc<dyn ApprovalService> = Arc::new(Approver {
        outcome,
        asked: asked.clone(),
        cancel_caller,
    });
    h.root().provide(&APPROVAL, approver).unwrap();
    h.root()
        .on::<ToolsPreExecute>(|_exec: ToolExecution, _next: PreNext| async {
            Ok(PreToolDecision::Ask {
                reason: Some("risky".into()),
            })
        })
        .unwrap();
    let mut input = call("echo", json!({"text": "hi"}));
    if caller {
        input = input.with_caller(ToolCaller {
            session_id: Some("session-1".into()),
            ..ToolCaller::default()
        });
    }
    let result = h.tools.execute(input).await;
    (result, runs.get(), asked.entries())
}

#[tokio::test]
async fn ask_routes_through_the_approval_service() {
    let (result, runs, asked) = ask_with(ApprovalOutcome::AllowedOnce, true, false).await;
    assert_eq!(result.text(), "hi");
    assert_eq!(runs, 1);
    assert_eq!(
        asked,
        [(
            "echo".to_owned(),
            "call-1".to_owned(),
            Some("risky".to_owned()),
            Some("session-1".to_owned())
        )]
    );

    let (result, runs, _) = ask_with(ApprovalOutcome::Rejected, true, false).await;
    assert_eq!(result.text(), "Error: the user rejected tool \"echo\"");
    assert_eq!(runs, 0);
    let (result, _, _) = ask_with(ApprovalOutcome::Cancelled, true, false).await;
    assert_eq!(
        result.text(),
        "Error: approval for tool \"echo\" was cancelled"
    );
    let (result, _, _) = ask_with(ApprovalOutcome::Unavailable, true, false).await;
    assert_eq!(
        result.text(),
        "Error: tool \"echo\" requires approval, but no approval channel is available"
    );
}

#[tokio::test]
async fn ask_without_a_caller_is_denied_without_asking() {
    let (result, runs, asked) = ask_with(ApprovalOutcome::AllowedOnce, false, false).await;
    assert_eq!(
        result.text(),
        "Error: tool \"echo\" requires approval, but the call has no agent to route it through"
    );
    assert_eq!(runs, 0);
    assert!(asked.is_empty());
}

#[tokio::test]
async fn a_cancelled_caller_overtaking_approval_is_aborted_before_dispatch() {
    let (result, runs, _) = ask_with(ApprovalOutcome::Cancelled, true, true).await;
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn guards_deny_in_order_and_never_allow() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    let calls = Counter::default();
    let first_calls = calls.clone();
    h.tools
        .register_guard(&h.root(), move |exec| {
            first_calls.bump();
            (exec.arguments()["text"] == "secret").then(|| "no secrets".to_owned())
        })
        .unwrap();
    let second = h
        .tools
        .register_guard(&h.root(), |_| Some("second guard".to_owned()))
        .unwrap();

    let result = h
        .tools
        .execute(call("echo", json!({"text": "secret"})))
        .await;
    assert_eq!(result.text(), "Error: no secrets");
    let result = h.tools.execute(call("echo", json!({"text": "fine"}))).await;
    assert_eq!(result.text(), "Error: second guard");
    assert_eq!(runs.get(), 0);

    second.dispose().await;
    let result = h.tools.execute(call("echo", json!({"text": "fine"}))).await;
    assert_eq!(result.text(), "fine");

    // A pre-execute denial stands: guards only run after an allow.
    let before = calls.get();
    h.root()
        .on::<ToolsPreExecute>(|_exec: ToolExecution, _next: PreNext| async {
            Ok(PreToolDecision::Deny {
                reason: "listener says no".into(),
            })
        })
        .unwrap();
    let result = h.tools.execute(call("echo", json!({"text": "fine"}))).await;
    assert_eq!(result.text(), "Error: listener says no");
    assert_eq!(calls.get(), before);
}

#[tokio::test]
async fn a_failing_pre_execute_listener_is_final_and_keeps_its_info() {
    let h = Harness::new().await;
    let runs = Counter::default();
    h.add(echo(&runs));
    h.root()
        .on::<ToolsPreExecute>(|_exec: ToolExecution, _next: PreNext| async {
            Err(ToolError::harness(
                "PolicyError",
                "POLICY",
                "policy exploded",
            ))
        })
        .unwrap();
    let post = Counter::default();
    let post_runs = post.clone();
    h.root()
        .on::<ToolsPostExecute>(move |_args: Arc<PostExecute>, _next: PostNext| {
            post_runs.bump();
            async { Ok(PostToolDecision::accept()) }
        })
        .unwrap();

    let result = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(result.text(), "Error: policy exploded");
    assert_eq!(
        result.error.unwrap().info,
        Some(ErrorInfo::new("PolicyError", "POLICY"))
    );
    assert_eq!(runs.get(), 0);
    assert_eq!(post.get(), 0);
}
