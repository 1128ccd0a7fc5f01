//! The loop's interception points: `agent/pre-step` (enter, rewrite, reject, fail),
//! `agent/request` (model switches, logged as header changes), `agent/session-start` and the
//! inbox notifications.

use std::sync::{Arc, Mutex};

use dsh_agent_loop::events::{
    AgentInboxClaimed, AgentInboxInserted, AgentPreStep, AgentRequest, AgentSessionStart,
    InboxClaim, InboxNotice, PreStep, PreStepDecision, RequestProposal, SessionStart,
};
use dsh_agent_loop::{AgentError, CreateAgentOptions, SessionStartSource};
use dsh_kernel::{BoxError, Next};
use dsh_llm::{ContentBlock, LlmCallConfig};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    Harness, Reply, assert_well_formed, echo_tool, events_of, idle, kinds, plugin_message,
    request_transcripts, route, text_reply, tool_reply, turn_ends, user, user_texts,
};

type Decision = Result<PreStepDecision, BoxError>;
type Config = Result<LlmCallConfig, BoxError>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_step_ends_the_turn_blocked_without_a_model_call() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("never"))]).await;
    h.ctx
        .on::<AgentPreStep>(|_args: PreStep, _next: Next<PreStep, Decision>| async {
            Ok(PreStepDecision::Reject)
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("rm -rf /")).unwrap();
    idle(&agent).await;
    assert_eq!(
        kinds(&agent),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "turn/end"
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "blocked"})]);
    assert_eq!(h.adapter.request_count(), 0);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_step_listener_rewrites_and_adds_messages_before_they_are_logged() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    h.ctx
        .on::<AgentPreStep>(
            |mut args: PreStep, next: Next<PreStep, Decision>| async move {
                for message in &mut args.messages {
                    message.content = vec![ContentBlock::text("rewritten")];
                }
                args.messages
                    .push(plugin_message("test-context", "extra context"));
                next.run(args).await
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("original")).unwrap();
    idle(&agent).await;
    assert_eq!(user_texts(&agent), ["rewritten", "extra context"]);
    assert_eq!(
        events_of(&agent, "user/message")[1].data["source"],
        json!({"kind": "plugin", "plugin": "test-context"})
    );
    assert_eq!(
        request_transcripts(&h.adapter)[0],
        ["user: rewritten", "user: extra context"]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_step_fires_once_per_step_before_the_step_opens() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "echo", json!({"text": "x"}))])),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    h.tool(echo_tool());
    let fires = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&fires);
    h.ctx
        .on::<AgentPreStep>(move |args: PreStep, next: Next<PreStep, Decision>| {
            let last = args
                .agent
                .session()
                .events()
                .last()
                .map(|event| event.kind.to_string());
            record.lock().unwrap().push((
                args.turn,
                args.step,
                args.messages.len(),
                last,
                args.signal.is_cancelled(),
            ));
            next.run(args)
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(
        *fires.lock().unwrap(),
        [
            (1, 1, 1, Some("agent/inbox/spliced".to_owned()), false),
            (1, 2, 0, Some("step/end".to_owned()), false),
        ]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pre_step_listener_fails_the_turn_not_the_loop() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("second turn ok"))]).await;
    let fail = Arc::new(Mutex::new(true));
    let once = Arc::clone(&fail);
    h.ctx
        .on::<AgentPreStep>(move |args: PreStep, next: Next<PreStep, Decision>| {
            let failing = std::mem::replace(&mut *once.lock().unwrap(), false);
            async move {
                if failing {
                    return Err::<PreStepDecision, BoxError>("boom in pre-step".into());
                }
                next.run(args).await
            }
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("first")).unwrap();
    idle(&agent).await;
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    let message = ends[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("boom in pre-step"), "{message}");
    assert_eq!(h.adapter.request_count(), 0);
    assert!(events_of(&agent, "step/start").is_empty());

    agent.followup(user("second")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    assert_eq!(h.adapter.request_count(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_request_switches_the_model_and_the_header_records_it() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let proposals = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&proposals);
    h.ctx
        .on::<AgentRequest>(
            move |proposal: RequestProposal, next: Next<RequestProposal, Config>| {
                record.lock().unwrap().push(proposal.config.clone());
                async move {
                    let mut config = next.run(proposal).await?;
                    config.model = "other-model".into();
                    Ok(config)
                }
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("hi")).unwrap();
    idle(&agent).await;
    assert_eq!(
        *proposals.lock().unwrap(),
        [LlmCallConfig::new("mock", "m")]
    );
    assert_eq!(h.adapter.requests()[0].model, "other-model");
    let header = &events_of(&agent, "request/header")[0];
    assert_eq!(
        header.data["header"]["config"],
        json!({"provider": "mock", "model": "other-model"})
    );
    assert_eq!(
        *events_of(&agent, "request/context")[0].data,
        json!({"provider": "mock", "model": "other-model"})
    );
    let source = &events_of(&agent, "assistant/message")[0].data["message"]["source"];
    assert_eq!(source["model"], "other-model");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_switch_between_steps_logs_a_changed_header_and_context() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "echo", json!({"text": "x"}))])),
        Reply::Chunks(text_reply("done")),
        Reply::Chunks(text_reply("next turn")),
    ])
    .await;
    h.tool(echo_tool());
    let seeds = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seeds);
    h.ctx
        .on::<AgentRequest>(
            move |proposal: RequestProposal, next: Next<RequestProposal, Config>| {
                record.lock().unwrap().push((
                    proposal.turn,
                    proposal.step,
                    proposal.config.model.clone(),
                ));
                let switch = proposal.turn == 1 && proposal.step == 2;
                async move {
                    let mut config = next.run(proposal).await?;
                    if switch {
                        config.model = "bigger".into();
                    }
                    Ok(config)
                }
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    agent.followup(user("more")).unwrap();
    idle(&agent).await;

    let models: Vec<String> = h
        .adapter
        .requests()
        .iter()
        .map(|request| request.model.clone())
        .collect();
    assert_eq!(
        models,
        ["m", "bigger", "bigger"],
        "the last logged config is the next seed"
    );
    assert_eq!(
        *seeds.lock().unwrap(),
        [
            (1, 1, "m".to_owned()),
            (1, 2, "m".to_owned()),
            (2, 1, "bigger".to_owned())
        ]
    );
    let headers = events_of(&agent, "request/header");
    let reasons: Vec<&str> = headers
        .iter()
        .map(|event| event.data["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["initial", "change"]);
    assert_eq!(headers[1].data["header"]["config"]["model"], "bigger");
    let contexts: Vec<serde_json::Value> = events_of(&agent, "request/context")
        .iter()
        .map(|event| event.data["model"].clone())
        .collect();
    assert_eq!(contexts, [json!("m"), json!("bigger")]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_fires_once_and_may_inject_context_for_the_first_request() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let starts = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&starts);
    h.ctx
        .on::<AgentSessionStart>(move |start: &SessionStart| {
            record.lock().unwrap().push(start.source);
            start
                .agent
                .inject(plugin_message(
                    "agent-instructions",
                    "Read AGENTS.md first.",
                ))
                .map_err(|error| Box::new(error) as BoxError)
        })
        .unwrap();
    let agent = h.agent().await;
    assert_eq!(*starts.lock().unwrap(), [SessionStartSource::Startup]);
    assert!(
        events_of(&agent, "turn/start").is_empty(),
        "inject does not wake the agent"
    );
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let transcript = &request_transcripts(&h.adapter)[0];
    assert_eq!(transcript.len(), 2, "{transcript:?}");
    assert!(transcript.contains(&"user: Read AGENTS.md first.".to_owned()));
    assert!(transcript.contains(&"user: go".to_owned()));
    assert_eq!(starts.lock().unwrap().len(), 1);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbox_notifications_report_inserted_and_claimed_messages() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let log = Arc::new(Mutex::new(Vec::new()));
    let (inserted, claimed) = (Arc::clone(&log), Arc::clone(&log));
    h.ctx
        .on::<AgentInboxInserted>(move |notice: &InboxNotice| {
            inserted
                .lock()
                .unwrap()
                .push(format!("inserted {}", notice.message.id));
            Ok(())
        })
        .unwrap();
    h.ctx
        .on::<AgentInboxClaimed>(move |claim: &InboxClaim| {
            claimed.lock().unwrap().push(format!(
                "claimed {} in turn {}",
                claim.message.id, claim.turn
            ));
            Ok(())
        })
        .unwrap();
    let agent = h
        .agents
        .create(CreateAgentOptions {
            agent_options: route(),
            ..CreateAgentOptions::default()
        })
        .await
        .unwrap();
    let message = user("hi");
    let id = message.id.clone();
    agent.followup(message).unwrap();
    idle(&agent).await;
    assert_eq!(
        *log.lock().unwrap(),
        [format!("inserted {id}"), format!("claimed {id} in turn 1")]
    );
    // A message id may be pending only once.
    let twice = user("twice");
    agent.inject(twice.clone()).unwrap();
    let refused = agent.inject(twice.clone()).unwrap_err();
    assert!(matches!(refused, AgentError::Invalid(_)), "{refused:?}");
    assert_eq!(
        refused.to_string(),
        format!(
            "agent \"{}\": message \"{}\" is already pending in the next-step queue",
            agent.id(),
            twice.id
        )
    );
    // The other queue is checked too, and named.
    let refused = agent.followup(twice.clone()).unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "agent \"{}\": message \"{}\" is already pending in the next-step queue",
            agent.id(),
            twice.id
        )
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_session_refuses_surfaces_the_store_error() {
    use dsh_session::{EventNotice, SessionEventAppended, StoreError};

    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let agent = h.agent().await;
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&refusals);
    let watched = Arc::clone(&agent);
    h.ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            if notice.event.kind == "turn/start" {
                // Appending from a listener of the same session is refused by the store.
                let refused = watched.inject(user("from the listener")).unwrap_err();
                seen.lock().unwrap().push(refused);
            }
            Ok(())
        })
        .unwrap();
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let refusals = std::mem::take(&mut *refusals.lock().unwrap());
    assert_eq!(refusals.len(), 1);
    assert!(
        matches!(&refusals[0], AgentError::Store(StoreError::Reentrant(id)) if id == agent.id()),
        "{:?}",
        refusals[0]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_step_rewritten_to_nothing_closes_the_turn_without_a_step() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("never"))]).await;
    h.ctx
        .on::<AgentPreStep>(|_args: PreStep, _next: Next<PreStep, Decision>| async {
            Ok(PreStepDecision::Enter(Vec::new()))
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("dropped")).unwrap();
    idle(&agent).await;
    assert_eq!(
        kinds(&agent),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "turn/end"
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_eq!(h.adapter.request_count(), 0);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_step_rewritten_to_nothing_ends_the_turn_after_its_last_step() {
    use dsh_agent_loop::events::{AgentTurnStopping, TurnStopping};

    let h = Harness::new(vec![Reply::Chunks(text_reply("only step"))]).await;
    h.ctx
        .on::<AgentTurnStopping>(|args: Arc<TurnStopping>| {
            let steps = args
                .agent
                .session()
                .events()
                .iter()
                .filter(|event| event.kind == "step/end")
                .count();
            let steered = if steps == 1 {
                args.agent
                    .steer(plugin_message("loop", "one more"))
                    .map_err(|error| Box::new(error) as BoxError)
            } else {
                Ok(())
            };
            async move { steered.map(|()| None) }
        })
        .unwrap();
    h.ctx
        .on::<AgentPreStep>(|args: PreStep, next: Next<PreStep, Decision>| async move {
            if args.step > 1 {
                return Ok(PreStepDecision::Enter(Vec::new()));
            }
            next.run(args).await
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(events_of(&agent, "step/start").len(), 1);
    assert_eq!(h.adapter.request_count(), 1);
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_eq!(
        user_texts(&agent),
        ["go"],
        "the rewritten steer was not logged"
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_request_listener_fails_the_turn_before_any_model_call() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("never"))]).await;
    h.ctx
        .on::<AgentRequest>(
            |_proposal: RequestProposal, _next: Next<RequestProposal, Config>| async {
                Err::<LlmCallConfig, BoxError>("no budget left".into())
            },
        )
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
            .contains("no budget left")
    );
    assert_eq!(h.adapter.request_count(), 0);
    assert!(events_of(&agent, "request/header").is_empty());
    assert_well_formed(&agent);
    h.shutdown().await;
}
