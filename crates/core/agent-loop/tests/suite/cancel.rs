//! Cancellation: mid-stream (the visible prefix is kept), during tool calls (started calls
//! drain, unstarted ones get synthetic results), the inbox (cleared or kept), latched wakes,
//! the first cause, and disposal.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use dsh_agent_loop::events::{AgentStatusChanged, StatusChange};
use dsh_agent_loop::{Agent, AgentStatus, CancelCause, InboxTarget};
use dsh_llm::{ContentBlock, StreamChunk, TokenUsage};
use dsh_session::{EventNotice, SessionEventAppended};
use dsh_tools::{FnTool, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::support::{
    Harness, Reply, Setup, assert_well_formed, echo_tool, events_of, idle, kinds, object_schema,
    request_transcripts, text_block, text_reply, tool_block, tool_reply, turn_ends, user,
    user_texts, within,
};

fn partial_text() -> Vec<StreamChunk> {
    vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "text".into(),
        },
        StreamChunk::TextDelta {
            index: 0,
            text: "partial".into(),
        },
    ]
}

fn aborted_by_user() -> Value {
    json!({"kind": "aborted", "reason": {"kind": "user"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_keeps_the_streamed_prefix_as_an_interrupted_message() {
    let h = Harness::new(vec![
        Reply::Hang(partial_text()),
        Reply::Chunks(text_reply("after")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    assert_eq!(agent.status(), AgentStatus::Running);
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    let chunks = events_of(&agent, "assistant/chunk");
    assert_eq!(chunks.len(), 2, "only the delivered chunks are logged");
    let message = &events_of(&agent, "assistant/message")[0];
    assert_eq!(
        message.data["message"]["content"],
        json!([{"type": "text", "text": "partial"}])
    );
    assert_eq!(message.data["interrupted"], true);
    assert_eq!(
        message.source_event_seqs,
        Some(chunks.iter().map(|chunk| chunk.seq).collect())
    );
    let all = kinds(&agent);
    let at = |kind: &str| all.iter().position(|k| k == kind).unwrap();
    assert!(at("assistant/message") < at("step/end"));
    assert!(at("step/end") < at("turn/end"));
    assert_well_formed(&agent);

    // The model sees what the user saw.
    agent.followup(user("continue")).unwrap();
    idle(&agent).await;
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        ["user: go", "assistant: partial", "user: continue"]
    );
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_before_visible_content_keeps_no_message() {
    let h = Harness::new(vec![Reply::Hang(vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "tool-call".into(),
        },
        StreamChunk::ToolCallDelta {
            index: 0,
            id: "c1".into(),
            name: Some("read".into()),
            arguments_delta: "{\"pa".into(),
        },
    ])])
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;
    assert!(events_of(&agent, "assistant/message").is_empty());
    assert!(events_of(&agent, "tool/call").is_empty());
    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_drops_a_half_streamed_tool_call_and_keeps_the_text_before_it() {
    let mut chunks = text_block(0, "reading the file");
    chunks.extend(
        tool_block(1, "c1", "read", &json!({"path": "x"}))
            .into_iter()
            .take(2),
    );
    let h = Harness::new(vec![Reply::Hang(chunks)]).await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;
    let message = &events_of(&agent, "assistant/message")[0];
    assert_eq!(
        message.data["message"]["content"],
        json!([{"type": "text", "text": "reading the file"}])
    );
    assert!(events_of(&agent, "tool/call").is_empty());
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_reasoning_keeps_the_reasoning_and_its_usage() {
    let h = Harness::new(vec![Reply::Hang(vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "reasoning".into(),
        },
        StreamChunk::ReasoningDelta {
            index: 0,
            text: "thinking about it".into(),
        },
        StreamChunk::Usage {
            usage: TokenUsage {
                input_tokens: 7,
                output_tokens: 4,
                ..TokenUsage::default()
            },
        },
    ])])
    .await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;
    let message = &events_of(&agent, "assistant/message")[0];
    assert_eq!(
        message.data["message"]["content"],
        json!([{"type": "reasoning", "text": "thinking about it"}])
    );
    assert_eq!(
        message.data["usage"],
        json!({"inputTokens": 7, "outputTokens": 4})
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_clears_queued_follow_ups() {
    let h = Harness::new(vec![Reply::Hang(partial_text())]).await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    agent.followup(user("queued tail")).unwrap();
    agent.steer(user("queued steer")).unwrap();
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    assert_eq!(user_texts(&agent), ["go"]);
    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    assert_eq!(events_of(&agent, "turn/start").len(), 1);
    assert_eq!(h.adapter.request_count(), 1);
    assert!(agent.pending(InboxTarget::NextTurn).unwrap().is_empty());
    assert!(agent.pending(InboxTarget::NextStep).unwrap().is_empty());
    let cancelled: Vec<Value> = events_of(&agent, "agent/inbox/spliced")
        .iter()
        .filter(|event| event.data.get("outcome").and_then(Value::as_str) == Some("canceled"))
        .map(|event| (*event.data).clone())
        .collect();
    assert_eq!(cancelled.len(), 2, "{cancelled:?}");
    assert_eq!(cancelled[0]["removedCount"], 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_keeping_the_inbox_parks_queued_work_until_the_next_wake() {
    let h = Harness::new(vec![
        Reply::Hang(partial_text()),
        Reply::Chunks(text_reply("preserved reply")),
        Reply::Chunks(text_reply("wake reply")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("active")).unwrap();
    h.adapter.wait_hung().await;
    agent.followup(user("preserved")).unwrap();
    agent.cancel_keep_inbox(CancelCause::User);
    idle(&agent).await;

    assert_eq!(user_texts(&agent), ["active"]);
    assert_eq!(agent.pending(InboxTarget::NextTurn).unwrap().len(), 1);
    assert_eq!(h.adapter.request_count(), 1);
    assert_eq!(agent.status(), AgentStatus::Idle);

    agent.followup(user("wake it")).unwrap();
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["active", "preserved", "wake it"]);
    assert_eq!(h.adapter.request_count(), 3);
    assert_eq!(
        turn_ends(&agent),
        [
            aborted_by_user(),
            json!({"kind": "completed"}),
            json!({"kind": "completed"})
        ]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_sent_after_a_cancel_is_latched_and_runs_once_the_turn_is_over() {
    let h = Harness::new(vec![
        Reply::Hang(partial_text()),
        Reply::Chunks(text_reply("B reply")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("active")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel_keep_inbox(CancelCause::User);
    agent.followup(user("B")).unwrap();
    idle(&agent).await;

    assert_eq!(user_texts(&agent), ["active", "B"]);
    assert_eq!(h.adapter.request_count(), 2);
    assert!(agent.pending(InboxTarget::NextTurn).unwrap().is_empty());
    assert_eq!(
        turn_ends(&agent),
        [aborted_by_user(), json!({"kind": "completed"})]
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_cancel_drops_a_latched_wake_with_the_inbox() {
    let h = Harness::new(vec![
        Reply::Hang(partial_text()),
        Reply::Chunks(text_reply("C reply")),
    ])
    .await;
    // Hold the aborted turn's driver as it announces going idle until B has been sent and
    // cancelled, so B meets a running activity (a latched wake), never an idle agent that
    // would start a turn for it.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let held = std::sync::Mutex::new(held);
    h.ctx
        .on::<AgentStatusChanged>(move |change: &StatusChange| {
            if change.status == AgentStatus::Idle {
                // A dropped sender lets this and every later change through at once.
                let _ = held
                    .lock()
                    .unwrap()
                    .recv_timeout(std::time::Duration::from_secs(10));
            }
            Ok::<(), dsh_kernel::BoxError>(())
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("active")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel_keep_inbox(CancelCause::User);
    agent.followup(user("B")).unwrap();
    agent.cancel(CancelCause::User);
    drop(release);
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["active"]);
    assert_eq!(h.adapter.request_count(), 1);
    assert!(agent.pending(InboxTarget::NextTurn).unwrap().is_empty());

    agent.followup(user("C")).unwrap();
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["active", "C"]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_idle_agent_changes_nothing() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("reply"))]).await;
    let agent = h.agent().await;
    agent.cancel(CancelCause::User);
    agent.followup(user("real prompt")).unwrap();
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["real prompt"]);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    h.shutdown().await;
}

// On one thread the driver cannot start before the cancel: the wake and the cancel land
// before the turn opens.
#[tokio::test]
async fn cancel_right_after_a_wake_runs_no_model_call() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("should not run"))]).await;
    let agent = h.agent().await;
    agent.followup(user("drop me first")).unwrap();
    agent.followup(user("drop me second")).unwrap();
    agent.cancel(CancelCause::User);
    idle(&agent).await;
    assert_eq!(agent.status(), AgentStatus::Idle);
    assert!(user_texts(&agent).is_empty());
    assert_eq!(h.adapter.request_count(), 0);
    assert!(events_of(&agent, "step/start").is_empty());
    assert!(agent.pending(InboxTarget::NextTurn).unwrap().is_empty());
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_cancel_cause_wins() {
    let h = Harness::new(vec![Reply::Hang(partial_text())]).await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    agent.cancel(CancelCause::Hook {
        reason: "budget".into(),
    });
    agent.cancel(CancelCause::User);
    idle(&agent).await;
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "aborted", "reason": {"kind": "hook", "reason": "budget"}})]
    );
    h.shutdown().await;
}

/// What a [`draining_tool`] reports: its starts and how many bodies ran to their end.
#[derive(Default)]
struct Probe {
    started: Notify,
    starts: AtomicUsize,
    drained: AtomicUsize,
}

/// A tool that announces its start, then waits for its cancellation and returns normally.
fn draining_tool(name: &str, probe: &Arc<Probe>, parallel: bool) -> FnTool {
    let probe = Arc::clone(probe);
    let tool = FnTool::new(
        name,
        "Runs until cancelled.",
        object_schema(&["id"]),
        move |args, run| {
            let probe = Arc::clone(&probe);
            async move {
                probe.starts.fetch_add(1, Ordering::SeqCst);
                probe.started.notify_one();
                run.signal.cancelled().await;
                probe.drained.fetch_add(1, Ordering::SeqCst);
                let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
                Ok(ToolOutput::text(format!("{id} drained")))
            }
        },
    );
    if parallel {
        tool.concurrency_safe(|_| true)
    } else {
        tool
    }
}

fn result_of(event: &dsh_session::SessionEvent) -> (String, String, bool) {
    let block = &event.data["message"]["content"][0];
    (
        block["toolCallId"].as_str().unwrap().to_owned(),
        block["content"][0]["text"].as_str().unwrap().to_owned(),
        block["isError"].as_bool().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_tool_drains_it_and_closes_the_unstarted_calls() {
    let h = Harness::new(vec![Reply::Chunks(tool_reply(
        None,
        &[
            ("a", "slow", json!({"id": "a"})),
            ("b", "echo", json!({"text": "b"})),
            ("c", "echo", json!({"text": "c"})),
        ],
    ))])
    .await;
    let probe = Arc::new(Probe::default());
    h.tool(draining_tool("slow", &probe, false));
    h.tool(echo_tool());
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    within("the tool to start", probe.started.notified()).await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    let calls: Vec<String> = events_of(&agent, "tool/call")
        .iter()
        .map(|event| event.data["callId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(calls, ["a", "b", "c"]);
    let results: Vec<_> = events_of(&agent, "tool/result")
        .iter()
        .map(|event| result_of(event))
        .collect();
    // The started body ran to its end; finishing after the cancel, it reads as aborted
    // (the tool pipeline's rule), and it is committed in its place.
    let skipped = "Error: tool call aborted before dispatch".to_owned();
    assert_eq!(
        results,
        [
            ("a".into(), "Error: tool call aborted".into(), true),
            ("b".into(), skipped.clone(), true),
            ("c".into(), skipped, true),
        ]
    );
    assert_eq!(
        events_of(&agent, "tool/result")[0].data["error"],
        json!({"name": "AbortError", "code": "ABORTED"})
    );
    for event in &events_of(&agent, "tool/result")[1..] {
        assert_eq!(
            event.data["error"],
            json!({"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"})
        );
    }
    assert_eq!(
        probe.drained.load(Ordering::SeqCst),
        1,
        "the started body ran to its end"
    );
    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    assert_eq!(h.adapter.request_count(), 1, "no step follows the cancel");
    assert_well_formed(&agent);

    // The next request pairs every call with its result.
    h.adapter.push(Reply::Chunks(text_reply("ok")));
    agent.followup(user("next")).unwrap();
    idle(&agent).await;
    let transcript = &request_transcripts(&h.adapter)[1];
    assert_eq!(transcript.len(), 6, "{transcript:?}");
    assert_eq!(
        transcript[4],
        "user: result c (error): Error: tool call aborted before dispatch"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_parallel_group_drains_every_started_call() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxParallelToolCalls": 2})),
            ..Setup::default()
        },
        vec![Reply::Chunks(tool_reply(
            None,
            &[
                ("a", "slow", json!({"id": "a"})),
                ("b", "slow", json!({"id": "b"})),
                ("c", "slow", json!({"id": "c"})),
            ],
        ))],
    )
    .await;
    let probe = Arc::new(Probe::default());
    h.tool(draining_tool("slow", &probe, true));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    super::support::eventually("both slots to fill", || {
        probe.starts.load(Ordering::SeqCst) == 2
    })
    .await;
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    let results: Vec<_> = events_of(&agent, "tool/result")
        .iter()
        .map(|event| result_of(event))
        .collect();
    assert_eq!(
        results,
        [
            ("a".into(), "Error: tool call aborted".into(), true),
            ("b".into(), "Error: tool call aborted".into(), true),
            (
                "c".into(),
                "Error: tool call aborted before dispatch".into(),
                true
            ),
        ]
    );
    assert_eq!(
        probe.starts.load(Ordering::SeqCst),
        2,
        "the third call never started"
    );
    assert_eq!(probe.drained.load(Ordering::SeqCst), 2);
    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_from_an_assistant_message_observer_runs_no_tool() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "danger", json!({}))])),
        Reply::Chunks(text_reply("recovered")),
    ])
    .await;
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    h.tool(FnTool::new(
        "danger",
        "Must not run after cancellation.",
        json!({"type": "object"}),
        move |_args, _run| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolOutput::text("ran")) }
        },
    ));
    let agent = h.agent().await;
    let target: Arc<OnceLock<Arc<Agent>>> = Arc::new(OnceLock::new());
    target.set(Arc::clone(&agent)).unwrap();
    let observer = Arc::clone(&target);
    let listener = h
        .ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| {
            if let Some(agent) = observer.get()
                && notice.session.id() == agent.id()
                && notice.event.kind == "assistant/message"
            {
                agent.cancel(CancelCause::User);
            }
            Ok(())
        })
        .unwrap();
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    listener.dispose().await;

    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(turn_ends(&agent), [aborted_by_user()]);
    let result = &events_of(&agent, "tool/result")[0];
    assert_eq!(
        result.data["error"],
        json!({"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"})
    );
    assert_well_formed(&agent);

    agent.followup(user("continue safely")).unwrap();
    idle(&agent).await;
    let replayed = &h.adapter.requests()[1].messages;
    let result = replayed
        .iter()
        .flat_map(|message| &message.content)
        .find(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .unwrap();
    assert!(matches!(
        result,
        ContentBlock::ToolResult { tool_call_id, is_error: Some(true), .. } if tool_call_id == "c1"
    ));
    assert_eq!(
        turn_ends(&agent),
        [aborted_by_user(), json!({"kind": "completed"})]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposing_a_running_agent_ends_its_turn_and_retires_its_session() {
    let h = Harness::new(vec![Reply::Hang(partial_text())]).await;
    let agent = h.agent().await;
    let id = agent.id().to_owned();
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    within("disposal", h.agents.dispose(&id)).await.unwrap();

    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "aborted", "reason": {"kind": "disposed"}})]
    );
    assert_eq!(agent.status(), AgentStatus::Idle);
    assert!(h.agents.get(&id).is_none());
    assert!(h.sessions.get(&id).is_none());
    assert!(agent.followup(user("late")).is_err());
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_kernel_down_ends_a_running_turn_as_disposed() {
    let h = Harness::new(vec![Reply::Hang(partial_text())]).await;
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    within("the kernel to shut down", h.kernel.shutdown()).await;
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "aborted", "reason": {"kind": "disposed"}})]
    );
    assert_eq!(agent.status(), AgentStatus::Idle);
    assert_well_formed(&agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_right_after_the_message_ends_a_logged_turn() {
    // The reply never finishes, so the stop below always lands inside the turn (the driver
    // may or may not have sent the request by then).
    let h = Harness::new(vec![Reply::Hang(partial_text())]).await;
    let agent = h.agent().await;
    // As in dsh, the wake opens the turn before `followup` returns.
    agent.followup(user("go")).unwrap();
    assert!(
        kinds(&agent).contains(&"turn/start".to_owned()),
        "{:?}",
        kinds(&agent)
    );
    agent.cancel(CancelCause::User);
    idle(&agent).await;

    assert_eq!(
        turn_ends(&agent),
        [aborted_by_user()],
        "{:?}",
        kinds(&agent)
    );
    assert!(h.adapter.request_count() <= 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}
