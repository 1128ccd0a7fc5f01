//! Plain text turns: the exact event sequence, what the request carries, the system prompt,
//! the runtime-context snapshot, and how later requests extend earlier ones.

use std::sync::{Arc, Mutex};

use dsh_agent_loop::events::{AgentStatusChanged, StatusChange};
use dsh_agent_loop::{AgentOptions, AgentStatus, CreateAgentOptions};
use dsh_llm::{ContentBlock, MessageSource};
use dsh_session::SurfaceOp;
use dsh_system_prompt::{PromptContext, RUNTIME_CONTEXT_PLUGIN};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{
    Harness, Reply, Setup, echo_tool, events_of, idle, kinds, request_transcripts, text_reply,
    transcript, user, user_texts,
};

const IDENTITY: &str = "You are an AI agent powered by DeepSeek Harness.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_turn_logs_its_events_in_order() {
    let h = Harness::with(
        Setup {
            persona: Some("You are a test persona.".into()),
            ..Setup::default()
        },
        vec![Reply::Chunks(text_reply("hello"))],
    )
    .await;
    let agent = h.agent().await;
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&statuses);
    let id = agent.id().to_owned();
    h.ctx
        .on::<AgentStatusChanged>(move |change: &StatusChange| {
            if change.agent.id() == id {
                seen.lock().unwrap().push(change.status);
            }
            Ok(())
        })
        .unwrap();

    let prompt = user("hi");
    agent.followup(prompt.clone()).unwrap();
    idle(&agent).await;

    let mut expected: Vec<&str> = vec![
        "agent/inbox/spliced",
        "turn/start",
        "agent/inbox/spliced",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
    ];
    // block-start, one delta per character, block-end, usage, finish
    expected.extend(std::iter::repeat_n("assistant/chunk", 9));
    expected.extend(["assistant/message", "step/end", "turn/end"]);
    assert_eq!(kinds(&agent), expected);

    let events = agent.session().events();
    let queued = &events[0];
    assert_eq!(queued.data["target"], "next-turn");
    assert_eq!(queued.data["start"], 0);
    assert_eq!(queued.data["inserted"][0]["id"], json!(prompt.id));
    assert!(queued.data.get("removedCount").is_none());
    assert_eq!(*events[1].data, json!({"turn": 1}));
    let claimed = &events[2];
    assert_eq!(
        *claimed.data,
        json!({"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}),
        "a claim is a plain deletion, not a cancellation"
    );
    assert_eq!(*events[3].data, json!({"turn": 1, "step": 1}));
    assert_eq!(*events[4].data, serde_json::to_value(&prompt).unwrap());
    assert_eq!(events[4].surface_op, Some(SurfaceOp::Append));
    assert_eq!(
        *events[5].data,
        json!({
            "header": {
                "config": {"provider": "mock", "model": "m"},
                "system": format!("{IDENTITY}\n\nYou are a test persona."),
            },
            "reason": "initial",
        })
    );
    assert_eq!(*events[6].data, json!({"provider": "mock", "model": "m"}));
    let chunk_seqs: Vec<u64> = events_of(&agent, "assistant/chunk")
        .iter()
        .map(|event| event.seq)
        .collect();
    assert_eq!(events[7].data["chunk"]["type"], "block-start");
    assert_eq!(events[7].data["turn"], 1);
    assert_eq!(events[7].data["step"], 1);
    assert_eq!(events[15].data["chunk"]["type"], "finish");
    let message = &events[16];
    assert_eq!(message.data["turn"], 1);
    assert_eq!(message.data["step"], 1);
    assert_eq!(message.data["message"]["role"], "assistant");
    assert_eq!(
        message.data["message"]["content"],
        json!([{"type": "text", "text": "hello"}])
    );
    assert_eq!(
        message.data["message"]["source"],
        json!({"kind": "model", "provider": "mock", "model": "m"})
    );
    assert_eq!(
        message.data["usage"],
        json!({"inputTokens": 10, "outputTokens": 5})
    );
    assert!(message.data.get("interrupted").is_none());
    assert_eq!(message.source_event_seqs, Some(chunk_seqs));
    assert_eq!(message.surface_op, Some(SurfaceOp::Append));
    assert_eq!(*events[17].data, json!({"turn": 1, "step": 1}));
    assert_eq!(
        *events[18].data,
        json!({"turn": 1, "reason": {"kind": "completed"}})
    );

    let requests = h.adapter.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.provider.as_str(), request.model.as_str()),
        ("mock", "m")
    );
    assert_eq!(
        request.system.as_deref(),
        Some(format!("{IDENTITY}\n\nYou are a test persona.").as_str())
    );
    assert_eq!(request.messages, vec![prompt]);
    assert_eq!(request.tools, None, "no tools are registered");
    assert_eq!(request.session_id.as_deref(), Some(agent.id()));
    assert_eq!(request.max_tokens, None);

    let derived: Vec<String> = agent
        .session()
        .derive_messages()
        .iter()
        .map(|derived| derived.json()["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(derived, ["user", "assistant"]);
    assert_eq!(
        *statuses.lock().unwrap(),
        [AgentStatus::Running, AgentStatus::Idle]
    );
    assert_eq!(agent.status(), AgentStatus::Idle);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_resolves_loop_variables_and_lists_tools_by_name() {
    let h = Harness::with(
        Setup {
            persona: Some("You run {{model}} on {{provider}} in {{cwd}}.".into()),
            ..Setup::default()
        },
        vec![Reply::Chunks(text_reply("ok"))],
    )
    .await;
    h.tool(echo_tool());
    h.tool(dsh_tools::FnTool::new(
        "alpha",
        "First by name.",
        json!({"type": "object"}),
        |_args, _run| async { Ok(dsh_tools::ToolOutput::text("a")) },
    ));
    let agent = h
        .agents
        .create(CreateAgentOptions {
            agent_options: super::support::route(),
            cwd: Some("/work/space".into()),
            ..CreateAgentOptions::default()
        })
        .await
        .unwrap();
    agent.followup(user("hi")).unwrap();
    idle(&agent).await;

    let request = &h.adapter.requests()[0];
    assert_eq!(
        request.system.as_deref(),
        Some(format!("{IDENTITY}\n\nYou run m on mock in /work/space.").as_str())
    );
    let names: Vec<&str> = request
        .tools
        .as_ref()
        .unwrap()
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(names, ["alpha", "echo"]);
    let header = &events_of(&agent, "request/header")[0].data["header"];
    let header_tools: Vec<&str> = header["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(header_tools, ["alpha", "echo"]);
    assert_eq!(header["tools"][1]["description"], "Echo the text back.");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_output_cap_seeds_the_request() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("bounded"))]).await;
    let agent = h
        .agents
        .create(CreateAgentOptions {
            agent_options: AgentOptions {
                max_tokens: Some(256),
                ..super::support::route()
            },
            ..CreateAgentOptions::default()
        })
        .await
        .unwrap();
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    assert_eq!(h.adapter.requests()[0].max_tokens, Some(256));
    assert_eq!(
        events_of(&agent, "request/header")[0].data["header"]["config"],
        json!({"provider": "mock", "model": "m", "maxTokens": 256})
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_extends_the_previous_request() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
        Reply::Chunks(text_reply("three")),
    ])
    .await;
    let agent = h.agent().await;
    for text in ["first", "second", "third"] {
        agent.followup(user(text)).unwrap();
        idle(&agent).await;
    }
    assert_eq!(
        request_transcripts(&h.adapter),
        [
            vec!["user: first"],
            vec!["user: first", "assistant: one", "user: second"],
            vec![
                "user: first",
                "assistant: one",
                "user: second",
                "assistant: two",
                "user: third"
            ],
        ]
    );
    let requests = h.adapter.requests();
    for pair in requests.windows(2) {
        assert_eq!(
            pair[1].messages[..pair[0].messages.len()],
            pair[0].messages[..],
            "a later request extends the earlier one, ids included"
        );
    }
    let headers = events_of(&agent, "request/header");
    assert_eq!(headers.len(), 1, "an unchanged header is logged once");
    assert_eq!(events_of(&agent, "request/context").len(), 1);
    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    assert_eq!(turns, [json!(1), json!(2), json!(3)]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_context_is_sent_as_a_snapshot_only_when_it_changes() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let mode = Arc::new(Mutex::new("read-only".to_owned()));
    let current = Arc::clone(&mode);
    let registration = h
        .prompt
        .context(
            &h.ctx,
            PromptContext::new(
                "policy",
                0.0,
                dsh_system_prompt::PromptText::dynamic(move |_| {
                    format!("Mode: {}.", current.lock().unwrap())
                }),
            ),
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("first")).unwrap();
    idle(&agent).await;
    agent.followup(user("second")).unwrap();
    idle(&agent).await;

    let snapshot = "Current runtime context. This snapshot supersedes earlier runtime-context \
                    snapshots.\n\nMode: read-only.";
    assert_eq!(user_texts(&agent), ["first", snapshot, "second"]);
    let context = &events_of(&agent, "user/message")[1];
    assert_eq!(
        context.data["source"],
        json!({
            "kind": "plugin",
            "plugin": RUNTIME_CONTEXT_PLUGIN,
            "form": "snapshot",
            "sections": [{"name": "policy", "text": "Mode: read-only."}],
        })
    );
    assert_eq!(
        transcript(&h.adapter.requests()[0].messages),
        [String::from("user: first"), format!("user: {snapshot}")]
    );
    let system = h.adapter.requests()[0].system.clone();
    assert_eq!(
        system.as_deref(),
        Some(IDENTITY),
        "contexts stay out of the system prompt"
    );

    // A change is sent once more at the tail, the system prompt untouched.
    *mode.lock().unwrap() = "full-access".into();
    h.adapter.push(Reply::Chunks(text_reply("three")));
    agent.followup(user("third")).unwrap();
    idle(&agent).await;
    let texts = user_texts(&agent);
    assert_eq!(texts.len(), 5);
    assert!(texts[4].ends_with("Mode: full-access."), "{texts:?}");
    assert_eq!(events_of(&agent, "request/header").len(), 1);
    let last = h.adapter.requests().last().unwrap().clone();
    assert_eq!(last.system, system);
    assert_eq!(
        last.messages.last().unwrap().source,
        MessageSource::Plugin {
            plugin: RUNTIME_CONTEXT_PLUGIN.into(),
            form: Some("snapshot".into()),
            fields: serde_json::from_value(
                json!({"sections": [{"name": "policy", "text": "Mode: full-access."}]})
            )
            .unwrap(),
        }
    );
    assert_eq!(
        last.messages.last().unwrap().content,
        [ContentBlock::text(texts[4].clone())]
    );

    // A context that goes away is cleared once, explicitly.
    registration.dispose().await;
    h.adapter.push(Reply::Chunks(text_reply("four")));
    h.adapter.push(Reply::Chunks(text_reply("five")));
    for text in ["fourth", "fifth"] {
        agent.followup(user(text)).unwrap();
        idle(&agent).await;
    }
    let texts = user_texts(&agent);
    assert_eq!(
        texts[5..],
        [
            "fourth".to_owned(),
            dsh_system_prompt::RUNTIME_CONTEXT_CLEARED.to_owned(),
            "fifth".to_owned()
        ]
    );
    assert_eq!(
        events_of(&agent, "user/message")[6].data["source"],
        json!({"kind": "plugin", "plugin": RUNTIME_CONTEXT_PLUGIN})
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_system_prompt_logs_a_changed_header_and_a_stable_one_nothing() {
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
        Reply::Chunks(text_reply("three")),
    ])
    .await;
    let agent = h.agent().await;
    agent.followup(user("first")).unwrap();
    idle(&agent).await;
    agent.followup(user("second")).unwrap();
    idle(&agent).await;
    assert_eq!(events_of(&agent, "request/header").len(), 1);

    h.prompt
        .section(
            &h.ctx,
            dsh_system_prompt::PromptSection::new("test:rules", 10.0, "Be brief."),
        )
        .unwrap();
    agent.followup(user("third")).unwrap();
    idle(&agent).await;
    let headers = events_of(&agent, "request/header");
    assert_eq!(headers.len(), 2);
    assert_eq!(headers[1].data["reason"], "change");
    let system = format!("{IDENTITY}\n\nBe brief.");
    assert_eq!(headers[1].data["header"]["system"], json!(system));
    assert_eq!(
        h.adapter.requests()[2].system.as_deref(),
        Some(system.as_str())
    );
    assert_eq!(
        events_of(&agent, "request/context").len(),
        1,
        "the route is unchanged"
    );
    h.shutdown().await;
}
