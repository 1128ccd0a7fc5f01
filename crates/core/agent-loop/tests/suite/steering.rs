//! Steering and continuation: messages steered during a step join the next one,
//! `agent/turn-stopping` may keep a turn going, injected context waits for a wake, and a
//! follow-up sent during a turn becomes the next turn.

use std::sync::{Arc, Mutex, OnceLock};

use dsh_agent_loop::events::{AgentTurnStopping, TurnStopping};
use dsh_agent_loop::{Agent, AgentStatus, InboxTarget};
use dsh_kernel::BoxError;
use dsh_tools::{FnTool, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::support::{
    Harness, Reply, assert_well_formed, cut_off, events_of, idle, kinds, plugin_message,
    request_transcripts, text_reply, tool_reply, turn_ends, user, user_texts,
};

/// Keeps a handle on the agent for tools and listeners registered before it exists.
type Slot = Arc<OnceLock<Arc<Agent>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_steered_during_a_tool_joins_the_next_step() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "slow", json!({}))])),
        Reply::Chunks(text_reply("addressed the steering")),
    ])
    .await;
    let slot: Slot = Arc::default();
    let agent_of_tool = Arc::clone(&slot);
    h.tool(FnTool::new(
        "slow",
        "Steers while running.",
        json!({"type": "object"}),
        move |_args, _run| {
            let steered = agent_of_tool
                .get()
                .map(|agent| agent.steer(user("change of plans")));
            async move {
                steered
                    .expect("the agent exists")
                    .map_err(|error| dsh_tools::ToolError::new(error.to_string()))?;
                Ok(ToolOutput::text("tool done"))
            }
        },
    ));
    let agent = h.agent().await;
    slot.set(Arc::clone(&agent)).unwrap();
    agent.followup(user("start")).unwrap();
    idle(&agent).await;

    assert_eq!(events_of(&agent, "turn/start").len(), 1);
    let steering = events_of(&agent, "user/message")
        .into_iter()
        .find(|event| event.data["content"][0]["text"] == "change of plans")
        .unwrap();
    let second_step = &events_of(&agent, "step/start")[1];
    assert!(
        steering.seq > second_step.seq,
        "logged inside the second step"
    );
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        [
            "user: start",
            "assistant: call c1 slow {}",
            "user: result c1: tool done",
            "user: change of plans",
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_stopping_listener_that_steers_keeps_the_turn_going() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("step 1")),
        Reply::Chunks(text_reply("step 2")),
        Reply::Chunks(text_reply("step 3")),
    ])
    .await;
    let stops = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&stops);
    h.ctx
        .on::<AgentTurnStopping>(move |args: Arc<TurnStopping>| {
            let steps = args
                .agent
                .session()
                .events()
                .iter()
                .filter(|event| event.kind == "step/end")
                .count();
            record.lock().unwrap().push((args.turn, steps));
            let steered = if steps < 3 {
                args.agent
                    .steer(plugin_message("loop-test", "continue"))
                    .map_err(|error| Box::new(error) as BoxError)
            } else {
                Ok(())
            };
            async move { steered.map(|()| None) }
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(*stops.lock().unwrap(), [(1, 1), (1, 2), (1, 3)]);
    assert_eq!(h.adapter.request_count(), 3);
    assert_eq!(events_of(&agent, "turn/start").len(), 1);
    assert_eq!(events_of(&agent, "step/start").len(), 3);
    assert_eq!(user_texts(&agent), ["go", "continue", "continue"]);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_tokens_stays_the_turn_outcome_after_a_later_completed_step() {
    let h = Harness::new(vec![
        Reply::Chunks(cut_off(text_reply("first half"))),
        Reply::Chunks(text_reply("second half")),
    ])
    .await;
    h.ctx
        .on::<AgentTurnStopping>(|args: Arc<TurnStopping>| {
            let steps = args
                .agent
                .session()
                .events()
                .iter()
                .filter(|event| event.kind == "step/end")
                .count();
            let steered = if steps < 2 {
                args.agent
                    .steer(plugin_message(
                        "max-tokens-test",
                        "continue after truncation",
                    ))
                    .map_err(|error| Box::new(error) as BoxError)
            } else {
                Ok(())
            };
            async move { steered.map(|()| None) }
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(h.adapter.request_count(), 2);
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        [
            "user: go",
            "assistant: first half",
            "user: continue after truncation"
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "max-tokens"})]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_turn_stopping_listener_ends_the_turn_with_an_error() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let fail = Arc::new(Mutex::new(true));
    let once = Arc::clone(&fail);
    h.ctx
        .on::<AgentTurnStopping>(move |_args: Arc<TurnStopping>| {
            let failing = std::mem::replace(&mut *once.lock().unwrap(), false);
            async move {
                if failing {
                    Err::<Option<()>, BoxError>("stopping listener broke".into())
                } else {
                    Ok(None)
                }
            }
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert!(
        ends[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stopping listener broke")
    );
    assert_eq!(
        events_of(&agent, "assistant/message").len(),
        1,
        "the step's reply stays logged"
    );
    agent.followup(user("again")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_context_waits_for_the_next_wake() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let agent = h.agent().await;
    agent
        .inject(plugin_message("watcher", "file changed: a.rs"))
        .unwrap();
    assert_eq!(agent.status(), AgentStatus::Idle);
    assert_eq!(agent.pending(InboxTarget::NextStep).unwrap().len(), 1);
    let last = agent.session().events().last().unwrap().clone();
    assert_eq!(last.kind, "agent/inbox/spliced");
    assert_eq!(last.data["target"], "next-step");
    assert_eq!(
        last.data["inserted"][0]["source"],
        json!({"kind": "plugin", "plugin": "watcher"})
    );
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(events_of(&agent, "turn/start").is_empty());
    assert_eq!(h.adapter.request_count(), 0);

    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let transcript = &request_transcripts(&h.adapter)[0];
    assert_eq!(transcript.len(), 2);
    assert!(transcript.contains(&"user: file changed: a.rs".to_owned()));
    assert_eq!(events_of(&agent, "turn/start").len(), 1);
    h.shutdown().await;
}

// On one thread the driver cannot finish before the status is read.
#[tokio::test]
async fn steering_an_idle_agent_starts_a_turn() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let agent = h.agent().await;
    agent.steer(user("steer me")).unwrap();
    assert_eq!(agent.status(), AgentStatus::Running);
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["steer me"]);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_sent_during_a_turn_runs_as_the_next_turn() {
    let gate = Arc::new(Notify::new());
    let h = Harness::new(vec![
        Reply::Gated(Arc::clone(&gate), text_reply("first reply")),
        Reply::Chunks(text_reply("second reply")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("first")).unwrap();
    super::support::eventually("the first request", || h.adapter.request_count() == 1).await;
    agent.followup(user("second")).unwrap();
    assert_eq!(agent.pending(InboxTarget::NextTurn).unwrap().len(), 1);
    gate.notify_one();
    idle(&agent).await;

    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    assert_eq!(turns, [json!(1), json!(2)]);
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        ["user: first", "assistant: first reply", "user: second"]
    );
    let all = kinds(&agent);
    let second_turn = all.iter().rposition(|k| k == "turn/start").unwrap();
    let second_user = all.iter().rposition(|k| k == "user/message").unwrap();
    assert!(second_user > second_turn);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_steered_while_the_model_streams_opens_another_step() {
    let gate = Arc::new(Notify::new());
    let h = Harness::new(vec![
        Reply::Gated(Arc::clone(&gate), text_reply("first answer")),
        Reply::Chunks(text_reply("steered answer")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("question")).unwrap();
    super::support::eventually("the first request", || h.adapter.request_count() == 1).await;
    agent.steer(user("actually, one more thing")).unwrap();
    assert_eq!(agent.pending(InboxTarget::NextStep).unwrap().len(), 1);
    gate.notify_one();
    idle(&agent).await;

    assert_eq!(events_of(&agent, "turn/start").len(), 1);
    assert_eq!(events_of(&agent, "step/start").len(), 2);
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        [
            "user: question",
            "assistant: first answer",
            "user: actually, one more thing"
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_well_formed(&agent);
    h.shutdown().await;
}
