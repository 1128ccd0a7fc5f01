//! The baseline: where it lands in the log, its source and text, that the model gets it, that
//! a second turn adds no second one, and when the plugin stays silent.

use dsh_session::{SurfaceIntent, SurfaceOp};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    Boot, Harness, POLICY, Project, instructions, outline, request_texts, text_of, turn,
    user_messages,
};

const ROOT_RULES: &str = "Root rules.\n";
const NESTED_RULES: &str = "Nested rules.\n";

fn project() -> Project {
    Project::new(&[
        ("AGENTS.md", ROOT_RULES),
        ("nested/AGENTS.md", NESTED_RULES),
        (
            "nested/deeper/AGENTS.md",
            "Below the cwd: not in the baseline.\n",
        ),
    ])
}

async fn boot(project: &Project) -> Harness {
    Harness::boot(Boot {
        config: Some(project.config(json!({}))),
        fs: true,
        persistence: None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baseline_enters_right_after_the_prompt_and_reaches_the_model() {
    let project = project();
    let h = boot(&project).await;
    let agent = h.agent("baseline", &project.path("nested")).await;
    turn(&agent, "hello").await;

    assert_eq!(
        outline(&agent),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message:user",
            "user/message:agent-instructions",
            "user/message:plugin:@deepseek-ai/dsh-system-prompt",
            "request/header",
            "request/context",
            "assistant/message",
            "step/end",
            "turn/end",
        ]
    );
    let [baseline] = instructions(&agent).try_into().unwrap();
    let identity = json!({
        "projectRoot": "..",
        "projectRootMarkers": [".git"],
        "maxBytes": 65536,
        "maxSourceBytes": 1_048_576,
        "instructionFileCandidates": ["AGENTS.md", "CLAUDE.md"],
        "localInstructionFileCandidates": ["AGENTS.local.md", "CLAUDE.local.md"],
    })
    .to_string();
    assert_eq!(
        baseline["source"],
        json!({
            "kind": "agent-instructions",
            "form": "instructions",
            "baseline": true,
            "baselineIdentity": identity,
            "changes": [
                {
                    "action": "set",
                    "scope": ".\u{0}AGENTS.md",
                    "path": "AGENTS.md",
                    "digest": "30eb2b6daf8552fda67051d5f65947aacc2ed4d6",
                },
                {
                    "action": "set",
                    "scope": "nested\u{0}AGENTS.md",
                    "path": "nested/AGENTS.md",
                    "digest": "f87ab6c635f68344760376603c5363f0ba9f807e",
                },
            ],
        })
    );
    assert_eq!(baseline["role"], "user");
    assert_eq!(baseline["content"].as_array().map(Vec::len), Some(1));
    let text = text_of(&baseline);
    insta::assert_snapshot!(text);
    let keys: Vec<&String> = baseline.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["content", "source", "role", "id"],
        "dsh's createUserMessage order"
    );

    let requests = h.model.requests();
    assert_eq!(
        request_texts(&requests[0]),
        [
            "hello".to_owned(),
            text,
            format!(
                "Current runtime context. This snapshot supersedes earlier runtime-context \
                 snapshots.\n\n{POLICY}"
            ),
        ]
    );
    assert_eq!(requests[0].messages[1].id, baseline["id"].as_str().unwrap());

    // The next turn finds the baseline in the history: no second one.
    turn(&agent, "again").await;
    assert_eq!(instructions(&agent).len(), 1);
    let texts = request_texts(&h.model.requests()[1]);
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.contains("Instructions from:"))
            .count(),
        1
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_without_instruction_files_gets_nothing() {
    let project = Project::new(&[("README.md", "not instructions")]);
    let h = boot(&project).await;
    let agent = h.agent("empty", &project.path("")).await;
    turn(&agent, "hello").await;
    assert!(instructions(&agent).is_empty());
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_fs_provider_or_with_a_zero_budget_the_plugin_is_silent() {
    let project = project();
    let no_fs = Harness::boot(Boot {
        config: Some(project.config(json!({}))),
        fs: false,
        persistence: None,
    })
    .await;
    let agent = no_fs.agent("no-fs", &project.path("")).await;
    turn(&agent, "hello").await;
    assert_eq!(
        user_messages(&agent).len(),
        2,
        "the prompt and the snapshot only"
    );
    no_fs.shutdown().await;

    let zero = Harness::boot(Boot {
        config: Some(project.config(json!({"maxBytes": 0}))),
        fs: true,
        persistence: None,
    })
    .await;
    let agent = zero.agent("zero", &project.path("")).await;
    turn(&agent, "hello").await;
    assert!(instructions(&agent).is_empty());
    zero.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_is_required() {
    let h = Harness::boot(Boot {
        config: None,
        fs: true,
        persistence: None,
    })
    .await;
    let fiber = h
        .ctx
        .plugin(dsh_agent_instructions::AgentInstructionsPlugin, json!({}))
        .unwrap();
    h.kernel.settle().await;
    let error = fiber.error().unwrap_or_default();
    assert!(error.contains("maxBytes"), "{error}");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_compacted_away_enters_again() {
    let project = project();
    let h = boot(&project).await;
    let agent = h.agent("compacted", &project.path("")).await;
    turn(&agent, "one").await;
    let events = agent.session().events();
    let baseline = events
        .iter()
        .find(|event| event.data["source"]["kind"] == "agent-instructions")
        .unwrap();
    let summary = json!({
        "content": [{"type": "text", "text": "Earlier context was compacted."}],
        "source": {"kind": "plugin", "plugin": "compact"},
        "role": "user",
        "id": "compaction-1",
    });
    let replace = SurfaceIntent {
        op: Some(SurfaceOp::Replace {
            start: baseline.seq,
            end: baseline.seq,
        }),
        source_event_seqs: Some(vec![baseline.seq]),
    };
    agent
        .session()
        .append("user/message", summary, replace)
        .unwrap();

    turn(&agent, "two").await;
    let messages = instructions(&agent);
    assert_eq!(messages.len(), 2, "the baseline enters again");
    assert_eq!(messages[1]["source"]["baseline"], true);
    assert_eq!(
        text_of(&messages[1]),
        text_of(&messages[0]),
        "not a replacement"
    );
    let texts = request_texts(&h.model.requests()[1]);
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.contains("Instructions from:"))
            .count(),
        1
    );
    h.shutdown().await;
}
