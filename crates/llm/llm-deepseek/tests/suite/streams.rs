use std::time::Duration;

use dsh_llm::{ContentBlock, FinishReason, StreamChunk, TokenUsage};
use dsh_llm_deepseek::DeepSeekConfig;
use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{self, SseEvent};
use pretty_assertions::assert_eq;

use super::common::{adapter_for, collect, options};

fn start(index: u64, block_type: &str) -> StreamChunk {
    StreamChunk::BlockStart {
        index,
        block_type: block_type.into(),
    }
}

#[tokio::test]
async fn text_only() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events(
        "hello",
        3,
        Some(sse::usage(3, 1, None, None)),
    )));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure, None);
    assert_eq!(
        chunks,
        vec![
            start(0, "text"),
            StreamChunk::TextDelta {
                index: 0,
                text: "hel".into()
            },
            StreamChunk::TextDelta {
                index: 0,
                text: "lo".into()
            },
            StreamChunk::BlockEnd {
                index: 0,
                block: ContentBlock::text("hello")
            },
            StreamChunk::Usage {
                usage: TokenUsage {
                    input_tokens: 3,
                    output_tokens: 1,
                    ..TokenUsage::default()
                }
            },
            StreamChunk::finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn reasoning_then_text_with_cache_hits() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::comment("keep-alive"),
        SseEvent::data(sse::chunk_reasoning("think")),
        SseEvent::data(sse::chunk_reasoning("ing")),
        SseEvent::data(sse::chunk_text("answer")),
        SseEvent::data(sse::chunk_finish("stop", None)),
        SseEvent::data(sse::chunk_usage(sse::usage(100, 20, Some(60), Some(7)))),
    ]));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure, None);
    assert_eq!(
        chunks,
        vec![
            start(0, "reasoning"),
            StreamChunk::ReasoningDelta {
                index: 0,
                text: "think".into()
            },
            StreamChunk::ReasoningDelta {
                index: 0,
                text: "ing".into()
            },
            start(1, "text"),
            StreamChunk::TextDelta {
                index: 1,
                text: "answer".into()
            },
            StreamChunk::BlockEnd {
                index: 0,
                block: ContentBlock::reasoning("thinking")
            },
            StreamChunk::BlockEnd {
                index: 1,
                block: ContentBlock::text("answer")
            },
            StreamChunk::Usage {
                usage: TokenUsage {
                    input_tokens: 40,
                    output_tokens: 20,
                    cache_read_tokens: Some(60),
                    cache_write_tokens: None,
                    reasoning_tokens: Some(7),
                }
            },
            StreamChunk::finish(FinishReason::Stop),
        ]
    );
}

#[tokio::test]
async fn parallel_tool_calls_interleaved() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::data(sse::chunk_tool_call(
            0,
            Some("call_a"),
            Some("bash"),
            "{\"com",
        )),
        SseEvent::data(sse::chunk_tool_call(
            1,
            Some("call_b"),
            Some("read"),
            "{\"pa",
        )),
        SseEvent::data(sse::chunk_tool_call(0, None, None, "mand\":\"ls\"}")),
        SseEvent::data(sse::chunk_tool_call(1, None, None, "th\":\"x\"}")),
        SseEvent::data(sse::chunk_finish(
            "tool_calls",
            Some(sse::usage(5, 6, None, None)),
        )),
    ]));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure, None);
    let delta = |index: u64, id: &str, name: &str, args: &str| StreamChunk::ToolCallDelta {
        index,
        id: id.into(),
        name: Some(name.into()),
        arguments_delta: args.into(),
    };
    assert_eq!(
        chunks,
        vec![
            start(0, "tool-call"),
            delta(0, "call_a", "bash", "{\"com"),
            start(1, "tool-call"),
            delta(1, "call_b", "read", "{\"pa"),
            delta(0, "call_a", "bash", "mand\":\"ls\"}"),
            delta(1, "call_b", "read", "th\":\"x\"}"),
            StreamChunk::BlockEnd {
                index: 0,
                block: ContentBlock::tool_call("call_a", "bash", "{\"command\":\"ls\"}")
            },
            StreamChunk::BlockEnd {
                index: 1,
                block: ContentBlock::tool_call("call_b", "read", "{\"path\":\"x\"}")
            },
            StreamChunk::Usage {
                usage: TokenUsage {
                    input_tokens: 5,
                    output_tokens: 6,
                    ..TokenUsage::default()
                }
            },
            StreamChunk::finish(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn empty_completion_is_empty_response() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::data(sse::chunk_finish("stop", None)),
    ]));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure, None);
    let reason = chunks.last().and_then(StreamChunk::finish_reason).unwrap();
    let failure = reason.failure().unwrap();
    assert_eq!(failure.code, "EMPTY_RESPONSE");
    assert_eq!(
        failure.message,
        "model returned a completed response with no content"
    );
}

#[tokio::test]
async fn cut_stream_is_stream_closed() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("hello", 2, None)).without_done());
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure.unwrap().code, "STREAM_CLOSED");
    assert!(chunks.iter().all(|c| c.finish_reason().is_none()));
}

#[tokio::test]
async fn malformed_payload() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(vec![SseEvent::data_text("{not json")]));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (_, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure.unwrap().code, "MALFORMED_RESPONSE");
}

#[tokio::test]
async fn idle_timeout_with_short_configured_timeout() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("hello", 1, None)).stall_after(2));
    let config = DeepSeekConfig {
        stream_idle_timeout_ms: Some(150),
        ..DeepSeekConfig::default()
    };
    let adapter = adapter_for(&server, config);
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    let failure = failure.unwrap();
    assert_eq!(failure.code, "TIMEOUT");
    assert_eq!(failure.message, "DeepSeek stream idle timeout after 150ms");
    assert!(!chunks.is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_default_five_minute_idle_timeout_fires_on_a_paused_clock() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("hello", 1, None)).stall_after(2));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let started = tokio::time::Instant::now();
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    let failure = failure.unwrap();
    assert_eq!(failure.code, "TIMEOUT");
    assert_eq!(
        failure.message,
        "DeepSeek stream idle timeout after 300000ms"
    );
    assert!(started.elapsed() >= std::time::Duration::from_secs(300));
    assert!(!chunks.is_empty());
}

#[tokio::test]
async fn abort_gives_aborted() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let opts = options("hi");
    let signal = opts.signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        signal.cancel();
    });
    let (_, failure) = collect(&adapter, opts).await;
    assert_eq!(failure.unwrap().code, "ABORTED");
}
