//! `dsh --profile headless` end to end, against the fake DeepSeek server on loopback.

use std::process::Command;

use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{text_events, tool_call_events, usage};
use serde_json::{Value, json};

use super::support::{Run, Sandbox};

/// A sandbox whose `dsh` talks to `fake`.
fn against(sandbox: &Sandbox, fake: &FakeDeepSeek, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", "sk-test")
        .env_remove("DSH_PERMISSION_MODE");
    command
}

async fn run(mut command: Command) -> Run {
    tokio::task::spawn_blocking(move || Run::from(command.output().unwrap()))
        .await
        .unwrap()
}

fn bash_call(id: &str, command: &str) -> Reply {
    let arguments = json!({"command": command, "description": "Run the demo"}).to_string();
    Reply::sse(tool_call_events(
        id,
        "bash",
        &arguments,
        2,
        Some(usage(100, 10, None, None)),
    ))
}

fn answer(text: &str) -> Reply {
    Reply::sse(text_events(text, 4, Some(usage(120, 5, None, None))))
}

/// The session log the run wrote, as JSON lines (decoded with `dsh sessions export`).
fn exported(sandbox: &Sandbox, id: &str) -> Vec<Value> {
    let export = sandbox.run(&["sessions", "export", id]);
    assert_eq!(export.code, Some(0), "{}", export.stderr);
    export
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn session_id(run: &Run) -> String {
    let json: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    json["sessionId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_bash_turn_prints_the_answer_and_logs_the_session() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo hello-from-dsh"));
    fake.push(answer("The command printed hello-from-dsh."));

    let done = run(against(
        &sandbox,
        &fake,
        &["--profile", "headless", "--output", "json", "say hello"],
    ))
    .await;
    assert_eq!(done.code, Some(0), "stderr: {}", done.stderr);
    assert_eq!(done.stderr, "");
    let result: Value = serde_json::from_str(done.stdout.trim()).unwrap();
    assert_eq!(result["text"], "The command printed hello-from-dsh.");
    assert_eq!(result["reason"], json!({"kind": "completed"}));

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].body;
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["tool_call_id"], "call_1");
    assert!(
        tool["content"].as_str().unwrap().contains("hello-from-dsh"),
        "{tool}"
    );

    let log = exported(&sandbox, &session_id(&done));
    let kinds: Vec<&str> = log[1..]
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    println!("{kinds:?}");
}
