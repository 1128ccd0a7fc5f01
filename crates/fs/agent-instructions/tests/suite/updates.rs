//! Updates within a turn: a touched nested directory adds its instructions at the next step, a
//! changed baseline file is replaced, a deleted one removed; failed calls touch nothing.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{
    Boot, Harness, Project, instructions, request_texts, text_of, tool_reply, turn,
};

async fn boot(project: &Project) -> Harness {
    Harness::boot(Boot {
        config: Some(project.config(json!({}))),
        fs: true,
        persistence: None,
    })
    .await
}

fn changes(data: &Value) -> Vec<(String, String)> {
    data["source"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            (
                change["action"].as_str().unwrap().to_owned(),
                change["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_below_the_cwd_adds_that_directorys_instructions_at_the_next_step() {
    let project = Project::new(&[
        ("AGENTS.md", "Root snapshot instruction.\n"),
        ("nested/AGENTS.md", "Nested snapshot instruction.\n"),
        ("nested/task.txt", "snapshot task\n"),
    ]);
    let h = boot(&project).await;
    h.model.push(vec![
        tool_reply(
            "call_read",
            "read",
            &json!({"file_path": "nested/task.txt"}),
        ),
        tool_reply(
            "call_missing",
            "read",
            &json!({"file_path": "missing/task.txt"}),
        ),
    ]);
    let agent = h.agent("updates", &project.path("")).await;
    turn(&agent, "Read nested/task.txt, then reply DONE.").await;

    let messages = instructions(&agent);
    assert_eq!(messages.len(), 2, "the baseline, then one update");
    assert_eq!(changes(&messages[0]), pairs(&[("set", "AGENTS.md")]));
    let update = &messages[1];
    assert_eq!(
        update["source"],
        json!({
            "kind": "agent-instructions",
            "form": "instructions",
            "changes": [{
                "action": "set",
                "scope": "nested\u{0}AGENTS.md",
                "path": "nested/AGENTS.md",
                "digest": "c446df9a85c7e73a3055f394a4822a19ac9ead5a",
            }],
        })
    );
    // Word for word the update of dsh's recorded session (snapshots/agent-instructions).
    assert_eq!(
        text_of(update),
        "<system-reminder>\nAdditional instructions from: nested/AGENTS.md\n\nThese instructions \
         apply to work under `nested`. Use them as guidance when relevant; more specific \
         instructions take precedence. They do not override system, developer, or direct user \
         instructions.\n\nNested snapshot instruction.\n\n</system-reminder>"
    );
    // It opens step 2, before the model's second request, which carries it last.
    let events = agent.session().events();
    let update_seq = events
        .iter()
        .find(|event| event.data.get("id") == update.get("id"))
        .map(|event| event.seq)
        .unwrap();
    let step_two = events
        .iter()
        .find(|event| event.kind == "step/start" && event.data["step"] == 2)
        .map(|event| event.seq)
        .unwrap();
    assert_eq!(update_seq, step_two + 1);
    let requests = h.model.requests();
    assert_eq!(request_texts(&requests[1]).last(), Some(&text_of(update)));
    // The failed read (step 2) touched nothing: step 3 adds no message.
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[2].messages.len(),
        requests[1].messages.len() + 2,
        "only the call and its result"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baseline_files_are_replaced_when_changed_and_removed_when_deleted() {
    let project = Project::new(&[
        ("AGENTS.md", "Root rules.\n"),
        ("CLAUDE.md", "Claude rules.\n"),
    ]);
    let h = boot(&project).await;
    h.model.push(vec![
        tool_reply(
            "call_write",
            "write",
            &json!({"file_path": "AGENTS.md", "content": "Root rules, revised.\n"}),
        ),
        tool_reply("call_rm", "rm", &json!({"file_path": "CLAUDE.md"})),
    ]);
    let agent = h.agent("changes", &project.path("")).await;
    turn(&agent, "Revise the rules.").await;

    let messages = instructions(&agent);
    assert_eq!(
        messages.iter().map(changes).collect::<Vec<_>>(),
        [
            pairs(&[("set", "AGENTS.md"), ("set", "CLAUDE.md")]),
            pairs(&[("replace", "AGENTS.md")]),
            pairs(&[("remove", "CLAUDE.md")]),
        ]
    );
    assert_eq!(
        messages[1]["source"]["changes"][0]["digest"],
        "56b3201ce71f718a0b0d1aa3c7cff7c9fc5eacb8"
    );
    insta::assert_snapshot!("replaced", text_of(&messages[1]));
    assert_eq!(
        text_of(&messages[2]),
        "<system-reminder>\nInstructions removed: CLAUDE.md\n\nThe previously loaded \
         instructions from this file no longer apply.\n</system-reminder>"
    );
    assert!(messages[2]["source"]["changes"][0].get("digest").is_none());
    h.shutdown().await;
}
