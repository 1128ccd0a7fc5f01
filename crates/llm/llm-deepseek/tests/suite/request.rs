use dsh_llm::{
    ContentBlock, GenerateOptions, Message, MessageSource, Purpose, ToolSchema, user_agent,
};
use dsh_llm_deepseek::serialize::{RequestDefaults, build_request};
use dsh_llm_deepseek::{DeepSeekConfig, PROVIDER, Thinking};
use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply, fixture_path};
use dsh_test_support::sse;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{KEY, adapter_for, collect, options};

fn recorded_body(case: &str, n: u64) -> Value {
    let text = std::fs::read_to_string(fixture_path(case)).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|line| line["n"] == json!(n))
        .unwrap()["body"]
        .clone()
}

/// dsh 0.1.1's third request of `01-zstd-default-one-bash` (after one bash call), rebuilt
/// from harness messages, serializes to the same JSON, key order included.
#[test]
fn matches_recorded_body_with_prior_tool_call() {
    let recorded = recorded_body("01-zstd-default-one-bash", 3);
    let wire = recorded["messages"].as_array().unwrap();
    let text = |i: usize| wire[i]["content"].as_str().unwrap().to_string();
    let call = &wire[3]["tool_calls"][0];
    let tools: Vec<ToolSchema> = recorded["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| ToolSchema {
            name: tool["function"]["name"].as_str().unwrap().into(),
            description: tool["function"]["description"].as_str().unwrap().into(),
            parameters: tool["function"]["parameters"].clone(),
        })
        .collect();
    let mut options = GenerateOptions::new(
        PROVIDER,
        "deepseek-v4-flash",
        vec![
            Message::user(vec![ContentBlock::text(text(1))], MessageSource::User),
            Message::user(
                vec![ContentBlock::text(text(2))],
                MessageSource::plugin("runtime-context"),
            ),
            Message::assistant(
                vec![
                    ContentBlock::reasoning(wire[3]["reasoning_content"].as_str().unwrap()),
                    ContentBlock::tool_call(
                        call["id"].as_str().unwrap(),
                        call["function"]["name"].as_str().unwrap(),
                        call["function"]["arguments"].as_str().unwrap(),
                    ),
                ],
                MessageSource::model(PROVIDER, "deepseek-v4-flash"),
            ),
            Message::tool_result("call_fake_1", vec![ContentBlock::text(text(4))], false),
        ],
    );
    options.system = Some(text(0));
    options.tools = Some(tools);
    options.max_tokens = Some(256_000);
    let defaults = RequestDefaults {
        thinking: None,
        reasoning_effort: Some("high".into()),
    };
    let body = build_request(&options, &defaults).unwrap();
    assert_eq!(body, recorded);
    assert_eq!(
        serde_json::to_string(&body).unwrap(),
        serde_json::to_string(&recorded).unwrap()
    );
    // The whole body, readable: assistant with reasoning_content, tool_calls and content "",
    // then role "tool" with tool_call_id.
    insta::assert_snapshot!(
        "body_with_a_prior_tool_call",
        serde_json::to_string_pretty(&body).unwrap()
    );
}

#[test]
fn session_title_request_matches_recording() {
    let recorded = recorded_body("01-zstd-default-one-bash", 2);
    let wire = recorded["messages"].as_array().unwrap();
    let mut options = GenerateOptions::new(
        PROVIDER,
        "deepseek-v4-flash",
        vec![Message::user(
            vec![ContentBlock::text(wire[1]["content"].as_str().unwrap())],
            MessageSource::User,
        )],
    );
    options.system = wire[0]["content"].as_str().map(str::to_owned);
    options.max_tokens = Some(64);
    options.purpose = Some(Purpose::SessionTitle);
    let defaults = RequestDefaults {
        thinking: None,
        reasoning_effort: Some("high".into()),
    };
    assert_eq!(build_request(&options, &defaults).unwrap(), recorded);
}

#[test]
fn thinking_and_content_rules() {
    let defaults = RequestDefaults {
        thinking: None,
        reasoning_effort: Some("high".into()),
    };
    let mut opts = options("x");
    opts.reasoning_effort = Some("off".into());
    opts.tools = Some(vec![]);
    let body = build_request(&opts, &defaults).unwrap();
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert!(body.get("reasoning_effort").is_none() && body.get("tools").is_none());
    opts.reasoning_effort = Some("medium".into());
    assert_eq!(
        build_request(&opts, &defaults).unwrap_err().code,
        "UNSUPPORTED_REASONING_EFFORT"
    );
    opts.reasoning_effort = Some("max".into());
    let disabled = RequestDefaults {
        thinking: Some(Thinking::Disabled),
        reasoning_effort: None,
    };
    assert_eq!(
        build_request(&opts, &disabled).unwrap_err().code,
        "UNSUPPORTED_REASONING_EFFORT"
    );
    opts.reasoning_effort = None;
    assert_eq!(
        build_request(&opts, &disabled).unwrap()["thinking"],
        json!({"type": "disabled"})
    );
    let none = RequestDefaults::default();
    assert!(
        build_request(&opts, &none)
            .unwrap()
            .get("thinking")
            .is_none()
    );

    let mut opts = options("x");
    opts.messages = vec![
        Message::assistant(
            vec![ContentBlock::reasoning("r")],
            MessageSource::model(PROVIDER, "m"),
        ),
        Message::tool_result("c1", vec![], true),
    ];
    let body = build_request(&opts, &defaults).unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "assistant", "content": "", "reasoning_content": "r"},
            {"role": "tool", "tool_call_id": "c1", "content": "(no output)"},
        ])
    );
    opts.messages = vec![Message::user(
        vec![ContentBlock::Image {
            attachment: json!({}),
        }],
        MessageSource::User,
    )];
    let refused = build_request(&opts, &defaults).unwrap_err();
    assert_eq!(refused.code, "UNSUPPORTED_CONTENT");
    assert_eq!(
        refused.message,
        "The DeepSeek chat-completions adapter does not support image content."
    );
    // An image two tool results deep is refused as well.
    let nested = ContentBlock::ToolResult {
        tool_call_id: "inner".into(),
        content: vec![ContentBlock::Image {
            attachment: json!({}),
        }],
        is_error: None,
    };
    opts.messages = vec![Message::tool_result("outer", vec![nested], false)];
    let refused = build_request(&opts, &defaults).unwrap_err();
    assert_eq!(refused.code, "UNSUPPORTED_CONTENT");
    assert_eq!(
        refused.message,
        "The DeepSeek chat-completions adapter does not support image content."
    );
}

#[tokio::test]
async fn recorded_request_body_and_headers() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("ok", 2, None)));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let mut opts = options("hello");
    opts.session_id = Some("sess-1".into());
    opts.purpose = Some(Purpose::Compaction);
    let (_, failure) = collect(&adapter, opts).await;
    assert_eq!(failure, None);
    let requests = server.wait_for_requests(1).await.unwrap();
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("user-agent"), Some(user_agent().as_str()));
    assert_eq!(
        request.header("x-deepseek-harness-session-id"),
        Some("sess-1")
    );
    assert_eq!(
        request.header("x-deepseek-harness-user-id"),
        None,
        "dsh's anonymous installation id is not part of this port"
    );
    assert_eq!(request.header("x-deepseek-harness-compact"), Some("1"));
    assert_eq!(
        request.body,
        json!({
            "model": "deepseek-v4-flash",
            "messages": [{"role": "user", "content": "hello"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "thinking": {"type": "enabled"},
            "reasoning_effort": "high",
        })
    );
}

#[test]
fn config_parses_camel_case() {
    let config: DeepSeekConfig = serde_json::from_value(json!({
        "apiKeyEnv": "MY_KEY", "baseURL": "http://x", "thinking": "disabled",
        "reasoningEffort": "low", "maxTokens": 10, "defaultContextWindow": 20,
        "streamIdleTimeoutMs": 30, "headersTimeoutMs": 40, "requestTimeoutMs": 50,
        "retryPolicy": {"mode": "normal"}
    }))
    .unwrap();
    assert_eq!(config.api_key_env(), "MY_KEY");
    assert_eq!(config.thinking, Some(Thinking::Disabled));
    assert_eq!(
        (
            config.stream_idle_timeout_ms(),
            config.headers_timeout_ms(),
            config.request_timeout_ms()
        ),
        (30, 40, 50)
    );
    let defaults = DeepSeekConfig::default();
    assert_eq!(
        (
            defaults.api_key_env(),
            defaults.reasoning_effort(),
            defaults.max_tokens(),
            defaults.default_context_window(),
            defaults.stream_idle_timeout_ms(),
            defaults.headers_timeout_ms(),
            defaults.request_timeout_ms()
        ),
        (
            "DEEPSEEK_API_KEY",
            "high",
            256_000,
            1_000_000,
            300_000,
            60_000,
            1_800_000
        )
    );
}
