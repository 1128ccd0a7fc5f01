//! Tool round trips: `tool/call` and `tool/result` in the log, the results in the next
//! request, header changes when the tool set changes, failing and truncated calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_session::SurfaceOp;
use dsh_tools::{FnTool, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    Harness, Reply, assert_well_formed, cut_off, echo_tool, events_of, idle, kinds, object_schema,
    request_transcripts, text_reply, tool_reply, turn_ends, user,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_round_trips_into_the_next_request() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(
            Some("calling echo"),
            &[("c1", "echo", json!({"text": "ping"}))],
        )),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    h.tool(echo_tool());
    let agent = h.agent().await;
    agent.followup(user("use the tool")).unwrap();
    idle(&agent).await;

    let chunk_count = |kinds: &[String]| kinds.iter().filter(|k| *k == "assistant/chunk").count();
    let all = kinds(&agent);
    let first_message = all.iter().position(|k| k == "assistant/message").unwrap();
    let mut step_one: Vec<&str> = all[..first_message]
        .iter()
        .map(String::as_str)
        .filter(|k| *k != "assistant/chunk")
        .collect();
    step_one.dedup();
    assert_eq!(
        step_one,
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "request/header",
            "request/context",
        ]
    );
    let mut rest: Vec<&str> = all[first_message..].iter().map(String::as_str).collect();
    rest.dedup();
    assert_eq!(
        rest,
        [
            "assistant/message",
            "tool/call",
            "tool/result",
            "step/end",
            "step/start",
            "assistant/chunk",
            "assistant/message",
            "step/end",
            "turn/end",
        ],
        "the second step logs no user message, header or context"
    );
    // text block (14) + tool block (4) + usage + finish, then "done" (8)
    assert_eq!(chunk_count(&all), 20 + 8);

    let call = &events_of(&agent, "tool/call")[0];
    assert_eq!(
        *call.data,
        json!({"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": r#"{"text":"ping"}"#})
    );
    assert_eq!(call.surface_op, None);
    let result = &events_of(&agent, "tool/result")[0];
    assert_eq!(result.source_event_seqs, Some(vec![call.seq]));
    assert_eq!(result.surface_op, Some(SurfaceOp::Append));
    assert_eq!(result.data["turn"], 1);
    assert_eq!(result.data["step"], 1);
    let message = &result.data["message"];
    assert_eq!(message["role"], "user");
    assert_eq!(message["source"], json!({"kind": "tool", "callId": "c1"}));
    assert_eq!(
        message["content"],
        json!([{"type": "tool-result", "toolCallId": "c1",
                "content": [{"type": "text", "text": "echo: ping"}], "isError": false}])
    );
    assert!(result.data.get("error").is_none());
    let steps: Vec<_> = events_of(&agent, "step/start")
        .iter()
        .map(|event| (*event.data).clone())
        .collect();
    assert_eq!(
        steps,
        [json!({"turn": 1, "step": 1}), json!({"turn": 1, "step": 2})]
    );

    assert_eq!(
        request_transcripts(&h.adapter),
        [
            vec!["user: use the tool"],
            vec![
                "user: use the tool",
                r#"assistant: calling echo | call c1 echo {"text":"ping"}"#,
                "user: result c1: echo: ping",
            ],
        ]
    );
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_eq!(events_of(&agent, "request/header").len(), 1);
    assert_eq!(events_of(&agent, "request/context").len(), 1);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_set_change_between_steps_logs_a_changed_header() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "install", json!({}))])),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    let tools = Arc::clone(&h.tools);
    let ctx = h.ctx.clone();
    h.tool(FnTool::new(
        "install",
        "Installs another tool.",
        json!({"type": "object"}),
        move |_args, _run| {
            let registered = tools.register(&ctx, Arc::new(echo_tool()));
            async move {
                registered.map_err(|error| dsh_tools::ToolError::new(error.to_string()))?;
                Ok(ToolOutput::text("installed"))
            }
        },
    ));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    let headers = events_of(&agent, "request/header");
    assert_eq!(headers.len(), 2);
    assert_eq!(headers[0].data["reason"], "initial");
    assert_eq!(headers[1].data["reason"], "change");
    let names = |header: &serde_json::Value| -> Vec<String> {
        header["header"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&headers[0].data), ["install"]);
    assert_eq!(names(&headers[1].data), ["echo", "install"]);
    let all = kinds(&agent);
    let second_step = all.iter().rposition(|k| k == "step/start").unwrap();
    assert_eq!(
        all[second_step + 1],
        "request/header",
        "the changed header opens the second step's request"
    );
    assert_eq!(
        events_of(&agent, "request/context").len(),
        1,
        "the route did not change"
    );
    let second = &h.adapter.requests()[1];
    assert_eq!(second.tools.as_ref().unwrap().len(), 2);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_and_unknown_tools_reach_the_model_as_error_results() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(
            None,
            &[
                ("c1", "nope", json!({})),
                ("c2", "broken", json!({})),
                ("c3", "echo", json!({"text": 5})),
            ],
        )),
        Reply::Chunks(text_reply("noted")),
    ])
    .await;
    h.tool(echo_tool());
    h.tool(FnTool::new(
        "broken",
        "Always fails.",
        json!({"type": "object"}),
        |_args, _run| async { Err(dsh_tools::ToolError::new("disk on fire")) },
    ));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    let results = events_of(&agent, "tool/result");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].data["error"]["code"], "UNKNOWN_TOOL");
    assert_eq!(
        results[0].data["message"]["content"][0]["content"][0]["text"],
        r#"Error: unknown tool "nope""#
    );
    assert_eq!(
        results[1].data["message"]["content"][0]["content"][0]["text"],
        "Error: disk on fire"
    );
    assert_eq!(results[2].data["error"]["code"], "INVALID_ARGS");
    for result in &results {
        assert_eq!(result.data["message"]["content"][0]["isError"], true);
    }
    let second = &request_transcripts(&h.adapter)[1];
    assert_eq!(second.len(), 5);
    assert!(second[2].starts_with("user: result c1 (error): Error: unknown tool"));
    assert_eq!(second[3], "user: result c2 (error): Error: disk on fire");
    assert_eq!(turn_ends(&agent), [json!({"kind": "completed"})]);
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_meta_travels_on_the_result_event() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(None, &[("c1", "shown", json!({}))])),
        Reply::Chunks(text_reply("ok")),
    ])
    .await;
    h.tool(FnTool::new(
        "shown",
        "Has presentation metadata.",
        json!({"type": "object"}),
        |_args, _run| async { Ok(ToolOutput::text("body").with_meta(json!({"lines": 3}))) },
    ));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;
    let result = &events_of(&agent, "tool/result")[0];
    assert_eq!(result.data["meta"], json!({"lines": 3}));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_tokens_reply_ends_the_turn_without_running_its_tool_calls() {
    let h = Harness::new(vec![Reply::Chunks(cut_off(tool_reply(
        None,
        &[("c1", "echo", json!({"text": "x"}))],
    )))])
    .await;
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    h.tool(FnTool::new(
        "echo",
        "Counts its runs.",
        object_schema(&["text"]),
        move |_args, _run| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolOutput::text("should not run")) }
        },
    ));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(events_of(&agent, "tool/call").is_empty());
    assert_eq!(turn_ends(&agent), [json!({"kind": "max-tokens"})]);
    let message = &events_of(&agent, "assistant/message")[0];
    assert_eq!(message.data["message"]["content"], json!([]));
    assert_eq!(
        message.data["usage"],
        json!({"inputTokens": 10, "outputTokens": 5})
    );
    assert_eq!(
        agent.session().derive_messages().len(),
        1,
        "an empty completion is not a model message"
    );
    assert_eq!(h.adapter.request_count(), 1);

    // The next turn is independent: it completes normally.
    h.adapter.push(Reply::Chunks(text_reply("clean")));
    agent.followup(user("again")).unwrap();
    idle(&agent).await;
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "max-tokens"}), json!({"kind": "completed"})]
    );
    h.shutdown().await;
}
