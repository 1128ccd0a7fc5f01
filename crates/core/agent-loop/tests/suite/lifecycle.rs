//! Agents' lives: the creation transaction (a veto or a failing setup leaves nothing behind),
//! queued follow-ups becoming turns, the step limit, disposal, and the loop's row config.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_agent_loop::events::{
    AgentCreated, AgentDisposed, AgentErrorEvent, AgentErrorNotice, AgentStatusChanged,
    AgentTurnStopping, StatusChange, TurnStopping,
};
use dsh_agent_loop::{
    Agent, AgentError, AgentLoopPlugin, AgentOptions, AgentStatus, CreateAgentOptions, InboxTarget,
    STEP_LIMIT,
};
use dsh_kernel::{BoxError, FiberState, Kernel};
use dsh_session::{SessionCreated, SessionPlugin};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{
    Harness, Reply, Setup, assert_well_formed, echo_tool, events_of, eventually, idle,
    plugin_message, route, text_reply, tool_reply, turn_ends, user, user_texts,
};

fn create_options(id: &str) -> CreateAgentOptions {
    CreateAgentOptions {
        session_id: Some(id.into()),
        agent_options: route(),
        cwd: Some("/tmp".into()),
        setup: None,
    }
}

fn assert_nothing_left(h: &Harness, id: &str) {
    assert!(h.sessions.get(id).is_none(), "no session stays behind");
    assert!(h.sessions.ids().is_empty(), "{:?}", h.sessions.ids());
    assert!(h.agents.get(id).is_none(), "no agent stays behind");
    assert!(h.agents.ids().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vetoing_created_listener_rolls_the_creation_back() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let veto = h
        .ctx
        .on::<AgentCreated>(|_agent: &Arc<Agent>| Err::<(), BoxError>("not this one".into()))
        .unwrap();
    let refused = h.agents.create(create_options("vetoed")).await.unwrap_err();
    assert!(matches!(refused, AgentError::Plugin(_)), "{refused:?}");
    assert!(refused.to_string().contains("not this one"), "{refused}");
    assert_nothing_left(&h, "vetoed");

    // The identity is free again.
    veto.dispose().await;
    let agent = h.agents.create(create_options("vetoed")).await.unwrap();
    assert_eq!(agent.id(), "vetoed");
    assert!(h.sessions.get("vetoed").is_some());
    agent.followup(user("hi")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_setup_publishes_nothing() {
    let h = Harness::new(vec![]).await;
    let created = Arc::new(AtomicUsize::new(0));
    let (sessions_seen, agents_seen) = (Arc::clone(&created), Arc::clone(&created));
    h.ctx
        .on::<SessionCreated>(move |_session: &Arc<dsh_session::LiveSession>| {
            sessions_seen.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    h.ctx
        .on::<AgentCreated>(move |_agent: &Arc<Agent>| {
            agents_seen.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    let failed = h
        .agents
        .create(CreateAgentOptions {
            setup: Some(Box::new(|_agent: &Arc<Agent>| {
                Err::<(), BoxError>("setup broke".into())
            })),
            ..create_options("doomed")
        })
        .await
        .unwrap_err();
    assert!(failed.to_string().contains("setup broke"), "{failed}");
    assert_nothing_left(&h, "doomed");
    assert_eq!(created.load(Ordering::SeqCst), 0, "nothing was announced");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_runs_before_publication_and_may_seed_context() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let agent = h
        .agents
        .create(CreateAgentOptions {
            setup: Some(Box::new(|agent: &Arc<Agent>| {
                agent
                    .inject(plugin_message("setup", "seeded context"))
                    .map_err(|error| Box::new(error) as BoxError)
            })),
            ..create_options("seeded")
        })
        .await
        .unwrap();
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let mut texts = user_texts(&agent);
    texts.sort();
    assert_eq!(texts, ["go", "seeded context"]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_options_and_duplicate_ids_are_refused() {
    let h = Harness::new(vec![]).await;
    let invalid = h
        .agents
        .create(CreateAgentOptions {
            agent_options: AgentOptions {
                max_tokens: Some(0),
                ..route()
            },
            ..create_options("bad-cap")
        })
        .await
        .unwrap_err();
    assert!(
        invalid
            .to_string()
            .contains("agent maxTokens must be a positive safe integer"),
        "{invalid}"
    );
    assert_nothing_left(&h, "bad-cap");

    let agent = h.agents.create(create_options("taken")).await.unwrap();
    let duplicate = h.agents.create(create_options("taken")).await.unwrap_err();
    assert!(
        duplicate.to_string().contains("already live"),
        "{duplicate}"
    );
    assert_eq!(h.agents.ids(), ["taken"]);
    assert_eq!(h.sessions.ids(), ["taken"]);
    assert_eq!(agent.id(), "taken");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_queued_while_running_become_consecutive_turns_before_idle() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let h = Harness::new(vec![
        Reply::Gated(Arc::clone(&gate), text_reply("zero")),
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let agent = h.agent().await;
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&statuses);
    h.ctx
        .on::<AgentStatusChanged>(move |change: &StatusChange| {
            record.lock().unwrap().push(change.status);
            Ok(())
        })
        .unwrap();
    agent.followup(user("running")).unwrap();
    eventually("the first request", || h.adapter.request_count() == 1).await;
    agent.followup(user("first")).unwrap();
    agent.followup(user("second")).unwrap();
    assert_eq!(agent.pending(InboxTarget::NextTurn).unwrap().len(), 2);
    let released = Arc::clone(&gate);
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        released.notify_one();
    });
    idle(&agent).await;

    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    assert_eq!(turns, [json!(1), json!(2), json!(3)]);
    assert_eq!(user_texts(&agent), ["running", "first", "second"]);
    assert_eq!(
        turn_ends(&agent).len(),
        3,
        "when_idle waited for every turn"
    );
    assert_eq!(
        *statuses.lock().unwrap(),
        [AgentStatus::Running, AgentStatus::Idle],
        "one activity covers the three turns"
    );
    assert!(agent.pending(InboxTarget::NextTurn).unwrap().is_empty());
    assert_well_formed(&agent);
    h.shutdown().await;
}

// On one thread both follow-ups are queued before the driver first runs.
#[tokio::test]
async fn a_burst_of_follow_ups_gives_each_its_own_turn() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("first")).unwrap();
    agent.followup(user("second")).unwrap();
    idle(&agent).await;
    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    assert_eq!(turns, [json!(1), json!(2)]);
    assert_eq!(user_texts(&agent), ["first", "second"]);
    assert_eq!(
        super::support::request_transcripts(&h.adapter)[1],
        ["user: first", "assistant: one", "user: second"]
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

fn always_a_tool(h: &Harness) {
    h.tool(echo_tool());
    h.adapter.set_fallback(Arc::new(|index, _request| {
        tool_reply(
            None,
            &[(&format!("call-{index}"), "echo", json!({"text": "again"}))],
        )
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_ends_a_runaway_turn() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxSteps": 1})),
            ..Setup::default()
        },
        vec![],
    )
    .await;
    always_a_tool(&h);
    let agent = h.agent().await;
    agent.followup(user("loop forever")).unwrap();
    idle(&agent).await;

    assert_eq!(h.adapter.request_count(), 1);
    let ends = turn_ends(&agent);
    assert_eq!(ends[0]["kind"], "error");
    assert_eq!(ends[0]["error"]["code"], STEP_LIMIT);
    let message = ends[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("maxSteps"), "{message}");
    assert_eq!(events_of(&agent, "step/start").len(), 1);
    assert_eq!(
        events_of(&agent, "tool/result").len(),
        1,
        "step 1 ran its tool"
    );
    assert_well_formed(&agent);

    // A follow-up continues the conversation.
    h.adapter.push(Reply::Chunks(text_reply("stopped")));
    agent.followup(user("stop now")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_counts_every_step_of_the_turn() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxSteps": 3})),
            ..Setup::default()
        },
        vec![],
    )
    .await;
    always_a_tool(&h);
    let agent = h.agent().await;
    agent.followup(user("loop forever")).unwrap();
    idle(&agent).await;
    assert_eq!(h.adapter.request_count(), 3);
    assert_eq!(events_of(&agent, "step/start").len(), 3);
    assert_eq!(turn_ends(&agent)[0]["error"]["code"], STEP_LIMIT);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_limit_turn_is_reported_on_agent_error() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxSteps": 1})),
            ..Setup::default()
        },
        vec![],
    )
    .await;
    always_a_tool(&h);
    let errors = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&errors);
    h.ctx
        .on::<AgentErrorEvent>(move |notice: &AgentErrorNotice| {
            record.lock().unwrap().push(notice.error.code.clone());
            Ok(())
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("loop forever")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[0]["kind"], "error");
    // `agent/error` is documented as "a turn failed (its `turn/end` says `error`)".
    assert_eq!(*errors.lock().unwrap(), [STEP_LIMIT.to_owned()]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_does_not_swallow_a_claimed_steering_message() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxSteps": 1})),
            ..Setup::default()
        },
        vec![Reply::Chunks(text_reply("one step"))],
    )
    .await;
    let steered = Arc::new(AtomicUsize::new(0));
    let once = Arc::clone(&steered);
    h.ctx
        .on::<AgentTurnStopping>(move |args: Arc<TurnStopping>| {
            let result = if once.fetch_add(1, Ordering::SeqCst) == 0 {
                args.agent
                    .steer(user("please also do this"))
                    .map_err(|error| Box::new(error) as BoxError)
            } else {
                Ok(())
            };
            async move { result.map(|()| None) }
        })
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent)[0]["error"]["code"], STEP_LIMIT);
    // The steered message was claimed for step 2, which the limit refused. It must not
    // vanish: either the model saw it (a logged user/message) or it is still pending.
    let logged = user_texts(&agent).contains(&"please also do this".to_owned());
    let pending = agent
        .pending(InboxTarget::NextStep)
        .unwrap()
        .iter()
        .chain(agent.pending(InboxTarget::NextTurn).unwrap().iter())
        .any(|message| message.content == [dsh_llm::ContentBlock::text("please also do this")]);
    assert!(
        logged || pending,
        "the steering message was claimed and dropped: user messages {:?}, inbox {:?}, log {:?}",
        user_texts(&agent),
        agent.pending(InboxTarget::NextStep).unwrap(),
        super::support::kinds(&agent)
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposing_an_idle_agent_announces_it_and_frees_its_identity() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("ok"))]).await;
    let disposed = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&disposed);
    h.ctx
        .on::<AgentDisposed>(move |agent: &Arc<Agent>| {
            record.lock().unwrap().push(agent.id().to_owned());
            Ok(())
        })
        .unwrap();
    let agent = h
        .agents
        .create(create_options("short-lived"))
        .await
        .unwrap();
    agent.followup(user("hi")).unwrap();
    idle(&agent).await;
    h.agents.dispose("short-lived").await.unwrap();
    assert_eq!(*disposed.lock().unwrap(), ["short-lived"]);
    assert_nothing_left(&h, "short-lived");
    assert!(h.agents.dispose("short-lived").await.is_err());
    assert!(agent.followup(user("late")).is_err());
    let again = h
        .agents
        .create(create_options("short-lived"))
        .await
        .unwrap();
    assert_eq!(again.session().events().len(), 0, "a new, empty session");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_agents_start_with_the_loop() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({
                "agents": [{"id": "cfg", "sessionId": "cfg-1", "provider": "mock",
                            "model": "m", "cwd": "/work/cfg"}],
            })),
            ..Setup::default()
        },
        vec![Reply::Chunks(text_reply("configured"))],
    )
    .await;
    eventually("the configured agent", || h.agents.get("cfg-1").is_some()).await;
    let agent = h.agents.get("cfg-1").unwrap();
    assert_eq!(agent.session().header().cwd.as_deref(), Some("/work/cfg"));
    assert_eq!(agent.options(), &route());
    agent.followup(user("hi")).unwrap();
    idle(&agent).await;
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_loop_config_fails_the_plugin() {
    for config in [
        json!({"maxSteps": 0}),
        json!({"maxParallelToolCalls": 0}),
        json!({"maxStep": 2}),
        json!({"agents": [{"id": "a", "sessionId": "s", "resumeSessionId": "s"}]}),
    ] {
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(SessionPlugin, json!({})).unwrap();
        ctx.plugin(dsh_llm::LlmPlugin, Value::Null).unwrap();
        ctx.plugin(dsh_tools::ToolsPlugin, json!({})).unwrap();
        ctx.plugin(dsh_system_prompt::SystemPromptPlugin, json!({}))
            .unwrap();
        let agent_loop = ctx.plugin(AgentLoopPlugin, config.clone()).unwrap();
        kernel.settle().await;
        assert_eq!(agent_loop.state(), FiberState::Failed, "{config}");
        assert!(ctx.get(&dsh_agent_loop::AGENTS).is_none());
        kernel.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_is_also_dshs_agent_loop_service_with_the_row_settings() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxParallelToolCalls": 3, "maxSteps": 7})),
            ..Setup::default()
        },
        vec![],
    )
    .await;
    let driver = h.ctx.get(&dsh_agent_loop::AGENT_LOOP).unwrap();
    assert!(Arc::ptr_eq(&driver, &h.agents));
    let settings = driver.settings();
    assert_eq!(settings.max_parallel_tool_calls, 3);
    assert_eq!(settings.max_steps, Some(7));
    h.shutdown().await;
}
