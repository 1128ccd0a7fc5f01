//! `dsh --profile headless` end to end, against the fake DeepSeek server on loopback: the
//! agent loop, the bash tool in the sandbox, the session log, and the process contract.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{
    SseEvent, chunk_role, chunk_text, text_events, tool_call_events, usage,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Run, Sandbox, repo_root};

/// `dsh` in `sandbox`, talking to `fake`.
pub(super) fn against(sandbox: &Sandbox, fake: &FakeDeepSeek, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", "sk-test")
        .env_remove("DEEPSEEK_API_KEY_FILE")
        .env_remove("DSH_PERMISSION_MODE");
    command
}

pub(super) async fn run(mut command: Command) -> Run {
    tokio::task::spawn_blocking(move || Run::from(command.output().unwrap()))
        .await
        .unwrap()
}

pub(super) fn headless<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--profile", "headless"];
    args.extend_from_slice(extra);
    args
}

pub(super) fn bash_call(id: &str, command: &str) -> Reply {
    let arguments = json!({"command": command, "description": "Run the demo"}).to_string();
    Reply::sse(tool_call_events(
        id,
        "bash",
        &arguments,
        2,
        Some(usage(100, 10, None, None)),
    ))
}

pub(super) fn answer(text: &str) -> Reply {
    Reply::sse(text_events(text, 4, Some(usage(120, 5, None, None))))
}

/// Two bash calls in one assistant message.
fn two_bash_calls(first: &str, second: &str) -> Reply {
    let call = |index: u64, id: &str, command: &str| {
        let arguments = json!({"command": command, "description": "Run the demo"}).to_string();
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id,
            "type": "function", "function": {"name": "bash", "arguments": arguments}}]}}]})
    };
    Reply::sse(vec![
        SseEvent::data(chunk_role()),
        SseEvent::data(call(0, "call_a", first)),
        SseEvent::data(call(1, "call_b", second)),
        SseEvent::data(json!({"choices": [{"index": 0, "delta": {"content": ""},
            "finish_reason": "tool_calls"}], "usage": usage(100, 20, None, None)})),
    ])
}

/// The stored log of `id`, decoded by `dsh sessions export`, without the header line.
pub(super) fn exported(sandbox: &Sandbox, id: &str) -> Vec<Value> {
    let export = sandbox.run(&["sessions", "export", id]);
    assert_eq!(export.code, Some(0), "{}", export.stderr);
    export
        .stdout
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn kinds(log: &[Value]) -> Vec<&str> {
    log.iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

/// Runs the offline demo with `--output json`: checks the answer came from the recording and
/// returns what the recorded `bash` call printed when it ran for real.
pub(super) fn replayed_bash_output(
    sandbox: &Sandbox,
    command: &mut std::process::Command,
) -> String {
    let done = Run::from(command.output().unwrap());
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result = json_output(&done);
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .contains("replayed from profiles/examples/replay/session.jsonl"),
        "{result}"
    );
    let log = exported(sandbox, result["sessionId"].as_str().unwrap());
    log.iter()
        .find(|event| event["type"] == "tool/result")
        .and_then(|event| event["data"]["message"]["content"][0]["content"][0]["text"].as_str())
        .unwrap()
        .to_owned()
}

fn json_output(run: &Run) -> Value {
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|error| {
        panic!(
            "stdout is not one JSON object ({error}): {}\nstderr: {}",
            run.stdout, run.stderr
        )
    })
}

/// The only session in the store.
pub(super) fn only_session(sandbox: &Sandbox) -> String {
    let list = sandbox.run(&["sessions", "list", "--json"]);
    let ids: Vec<String> = list
        .stdout
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 1, "{}", list.stdout);
    ids.into_iter().next().unwrap()
}

pub(super) fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            (
                message["tool_call_id"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_bash_turn_prints_the_answer_and_logs_a_dsh_session() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo hello-from-dsh && uname -s"));
    fake.push(answer("The command printed hello-from-dsh."));

    let done = run(against(&sandbox, &fake, &headless(&["say hello"]))).await;
    assert_eq!((done.code, done.stderr.as_str()), (Some(0), ""));
    assert_eq!(done.stdout, "The command printed hello-from-dsh.\n");

    // What the model was sent: the system prompt, the bash schema, then the history.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(first["model"], "deepseek-v4-flash");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(system.starts_with("You are an AI agent powered by DeepSeek Harness.\n\nYou are a coding agent powered by the deepseek-v4-flash model. Your working directory is "), "{system}");
    assert!(
        system.contains("Check the [exit code: N] marker on every bash result"),
        "{system}"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "bash",
            "edit",
            "glob",
            "grep",
            "job_kill",
            "job_list",
            "job_output",
            "read",
            "read_image",
            "str_replace_editor",
            "write"
        ]
    );
    let bash = &first["tools"][0]["function"];
    assert_eq!(
        bash["parameters"]["required"],
        json!(["command", "description"])
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "say hello"})
    );
    let context = first["messages"][2]["content"].as_str().unwrap();
    assert!(context.starts_with("Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\nCurrent DSH file policy: workspace-write."), "{context}");

    let second = &requests[1].body;
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "bash");
    let results = tool_results(second);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_1");
    assert!(
        results[0].1.starts_with("hello-from-dsh\nLinux\n"),
        "{}",
        results[0].1
    );

    // The log, read back through `dsh sessions export`, has dsh's shape.
    let id = only_session(&sandbox);
    let log = exported(&sandbox, &id);
    assert_eq!(
        kinds(&log)
            .into_iter()
            .filter(|kind| *kind != "assistant/chunk")
            .collect::<Vec<_>>(),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "user/message",
            "request/header",
            "request/context",
            "assistant/message",
            "tool/call",
            "tool/result",
            "step/end",
            "step/start",
            "assistant/message",
            "step/end",
            "turn/end",
        ]
    );
    for (seq, event) in log.iter().enumerate() {
        assert_eq!(event["seq"], json!(seq));
    }
    let header = log
        .iter()
        .find(|event| event["type"] == "request/header")
        .unwrap();
    assert_eq!(header["data"]["reason"], "initial");
    assert_eq!(
        header["data"]["header"]["config"]["provider"],
        "deepseek-official"
    );
    let result = log
        .iter()
        .find(|event| event["type"] == "tool/result")
        .unwrap();
    let call = log
        .iter()
        .find(|event| event["type"] == "tool/call")
        .unwrap();
    assert_eq!(result["sourceEventSeqs"], json!([call["seq"]]));
    assert_eq!(result["surfaceOp"], "append");
    assert_eq!(
        log.last().unwrap()["data"],
        json!({"turn": 1, "reason": {"kind": "completed"}})
    );
    let verify = sandbox.run(&["sessions", "verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tool_calls_in_one_turn_run_in_order_and_both_results_reach_the_model() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(two_bash_calls(
        "echo one > note.txt",
        "cat note.txt; echo two",
    ));
    fake.push(answer("Both ran."));

    let done = run(against(
        &sandbox,
        &fake,
        &headless(&["--output", "json", "write and read"]),
    ))
    .await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result = json_output(&done);
    assert_eq!(result["text"], "Both ran.");
    assert_eq!(result["steps"], 2);
    assert_eq!(result["usage"]["outputTokens"], 25);
    let results = tool_results(&fake.requests()[1].body);
    assert_eq!(
        results
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
        ["call_a", "call_b"]
    );
    assert!(results[1].1.starts_with("one\ntwo\n"), "{results:?}");
    let log = exported(&sandbox, result["sessionId"].as_str().unwrap());
    let tool_kinds: Vec<&str> = kinds(&log)
        .into_iter()
        .filter(|kind| kind.starts_with("tool/"))
        .collect();
    assert_eq!(
        tool_kinds,
        ["tool/call", "tool/result", "tool/call", "tool/result"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_reaches_the_model_with_its_exit_code() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo oops >&2; exit 3"));
    fake.push(answer("It failed with 3."));

    let done = run(against(&sandbox, &fake, &headless(&["fail please"]))).await;
    assert_eq!(
        (done.code, done.stdout.as_str()),
        (Some(0), "It failed with 3.\n"),
        "{}",
        done.stderr
    );
    let results = tool_results(&fake.requests()[1].body);
    assert!(results[0].1.contains("[stderr]\noops\n"), "{results:?}");
    assert!(results[0].1.ends_with("[exit code: 3]"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_retried_then_reported_with_exit_1() {
    let sandbox = Sandbox::new();
    let fast = sandbox.write(
        "work/fast-retry.yml",
        "- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: 2\n      backoff:\n        initialDelayMs: 1\n        maxDelayMs: 5\n",
    );
    let fake = FakeDeepSeek::start().await.unwrap();
    for _ in 0..3 {
        fake.push(Reply::error(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "rate_limit"}}),
        ));
    }
    let fast = fast.display().to_string();
    let done = run(against(
        &sandbox,
        &fake,
        &["--profile", "headless", "--patch", &fast, "hello"],
    ))
    .await;
    assert_eq!(done.code, Some(1));
    assert_eq!(done.stdout, "\n");
    assert!(
        done.stderr.starts_with("dsh: RATE_LIMIT: "),
        "{}",
        done.stderr
    );
    assert_eq!(done.stderr.lines().count(), 1, "{}", done.stderr);
    assert_eq!(fake.requests().len(), 3);
    let log = exported(&sandbox, &only_session(&sandbox));
    let retries: Vec<&str> = kinds(&log)
        .into_iter()
        .filter(|kind| kind.starts_with("llm/"))
        .collect();
    assert_eq!(
        retries,
        [
            "llm/retry",
            "llm/retry-started",
            "llm/retry",
            "llm/retry-started"
        ]
    );
    let end = log.last().unwrap();
    assert_eq!(end["data"]["reason"]["kind"], "error");
    assert_eq!(end["data"]["reason"]["error"]["code"], "RATE_LIMIT");
    // Every retry stays in turn 1, step 1.
    assert!(
        kinds(&log)
            .iter()
            .filter(|kind| **kind == "step/start")
            .count()
            == 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_adds_a_second_turn_that_carries_the_first_turns_history() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo first-turn"));
    fake.push(answer("First done."));
    let first = run(against(
        &sandbox,
        &fake,
        &headless(&["--output", "json", "turn one"]),
    ))
    .await;
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let id = json_output(&first)["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    fake.push(answer("Second done."));
    let second = run(against(
        &sandbox,
        &fake,
        &headless(&["--resume", &id, "--verbose", "turn two"]),
    ))
    .await;
    assert_eq!(
        (second.code, second.stdout.as_str()),
        (Some(0), "Second done.\n"),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.starts_with(&format!("dsh: session {id}\n")),
        "{}",
        second.stderr
    );

    let requests = fake.requests();
    let body = &requests[2].body;
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert_eq!(body["messages"][1]["content"], "turn one");
    assert_eq!(body["messages"][6]["content"], "turn two");
    let log = exported(&sandbox, &id);
    let turns: Vec<&Value> = log
        .iter()
        .filter(|event| event["type"] == "turn/start")
        .collect();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["data"]["turn"], 2);
    let headers: Vec<&Value> = log
        .iter()
        .filter(|event| event["type"] == "request/header")
        .map(|event| &event["data"]["reason"])
        .collect();
    assert_eq!(headers, [&json!("initial"), &json!("resume")]);
    assert_eq!(only_session(&sandbox), id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_of_an_unknown_session_fails_clearly() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    let done = run(against(
        &sandbox,
        &fake,
        &headless(&["--resume", "session-nope", "hi"]),
    ))
    .await;
    assert_eq!(done.code, Some(1));
    assert!(done.stderr.starts_with("dsh: "), "{}", done.stderr);
    assert!(done.stderr.contains("session-nope"), "{}", done.stderr);
    assert!(fake.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_prints_every_event_as_it_is_logged_then_the_result() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(answer("Streamed."));
    let done = run(against(
        &sandbox,
        &fake,
        &headless(&["--output", "stream-json", "hi"]),
    ))
    .await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let lines: Vec<Value> = done
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["text"], "Streamed.");
    let id = result["sessionId"].as_str().unwrap();
    let streamed = &lines[..lines.len() - 1];
    assert_eq!(streamed, exported(&sandbox, id).as_slice());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_picks_the_model_of_the_requests() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(answer("ok"));
    let done = run(against(
        &sandbox,
        &fake,
        &headless(&["--model", "deepseek-v4-pro", "hi"]),
    ))
    .await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(fake.requests()[0].body["model"], "deepseek-v4-pro");
}

#[test]
fn a_blank_task_and_help_start_nothing() {
    let sandbox = Sandbox::new();
    let blank = sandbox.run(&["--profile", "headless", "  "]);
    assert_eq!(
        (blank.code, blank.stdout.as_str(), blank.stderr.as_str()),
        (
            Some(1),
            "",
            "error: a task is required, for example: dsh --profile headless \"run the tests\"\n"
        )
    );
    let help = sandbox.run(&["--profile", "headless", "--help"]);
    assert_eq!((help.code, help.stderr.as_str()), (Some(0), ""));
    assert!(help.stdout.contains("--output <format>"), "{}", help.stdout);
    assert!(
        help.stdout.contains("--resume <session-id>"),
        "{}",
        help.stdout
    );
    let sessions = sandbox.run(&["sessions", "list"]);
    assert_eq!(sessions.stdout, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_api_key_ends_the_turn_with_its_code() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    let mut command = against(&sandbox, &fake, &headless(&["hi"]));
    command.env_remove("DEEPSEEK_API_KEY");
    let done = run(command).await;
    assert_eq!(done.code, Some(1));
    assert!(
        done.stderr.starts_with("dsh: MISSING_CREDENTIAL: "),
        "{}",
        done.stderr
    );
}

/// Starts `dsh` with piped output; the caller signals it.
fn spawn(mut command: Command) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("bash")
        .args(["-c", &format!("kill -{name} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
}

async fn wait(child: Child) -> Run {
    tokio::time::timeout(
        Duration::from_secs(20),
        tokio::task::spawn_blocking(move || Run::from(child.wait_with_output().unwrap())),
    )
    .await
    .expect("dsh did not exit in time")
    .unwrap()
}

/// A reply that streams some text and then stalls.
fn stalling_answer() -> Reply {
    Reply::sse(vec![
        SseEvent::data(chunk_role()),
        SseEvent::data(chunk_text("Working on ")),
        SseEvent::data(chunk_text("it")),
    ])
    .stall_after(3)
}

/// Waits until the stalled reply's chunks are in the live log (the agent is mid-stream).
async fn until_streaming(fake: &FakeDeepSeek) {
    fake.wait_for_requests_within(1, Duration::from_secs(20))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_mid_stream_exits_130_and_the_log_ends_with_an_aborted_turn() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(stalling_answer());
    let child = spawn(against(&sandbox, &fake, &headless(&["take your time"])));
    until_streaming(&fake).await;
    signal(&child, "INT");
    let done = wait(child).await;
    assert_eq!(done.code, Some(130), "{}", done.stderr);

    let log = exported(&sandbox, &only_session(&sandbox));
    let end = log.last().unwrap();
    assert_eq!(end["type"], "turn/end", "{:?}", kinds(&log));
    assert_eq!(
        end["data"]["reason"],
        json!({"kind": "aborted", "reason": {"kind": "user"}})
    );
    let kept = log
        .iter()
        .find(|event| event["type"] == "assistant/message")
        .expect("the streamed prefix is kept");
    assert_eq!(kept["data"]["interrupted"], true);
    assert_eq!(
        kept["data"]["message"]["content"][0]["text"],
        "Working on it"
    );
    let verify = sandbox.run(&["sessions", "verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_stream_exits_0_after_closing_the_turn() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(stalling_answer());
    let child = spawn(against(&sandbox, &fake, &headless(&["take your time"])));
    until_streaming(&fake).await;
    signal(&child, "TERM");
    let done = wait(child).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let log = exported(&sandbox, &only_session(&sandbox));
    assert_eq!(
        log.last().unwrap()["data"]["reason"],
        json!({"kind": "aborted", "reason": {"kind": "disposed"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_turn_leaves_a_log_that_reopens_with_interrupted_closers() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo before-the-crash"));
    fake.push(stalling_answer());
    let child = spawn(against(&sandbox, &fake, &headless(&["crash me"])));
    fake.wait_for_requests_within(2, Duration::from_secs(20))
        .await
        .unwrap();
    signal(&child, "KILL");
    let killed = wait(child).await;
    assert_eq!(killed.code, None, "killed by a signal");

    // The checkpoint before the second request made the first step durable.
    let id = only_session(&sandbox);
    let stored = exported(&sandbox, &id);
    assert!(
        kinds(&stored).contains(&"tool/result"),
        "{:?}",
        kinds(&stored)
    );

    // Resuming repairs the open turn (dsh's interrupted closers) and runs a new one.
    fake.push(answer("Back again."));
    let resumed = run(against(
        &sandbox,
        &fake,
        &headless(&["--resume", &id, "go on"]),
    ))
    .await;
    assert_eq!(
        (resumed.code, resumed.stdout.as_str()),
        (Some(0), "Back again.\n"),
        "{}",
        resumed.stderr
    );
    let log = exported(&sandbox, &id);
    let ends: Vec<&Value> = log
        .iter()
        .filter(|event| event["type"] == "turn/end")
        .map(|event| &event["data"]["reason"]["kind"])
        .collect();
    assert_eq!(ends, [&json!("interrupted"), &json!("completed")]);
    let body = &fake.requests()[2].body;
    let results = tool_results(body);
    assert_eq!(results[0].0, "call_1");
    assert!(results[0].1.starts_with("before-the-crash"), "{results:?}");
}

#[test]
fn the_replay_overlay_runs_a_real_turn_without_network_or_key() {
    let sandbox = Sandbox::new();
    let root = repo_root();
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        "profiles/examples/replay.patch.yml",
        "--output",
        "json",
        "show me where you run",
    ]);
    command
        .current_dir(&root)
        .env_remove("DEEPSEEK_API_KEY")
        .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9");
    // The recorded bash call ran for real, here.
    let output = replayed_bash_output(&sandbox, &mut command);
    assert!(
        output.starts_with(&format!("{}\n", root.display())),
        "{output}"
    );
    assert!(output.contains("Cargo.toml\n"), "{output}");
}
