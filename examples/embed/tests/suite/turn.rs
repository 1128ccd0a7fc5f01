//! One turn end to end: the model calls this example's own `word_count` tool, then answers.

use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{text_events, tool_call_events, usage};
use serde_json::{Value, json};

use super::support::{Sandbox, files_under, run};

const TEXT: &str = "to be or not to be\nthat is the question";

fn word_count_call(id: &str, text: &str) -> Reply {
    let arguments = json!({ "text": text }).to_string();
    Reply::sse(tool_call_events(
        id,
        "word_count",
        &arguments,
        3,
        Some(usage(100, 10, None, None)),
    ))
}

fn answer(text: &str) -> Reply {
    Reply::sse(text_events(text, 5, Some(usage(120, 6, None, None))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_word_count_and_the_answer_is_printed() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(word_count_call("call_1", TEXT));
    fake.push(answer("It has 10 words on 2 lines."));

    let done = run(sandbox.command(&fake, &["How", "long", "is", "Hamlet's", "line?"])).await;
    assert_eq!(done.code, Some(0), "{done:?}");
    assert_eq!(done.stdout, "It has 10 words on 2 lines.\n");
    let session = done
        .stderr
        .strip_prefix("session ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("stderr: {:?}", done.stderr));
    assert!(session.starts_with("session-"), "{session}");

    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");

    // The first request: this profile's persona, the task, and exactly this example's tool.
    let first = &requests[0].body;
    assert_eq!(first["model"], "deepseek-v4-flash");
    assert_eq!(first["messages"][0]["role"], "system");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("You are Tally, the word-counting assistant of dsh-embed-example."),
        "{system}"
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "How long is Hamlet's line?"})
    );
    let tools: Vec<&Value> = first["tools"].as_array().unwrap().iter().collect();
    assert_eq!(tools.len(), 1, "{tools:#?}");
    assert_eq!(tools[0]["function"]["name"], "word_count");
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["text"])
    );

    // The second request carries the tool's result for the call.
    let second = &requests[1].body;
    let results: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 1, "{second:#}");
    assert_eq!(results[0]["tool_call_id"], "call_1");
    let counts: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        counts,
        json!({"words": 10, "lines": 2, "characters": TEXT.chars().count()})
    );

    // The session was logged under the home's sessions directory.
    let logged = files_under(&sandbox.home().join("sessions"));
    assert!(
        logged
            .iter()
            .any(|path| path.to_string_lossy().contains(session)),
        "{logged:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_fails_the_turn_with_its_code() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(Reply::error(
        401,
        json!({"error": {"message": "Authentication Fails (bad key)", "type": "authentication_error",
            "code": "invalid_api_key"}}),
    ));

    let done = run(sandbox.command(&fake, &["count", "these", "words"])).await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert_eq!(done.stdout, "");
    assert!(
        done.stderr.starts_with("session session-"),
        "{}",
        done.stderr
    );
    assert!(done.stderr.contains("\nerror: AUTH: "), "{}", done.stderr);
    assert_eq!(fake.requests().len(), 1);
}
