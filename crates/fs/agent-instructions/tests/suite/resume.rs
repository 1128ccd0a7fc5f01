//! Resume over JSONL persistence: a compatible baseline in the log is kept (no second one), an
//! offline edit is reported as an update, and a baseline of another configuration is replaced.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Boot, Harness, Project, instructions, request_texts, text_of, turn};

async fn persisted(project: &Project, store: &Path, extra: Value) -> Harness {
    Harness::boot(Boot {
        config: Some(project.config(extra)),
        fs: true,
        persistence: Some(store.to_owned()),
    })
    .await
}

fn actions(data: &Value) -> Vec<String> {
    data["source"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            format!(
                "{} {}",
                change["action"].as_str().unwrap(),
                change["path"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_its_baseline_and_gets_no_second_one() {
    let project = Project::new(&[("AGENTS.md", "Root rules.\n")]);
    let store = tempfile::tempdir().unwrap();
    let h = persisted(&project, store.path(), json!({})).await;
    let agent = h.agent("resumed", &project.path("")).await;
    turn(&agent, "one").await;
    let [baseline] = instructions(&agent).try_into().unwrap();
    h.agents.dispose("resumed").await.unwrap();

    let agent = h.resume("resumed").await;
    turn(&agent, "two").await;
    assert_eq!(
        instructions(&agent),
        std::slice::from_ref(&baseline),
        "the logged baseline, alone"
    );
    let texts = request_texts(&h.model.requests()[1]);
    let carried: Vec<&String> = texts
        .iter()
        .filter(|t| t.contains("Instructions from:"))
        .collect();
    assert_eq!(carried, [&text_of(&baseline)]);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_edit_is_an_update_after_resume() {
    let project = Project::new(&[("AGENTS.md", "Root rules.\n")]);
    let store = tempfile::tempdir().unwrap();
    let h = persisted(&project, store.path(), json!({})).await;
    let agent = h.agent("edited", &project.path("")).await;
    turn(&agent, "one").await;
    h.agents.dispose("edited").await.unwrap();
    project.write("AGENTS.md", "Root rules, revised.\n");
    project.write("CLAUDE.md", "Claude rules.\n");

    let agent = h.resume("edited").await;
    turn(&agent, "two").await;
    let messages = instructions(&agent);
    assert_eq!(messages.len(), 2);
    assert_eq!(
        actions(&messages[1]),
        ["replace AGENTS.md", "set CLAUDE.md"]
    );
    assert!(messages[1]["source"].get("baseline").is_none());
    let text = text_of(&messages[1]);
    assert!(
        text.contains("Updated instructions from: AGENTS.md"),
        "{text}"
    );
    assert!(
        text.contains("Additional instructions from: CLAUDE.md"),
        "{text}"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_of_another_configuration_is_replaced() {
    let project = Project::new(&[
        ("AGENTS.md", "Root rules.\n"),
        ("CLAUDE.md", "Claude rules.\n"),
    ]);
    let store = tempfile::tempdir().unwrap();
    let first = persisted(&project, store.path(), json!({})).await;
    let agent = first.agent("reconfigured", &project.path("")).await;
    turn(&agent, "one").await;
    assert_eq!(
        actions(&instructions(&agent)[0]),
        ["set AGENTS.md", "set CLAUDE.md"]
    );
    first.agents.dispose("reconfigured").await.unwrap();
    first.shutdown().await;

    let second = persisted(
        &project,
        store.path(),
        json!({"instructionFileCandidates": ["CLAUDE.md"]}),
    )
    .await;
    let agent = second.resume("reconfigured").await;
    turn(&agent, "two").await;
    let messages = instructions(&agent);
    assert_eq!(messages.len(), 2);
    let replacement = &messages[1];
    assert_eq!(replacement["source"]["baseline"], true);
    assert!(
        replacement["source"]["baselineIdentity"]
            .as_str()
            .unwrap()
            .contains(r#""instructionFileCandidates":["CLAUDE.md"]"#)
    );
    assert_eq!(actions(replacement), ["remove AGENTS.md", "set CLAUDE.md"]);
    insta::assert_snapshot!(text_of(replacement));
    second.shutdown().await;
}
