//! Resuming a stored session over JSONL persistence: history, turn numbers, the header's
//! `resume` anchor, pending inbox messages and an interrupted turn all carry over.

use std::sync::{Arc, Mutex};

use dsh_agent_loop::events::{AgentSessionStart, SessionStart};
use dsh_agent_loop::{
    CancelCause, CreateAgentOptions, InboxTarget, ResumeAgentOptions, SessionStartSource,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{
    Harness, Reply, Setup, assert_well_formed, events_of, idle, plugin_message,
    request_transcripts, route, text_reply, turn_ends, user,
};

async fn persisted(script: Vec<Reply>) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::with(
        Setup {
            persistence: Some(dir.path().to_owned()),
            ..Setup::default()
        },
        script,
    )
    .await;
    (h, dir)
}

fn create(id: &str) -> CreateAgentOptions {
    CreateAgentOptions {
        session_id: Some(id.into()),
        cwd: Some("/work/project".into()),
        agent_options: route(),
        setup: None,
    }
}

fn resume(id: &str) -> ResumeAgentOptions {
    ResumeAgentOptions {
        session_id: id.into(),
        agent_options: route(),
        setup: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_agent_continues_the_conversation_and_its_turn_numbers() {
    let (h, _dir) = persisted(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let sources = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&sources);
    h.ctx
        .on::<AgentSessionStart>(move |start: &SessionStart| {
            record.lock().unwrap().push(start.source);
            Ok(())
        })
        .unwrap();
    let first = h.agents.create(create("resume-me")).await.unwrap();
    first.followup(user("hi")).unwrap();
    idle(&first).await;
    let before = super::support::kinds(&first);
    h.agents.dispose("resume-me").await.unwrap();
    assert!(h.sessions.get("resume-me").is_none());

    let agent = h.agents.resume(resume("resume-me")).await.unwrap();
    assert_eq!(agent.id(), "resume-me");
    let mut expected = before;
    expected.push("session/end-seed".into());
    assert_eq!(
        super::support::kinds(&agent),
        expected,
        "the whole log came back, marked as the resumed seed"
    );
    assert_eq!(
        agent.session().header().cwd.as_deref(),
        Some("/work/project")
    );
    agent.followup(user("again")).unwrap();
    idle(&agent).await;

    assert_eq!(
        request_transcripts(&h.adapter)[1],
        ["user: hi", "assistant: one", "user: again"]
    );
    let requests = h.adapter.requests();
    assert_eq!(
        requests[1].messages[..1],
        requests[0].messages[..],
        "the stored history rebuilds exactly, ids included"
    );
    assert_eq!(requests[1].system, requests[0].system);
    let reasons: Vec<Value> = events_of(&agent, "request/header")
        .iter()
        .map(|event| event.data["reason"].clone())
        .collect();
    assert_eq!(reasons, [json!("initial"), json!("resume")]);
    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    assert_eq!(turns, [json!(1), json!(2)]);
    assert_eq!(
        *sources.lock().unwrap(),
        [SessionStartSource::Startup, SessionStartSource::Resume]
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_injection_survives_a_resume_without_opening_a_turn() {
    let (h, _dir) = persisted(vec![
        Reply::Chunks(text_reply("one")),
        Reply::Chunks(text_reply("two")),
    ])
    .await;
    let first = h.agents.create(create("with-inbox")).await.unwrap();
    first.followup(user("hi")).unwrap();
    idle(&first).await;
    first
        .inject(plugin_message("watcher", "file changed while away"))
        .unwrap();
    h.agents.dispose("with-inbox").await.unwrap();

    let agent = h.agents.resume(resume("with-inbox")).await.unwrap();
    assert_eq!(agent.pending(InboxTarget::NextStep).unwrap().len(), 1);
    assert_eq!(
        events_of(&agent, "turn/start").len(),
        1,
        "no synthetic turn"
    );
    agent.followup(user("back")).unwrap();
    idle(&agent).await;
    let last = request_transcripts(&h.adapter).pop().unwrap();
    assert_eq!(last.len(), 4, "{last:?}");
    assert!(last.contains(&"user: file changed while away".to_owned()));
    assert!(last.contains(&"user: back".to_owned()));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_interrupted_by_disposal_resumes_with_its_partial_reply() {
    let (h, _dir) = persisted(vec![
        Reply::Hang(
            super::support::text_block(0, "half")
                .into_iter()
                .take(3)
                .collect(),
        ),
        Reply::Chunks(text_reply("whole")),
    ])
    .await;
    let first = h.agents.create(create("interrupted")).await.unwrap();
    first.followup(user("go")).unwrap();
    h.adapter.wait_hung().await;
    h.agents.dispose("interrupted").await.unwrap();
    assert_eq!(
        turn_ends(&first),
        [json!({"kind": "aborted", "reason": {"kind": "disposed"}})]
    );

    let agent = h.agents.resume(resume("interrupted")).await.unwrap();
    agent.followup(user("continue")).unwrap();
    idle(&agent).await;
    assert_eq!(
        request_transcripts(&h.adapter)[1],
        ["user: go", "assistant: ha", "user: continue"]
    );
    assert_eq!(turn_ends(&agent)[1], json!({"kind": "completed"}));
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_live_sessions_and_missing_persistence() {
    let (h, _dir) = persisted(vec![]).await;
    let live = h.agents.create(create("live")).await.unwrap();
    let refused = h.agents.resume(resume("live")).await.unwrap_err();
    assert!(refused.to_string().contains("already live"), "{refused}");
    live.cancel(CancelCause::User);
    assert!(h.agents.resume(resume("never-stored")).await.is_err());
    h.shutdown().await;

    let bare = Harness::new(vec![]).await;
    let refused = bare.agents.resume(resume("anything")).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("session persistence is not configured"),
        "{refused}"
    );
    bare.shutdown().await;
}
