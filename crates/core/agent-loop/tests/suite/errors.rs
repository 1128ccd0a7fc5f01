//! Failed requests: error and aborted finishes end the turn `error` (and report
//! `agent/error`), `agent/request-error` retries inside the same turn and step, the retry
//! plugin logs its waits and honours its budget, and cancellation beats a retry.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_agent_loop::events::{
    AgentErrorEvent, AgentErrorNotice, AgentRequestError, RequestErrorAction, RequestErrorArgs,
};
use dsh_agent_loop::{AgentOptions, CancelCause, CreateAgentOptions};
use dsh_kernel::{BoxError, Next};
use dsh_llm::{FinishReason, LlmFailure, StreamChunk};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{
    Harness, Reply, Setup, assert_well_formed, error_reply, events_of, idle, kinds, logged,
    text_reply, turn_ends, user,
};

type Outcome = Result<Option<RequestErrorAction>, BoxError>;

fn fast_retries() -> Setup {
    Setup {
        retry_policy: Some(json!({
            "mode": "normal",
            "maxRetries": 2,
            "backoff": {"initialDelayMs": 1, "maxDelayMs": 2},
        })),
        ..Setup::default()
    }
}

/// Records every `agent/error`.
fn record_errors(h: &Harness) -> Arc<Mutex<Vec<(u64, u64, LlmFailure)>>> {
    let errors = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&errors);
    h.ctx
        .on::<AgentErrorEvent>(move |notice: &AgentErrorNotice| {
            seen.lock()
                .unwrap()
                .push((notice.turn, notice.step, notice.error.clone()));
            Ok(())
        })
        .unwrap();
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_finish_ends_the_turn_with_its_failure() {
    let h = Harness::new(vec![
        Reply::Chunks(error_reply("SERVER")),
        Reply::Chunks(text_reply("second turn ok")),
    ])
    .await;
    let errors = record_errors(&h);
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    let failure = json!({"message": "provider said SERVER", "code": "SERVER"});
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "error", "error": failure})]
    );
    assert!(
        events_of(&agent, "assistant/message").is_empty(),
        "a failed request commits no message"
    );
    let all = kinds(&agent);
    assert_eq!(
        all[all.len() - 5..],
        [
            "assistant/chunk",
            "assistant/chunk",
            "assistant/chunk",
            "step/end",
            "turn/end"
        ]
    );
    assert_eq!(
        *errors.lock().unwrap(),
        [(1, 1, LlmFailure::new("SERVER", "provider said SERVER"))]
    );
    assert_well_formed(&agent);

    // The loop survives.
    agent.followup(user("again")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_failure_before_streaming_ends_the_turn_with_its_code() {
    let h = Harness::new(vec![Reply::Fail(
        LlmFailure::new("RATE_LIMIT", "slow down").with_status(429),
    )])
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert_eq!(ends[0]["error"]["code"], "RATE_LIMIT");
    assert_eq!(ends[0]["error"]["status"], 429);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_finish_the_agent_did_not_cause_is_an_error() {
    let h = Harness::new(vec![Reply::Chunks(vec![StreamChunk::finish(
        FinishReason::Aborted {
            failure: LlmFailure::aborted("upstream hung up"),
        },
    )])])
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert_eq!(ends[0]["error"]["code"], "ABORTED");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_a_model_fails_its_turn_clearly() {
    let h = Harness::new(vec![]).await;
    let errors = record_errors(&h);
    let agent = h
        .agents
        .create(CreateAgentOptions {
            agent_options: AgentOptions::default(),
            ..CreateAgentOptions::default()
        })
        .await
        .unwrap();
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert_eq!(ends[0]["error"]["code"], "UNKNOWN");
    let message = ends[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("has no provider/model"), "{message}");
    assert_eq!(h.adapter.request_count(), 0);
    assert_eq!(errors.lock().unwrap().len(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_plugin_retries_in_the_same_turn_and_step() {
    let h = Harness::with(
        fast_retries(),
        vec![
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(text_reply("recovered")),
        ],
    )
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    let requests = h.adapter.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].messages, requests[0].messages,
        "the failed attempt adds nothing to the conversation"
    );
    assert_eq!(requests[1].system, requests[0].system);
    let mut all = kinds(&agent);
    all.dedup();
    assert_eq!(
        all,
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "request/header",
            "request/context",
            "assistant/chunk",
            "llm/retry",
            "llm/retry-started",
            "assistant/chunk",
            "assistant/message",
            "step/end",
            "turn/end",
        ]
    );
    let retry = &events_of(&agent, "llm/retry")[0];
    assert_eq!(retry.data["turn"], 1);
    assert_eq!(retry.data["step"], 1);
    assert_eq!(retry.data["provider"], "mock");
    assert_eq!(retry.data["mode"], "normal");
    assert_eq!(retry.data["retry"], 1);
    assert_eq!(retry.data["maxRetries"], 2);
    assert_eq!(retry.data["failure"]["code"], "SERVER");
    let delay = retry.data["delayMs"].as_f64().unwrap();
    assert!((0.0..=2.0).contains(&delay), "{delay}");
    let started = &events_of(&agent, "llm/retry-started")[0];
    assert_eq!(
        *started.data,
        json!({"retryId": retry.data["retryId"], "turn": 1, "step": 1, "retry": 1})
    );

    let messages = events_of(&agent, "assistant/message");
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0].data["message"]["content"],
        json!([{"type": "text", "text": "recovered"}])
    );
    let sources = messages[0].source_event_seqs.clone().unwrap();
    let doomed: Vec<u64> = events_of(&agent, "assistant/chunk")
        .iter()
        .filter(|chunk| chunk.data["chunk"]["text"] == "doomed partial")
        .map(|chunk| chunk.seq)
        .collect();
    assert_eq!(doomed.len(), 1);
    assert!(
        !sources.contains(&doomed[0]),
        "the message cites only its own chunks"
    );
    assert_eq!(events_of(&agent, "request/header").len(), 1);
    assert_eq!(events_of(&agent, "step/start").len(), 1);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_budget_ends_the_turn_with_the_last_failure() {
    let h = Harness::with(
        fast_retries(),
        vec![
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(error_reply("TIMEOUT")),
        ],
    )
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(h.adapter.request_count(), 3);
    let retries = events_of(&agent, "llm/retry");
    let numbers: Vec<&Value> = retries.iter().map(|event| &event.data["retry"]).collect();
    assert_eq!(numbers, [&json!(1), &json!(2)]);
    assert_eq!(
        retries[0].data["retryId"], retries[1].data["retryId"],
        "one chain per step"
    );
    assert_eq!(events_of(&agent, "llm/retry-started").len(), 2);
    assert_eq!(events_of(&agent, "step/start").len(), 1);
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert_eq!(ends[0]["error"]["code"], "TIMEOUT");
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_the_policy_does_not_retry_ends_the_turn_at_once() {
    let h = Harness::with(
        fast_retries(),
        vec![Reply::Chunks(error_reply("INVALID_REQUEST"))],
    )
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(h.adapter.request_count(), 1);
    assert!(events_of(&agent, "llm/retry").is_empty());
    assert_eq!(turn_ends(&agent)[0]["error"]["code"], "INVALID_REQUEST");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_the_retry_wait_ends_the_turn_aborted() {
    let h = Harness::with(
        Setup {
            retry_policy: Some(json!({
                "mode": "normal",
                "maxRetries": 2,
                "backoff": {"initialDelayMs": 60000, "maxDelayMs": 60000},
            })),
            ..Setup::default()
        },
        vec![
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(text_reply("never")),
        ],
    )
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    logged(&agent, "llm/retry").await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "aborted", "reason": {"kind": "user"}})]
    );
    assert!(events_of(&agent, "llm/retry-started").is_empty());
    assert!(events_of(&agent, "assistant/message").is_empty());
    assert_eq!(h.adapter.request_count(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_error_listener_sees_each_failure_and_may_retry() {
    let h = Harness::new(vec![
        Reply::Chunks(error_reply("SERVER")),
        Reply::Chunks(error_reply("QUOTA")),
        Reply::Chunks(text_reply("third time")),
    ])
    .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    h.ctx
        .on::<AgentRequestError>(
            move |args: RequestErrorArgs, _next: Next<RequestErrorArgs, Outcome>| {
                record.lock().unwrap().push((
                    args.turn,
                    args.step,
                    args.retries,
                    args.failure.code.clone(),
                    args.retry_policy.is_some(),
                ));
                async { Ok(Some(RequestErrorAction::Retry)) }
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(
        *seen.lock().unwrap(),
        [
            (1, 1, 0, "SERVER".to_owned(), true),
            (1, 1, 1, "QUOTA".to_owned(), true)
        ]
    );
    assert_eq!(h.adapter.request_count(), 3);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_eq!(events_of(&agent, "assistant/message").len(), 1);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_error_recovery_keeps_the_failed_prefix_off_the_surface() {
    let h = Harness::new(vec![Reply::Chunks(error_reply("SERVER"))]).await;
    h.ctx
        .on::<AgentRequestError>(
            |args: RequestErrorArgs, next: Next<RequestErrorArgs, Outcome>| {
                args.agent.cancel(CancelCause::User);
                next.run(args)
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert!(events_of(&agent, "assistant/message").is_empty());
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "aborted", "reason": {"kind": "user"}})]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_recovery_listener_ends_the_turn_with_an_error() {
    let h = Harness::new(vec![Reply::Chunks(error_reply("SERVER"))]).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    h.ctx
        .on::<AgentRequestError>(
            move |_args: RequestErrorArgs, _next: Next<RequestErrorArgs, Outcome>| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Err::<Option<RequestErrorAction>, BoxError>("recovery broke".into()) }
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    let message = ends[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("recovery broke"), "{message}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(h.adapter.request_count(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_inside_a_turn_ends_it_with_an_error_naming_the_panic() {
    use dsh_agent_loop::events::{AgentRequest, RequestProposal};
    type Config = Result<dsh_llm::LlmCallConfig, BoxError>;

    let h = Harness::new(vec![Reply::Chunks(text_reply("after the panic"))]).await;
    let errors = record_errors(&h);
    let requests = Arc::new(AtomicUsize::new(0));
    h.ctx
        .on::<AgentRequest>(
            move |proposal: RequestProposal, next: Next<RequestProposal, Config>| {
                let first = requests.fetch_add(1, Ordering::SeqCst) == 0;
                async move {
                    if first {
                        panic!("boom in the request listener");
                    }
                    next.run(proposal).await
                }
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    let message = "turn 1 panicked: boom in the request listener";
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "error", "error": {"message": message, "code": "UNKNOWN"}})]
    );
    let all = kinds(&agent);
    assert_eq!(
        all[all.len() - 4..],
        ["step/start", "user/message", "step/end", "turn/end"],
        "the open step is closed before the turn ends"
    );
    assert_eq!(
        *errors.lock().unwrap(),
        [(1, 1, LlmFailure::unknown(message))]
    );
    assert_eq!(h.adapter.request_count(), 0);
    assert_well_formed(&agent);

    // The driver went idle cleanly: the next message runs the next turn.
    agent.followup(user("again")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    assert_eq!(h.adapter.request_count(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_during_a_tool_call_answers_the_call_before_the_turn_ends() {
    use dsh_tools::{PreToolDecision, ToolError, ToolExecution, ToolsPreExecute};

    use super::support::{echo_tool, tool_reply};

    let h = Harness::new(vec![Reply::Chunks(tool_reply(
        None,
        &[("c1", "echo", json!({"text": "x"}))],
    ))])
    .await;
    h.tool(echo_tool());
    h.ctx
        .on::<ToolsPreExecute>(
            |_exec: ToolExecution,
             _next: Next<ToolExecution, Result<PreToolDecision, ToolError>>| async {
                panic!("pre-execute boom")
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "error", "error": {
            "message": "turn 1 panicked: pre-execute boom", "code": "UNKNOWN"}})]
    );
    let all = kinds(&agent);
    assert_eq!(
        all[all.len() - 5..],
        [
            "assistant/message",
            "tool/call",
            "tool/result",
            "step/end",
            "turn/end"
        ]
    );
    let result = &events_of(&agent, "tool/result")[0];
    assert_eq!(result.data["error"]["code"], "TOOL_OUTCOME_UNKNOWN");
    assert_eq!(
        result.source_event_seqs,
        Some(vec![events_of(&agent, "tool/call")[0].seq])
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_step_starts_its_own_retry_chain() {
    let h = Harness::with(
        fast_retries(),
        vec![
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(text_reply("first")),
            Reply::Chunks(error_reply("SERVER")),
            Reply::Chunks(text_reply("second")),
        ],
    )
    .await;
    let agent = h.agent().await;
    agent.followup(user("one")).unwrap();
    idle(&agent).await;
    agent.followup(user("two")).unwrap();
    idle(&agent).await;

    let retries = events_of(&agent, "llm/retry");
    let chains: Vec<(u64, u64, Value)> = retries
        .iter()
        .map(|event| {
            (
                event.data["turn"].as_u64().unwrap(),
                event.data["retry"].as_u64().unwrap(),
                event.data["retryId"].clone(),
            )
        })
        .collect();
    assert_eq!(chains.len(), 3);
    assert_eq!((chains[0].0, chains[0].1), (1, 1));
    assert_eq!((chains[1].0, chains[1].1), (1, 2));
    assert_eq!((chains[2].0, chains[2].1), (2, 1));
    assert_eq!(chains[0].2, chains[1].2, "one chain per step");
    assert_ne!(chains[1].2, chains[2].2, "a new step starts a new chain");
    let started: Vec<Value> = events_of(&agent, "llm/retry-started")
        .iter()
        .map(|event| event.data["retryId"].clone())
        .collect();
    assert_eq!(
        started,
        chains
            .iter()
            .map(|chain| chain.2.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "completed"}), json!({"kind": "completed"})]
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}
