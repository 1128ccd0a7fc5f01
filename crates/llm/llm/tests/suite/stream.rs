//! `LlmRuntime::stream`: the waterfall, failure normalization, the stream contract, request
//! adjustment, and prepared calls.

use std::sync::Arc;

use dsh_kernel::Next;
use dsh_llm::{
    CancellationToken, ChunkStream, ContentBlock, FinishReason, GenerateOptions, LlmCallConfig,
    LlmFailure, LlmStreamEvent, Message, MessageSource, ModelInfo, ReasoningInfo, Role,
    StreamChunk, chunk_stream_of, codes,
};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Harness, Script, Scripted, final_failure, request, text_reply};

fn text(chunks: &[StreamChunk]) -> String {
    chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn listeners_wrap_the_adapter_stream() {
    let h = Harness::new().await;
    h.register(
        &["a"],
        Scripted::arc(vec![Script::chunks(text_reply("quiet"))]),
    );
    h.root()
        .on::<LlmStreamEvent>(
            |options: GenerateOptions, next: Next<GenerateOptions, ChunkStream>| async move {
                assert_eq!(options.provider, "a");
                let inner = next.run(options).await;
                inner
                    .map(|chunk| match chunk {
                        StreamChunk::TextDelta { index, text } => StreamChunk::TextDelta {
                            index,
                            text: text.to_uppercase(),
                        },
                        other => other,
                    })
                    .boxed()
            },
        )
        .unwrap();
    assert_eq!(text(&h.collect(request("a")).await), "QUIET");
}

#[tokio::test]
async fn a_listener_may_answer_without_the_adapter() {
    let h = Harness::new().await;
    let adapter = Scripted::arc(vec![Script::chunks(text_reply("adapter"))]);
    h.register(&["a"], adapter.clone());
    h.root()
        .on::<LlmStreamEvent>(
            |_options: GenerateOptions, _next: Next<GenerateOptions, ChunkStream>| async move {
                chunk_stream_of(text_reply("replayed"))
            },
        )
        .unwrap();
    assert_eq!(h.collect(request("a")).await, text_reply("replayed"));
    assert_eq!(
        h.collect(request("unregistered")).await,
        text_reply("replayed")
    );
    assert!(adapter.requests().is_empty());
}

#[tokio::test]
async fn a_listener_may_reroute_before_the_adapter_is_chosen() {
    let h = Harness::new().await;
    let target = Scripted::arc(vec![Script::chunks(text_reply("rerouted"))]);
    h.register(&["target"], target.clone());
    h.root()
        .on::<LlmStreamEvent>(
            |mut options: GenerateOptions, next: Next<GenerateOptions, ChunkStream>| async move {
                "target".clone_into(&mut options.provider);
                next.run(options).await
            },
        )
        .unwrap();
    assert_eq!(text(&h.collect(request("alias")).await), "rerouted");
    assert_eq!(target.requests()[0].provider, "target");
}

#[tokio::test]
async fn dispatch_failures_keep_their_facts() {
    let h = Harness::new().await;
    let failure = LlmFailure::new(codes::RATE_LIMIT, "provider busy")
        .with_status(429)
        .with_retry_after_ms(1500)
        .with_request_id("req-7");
    h.register(&["a"], Scripted::arc(vec![Script::Fail(failure.clone())]));
    let chunks = h.collect(request("a")).await;
    assert_eq!(
        serde_json::to_value(&chunks).unwrap(),
        json!([{"type": "finish", "reason": {"kind": "error", "failure": {
            "message": "provider busy", "code": "RATE_LIMIT", "status": 429,
            "providerRetryAfterMs": 1500, "requestId": "req-7"}}}])
    );
}

#[tokio::test]
async fn a_mid_stream_failure_ends_the_stream() {
    let h = Harness::new().await;
    let partial = vec![
        Ok(StreamChunk::TextDelta {
            index: 0,
            text: "half".into(),
        }),
        Err(LlmFailure::new(codes::TRANSPORT, "connection reset")),
        Ok(StreamChunk::TextDelta {
            index: 0,
            text: "never read".into(),
        }),
    ];
    h.register(&["a"], Scripted::arc(vec![Script::Items(partial)]));
    let chunks = h.collect(request("a")).await;
    assert_eq!(chunks.len(), 2);
    assert_eq!(text(&chunks), "half");
    let (kind, failure) = final_failure(&chunks);
    assert_eq!(kind, "error");
    assert_eq!(
        failure,
        LlmFailure::new(codes::TRANSPORT, "connection reset")
    );
}

#[tokio::test]
async fn panics_and_empty_failures_are_normalized() {
    let h = Harness::new().await;
    h.register(
        &["a"],
        Scripted::arc(vec![Script::Panic, Script::Fail(LlmFailure::new("", ""))]),
    );
    let (kind, failure) = final_failure(&h.collect(request("a")).await);
    assert_eq!(kind, "error");
    assert_eq!(
        failure,
        LlmFailure::unknown("LLM adapter panicked: adapter bug")
    );
    let (_, failure) = final_failure(&h.collect(request("a")).await);
    assert_eq!(failure, LlmFailure::unknown("LLM adapter failed"));
}

#[tokio::test]
async fn aborted_when_the_code_says_so_or_the_signal_fired() {
    let h = Harness::new().await;
    h.register(
        &["a"],
        Scripted::arc(vec![
            Script::Fail(LlmFailure::aborted("stopped by provider")),
            Script::Fail(LlmFailure::unknown("stopped")),
        ]),
    );
    let (kind, _) = final_failure(&h.collect(request("a")).await);
    assert_eq!(kind, "aborted");
    let options = request("a");
    options.signal.cancel();
    let (kind, failure) = final_failure(&h.collect(options).await);
    assert_eq!(kind, "aborted");
    assert_eq!(failure.message, "stopped");
}

#[tokio::test]
async fn cancelling_a_hung_stream_ends_it_at_once() {
    let h = Harness::new().await;
    let first = StreamChunk::TextDelta {
        index: 0,
        text: "a".into(),
    };
    h.register(
        &["a"],
        Scripted::arc(vec![Script::ThenHang(vec![Ok(first.clone())])]),
    );
    let options = request("a");
    let signal = options.signal.clone();
    let mut stream = h.llm.stream(options);
    assert_eq!(stream.next().await, Some(first));
    signal.cancel();
    assert_eq!(
        stream.next().await,
        Some(StreamChunk::finish(FinishReason::Aborted {
            failure: LlmFailure::aborted("LLM request aborted")
        }))
    );
    assert_eq!(stream.next().await, None);
}

#[tokio::test]
async fn nothing_passes_after_finish() {
    let h = Harness::new().await;
    let mut chunks = text_reply("done");
    chunks.push(StreamChunk::TextDelta {
        index: 0,
        text: "late".into(),
    });
    chunks.push(StreamChunk::Usage {
        usage: dsh_llm::TokenUsage::default(),
    });
    h.register(&["a"], Scripted::arc(vec![Script::chunks(chunks)]));
    assert_eq!(h.collect(request("a")).await, text_reply("done"));
}

#[tokio::test]
async fn a_stream_without_finish_is_closed_with_an_error() {
    let h = Harness::new().await;
    let mut reply = text_reply("cut");
    reply.pop();
    h.register(&["a"], Scripted::arc(vec![Script::chunks(reply.clone())]));
    let chunks = h.collect(request("a")).await;
    assert_eq!(chunks[..reply.len()], reply[..]);
    let (kind, failure) = final_failure(&chunks);
    assert_eq!(kind, "error");
    assert_eq!(
        failure,
        LlmFailure::new(
            codes::STREAM_CLOSED,
            "LLM stream ended without a finish chunk"
        )
    );
}

#[tokio::test]
async fn listener_streams_are_held_to_the_contract_too() {
    let h = Harness::new().await;
    h.root()
        .on::<LlmStreamEvent>(
            |_options: GenerateOptions, _next: Next<GenerateOptions, ChunkStream>| async move {
                futures_util::stream::iter([0, 1])
                    .map(|n| {
                        assert!(n == 0, "listener bug");
                        StreamChunk::TextDelta {
                            index: 0,
                            text: "x".into(),
                        }
                    })
                    .boxed()
            },
        )
        .unwrap();
    let chunks = h.collect(request("any")).await;
    assert_eq!(chunks.len(), 2);
    let (_, failure) = final_failure(&chunks);
    assert_eq!(
        failure,
        LlmFailure::unknown("LLM stream panicked: listener bug")
    );
}

fn historical(provider: &str) -> Message {
    Message {
        id: "old".into(),
        role: Role::Assistant,
        content: vec![ContentBlock::text("old response")],
        source: MessageSource::Model {
            provider: provider.into(),
            model: "old-model".into(),
            replay_state: Some(json!({"private": "state"})),
        },
    }
}

#[tokio::test]
async fn replay_state_stays_with_its_adapter_instance() {
    let h = Harness::new().await;
    let shared = Scripted::arc(vec![
        Script::chunks(text_reply("a")),
        Script::chunks(text_reply("b")),
    ]);
    h.register(&["historical", "target"], shared.clone());
    let other = Scripted::arc(vec![Script::chunks(text_reply("c"))]);
    h.register(&["other"], other.clone());

    let mut options = request("target");
    options.messages = vec![historical("historical")];
    h.collect(options.clone()).await;
    assert_eq!(
        shared.requests()[0].messages,
        vec![historical("historical")]
    );

    options.provider = "other".into();
    h.collect(options).await;
    assert_eq!(
        other.requests()[0].messages[0].source,
        MessageSource::model("historical", "old-model")
    );
}

fn flash() -> ModelInfo {
    ModelInfo {
        context_window: Some(1_000_000),
        max_output: Some(256_000),
        reasoning: Some(ReasoningInfo::new(
            ["off", "low", "high", "max"],
            Some("high"),
        )),
        input_modalities: Some(vec!["text".into()]),
        ..ModelInfo::new("flash")
    }
}

#[tokio::test]
async fn model_defaults_are_filled_and_efforts_checked() {
    let h = Harness::new().await;
    let adapter =
        Arc::new(Scripted::new(vec![Script::chunks(text_reply("ok"))]).with_model(flash()));
    h.register(&["ds"], adapter.clone());
    let mut options = GenerateOptions::new("ds", "flash", Vec::new());
    h.collect(options.clone()).await;
    let sent = &adapter.requests()[0];
    assert_eq!(sent.max_tokens, Some(256_000));
    assert_eq!(sent.reasoning_effort.as_deref(), Some("high"));

    options.reasoning_effort = Some("extreme".into());
    let (kind, failure) = final_failure(&h.collect(options).await);
    assert_eq!(kind, "error");
    assert_eq!(
        failure,
        LlmFailure::new(
            codes::UNSUPPORTED_REASONING_EFFORT,
            "provider \"ds\" model \"flash\" does not support reasoning effort \"extreme\""
        )
    );
    assert_eq!(adapter.requests().len(), 1, "refused before dispatch");

    let mut no_reasoning = request("ds");
    no_reasoning.reasoning_effort = Some("high".into());
    let (_, failure) = final_failure(&h.collect(no_reasoning).await);
    assert_eq!(failure.code, codes::UNSUPPORTED_REASONING_EFFORT);
}

#[tokio::test]
async fn images_become_text_for_a_text_only_model() {
    let h = Harness::new().await;
    let adapter =
        Arc::new(Scripted::new(vec![Script::chunks(text_reply("ok"))]).with_model(flash()));
    h.register(&["ds"], adapter.clone());
    let image = ContentBlock::Image {
        attachment: json!({"attachmentId": "sha256:feedfacecafebeef"}),
    };
    let message = Message::user(vec![image], MessageSource::User);
    h.collect(GenerateOptions::new("ds", "flash", vec![message]))
        .await;
    assert_eq!(
        adapter.requests()[0].messages[0].content,
        vec![ContentBlock::text(
            "[image omitted because this model accepts text only; attachment sha256:feedface]"
        )]
    );
}

#[tokio::test]
async fn prepared_calls_pin_their_registration_and_dispatch_once() {
    let h = Harness::new().await;
    let first =
        Arc::new(Scripted::new(vec![Script::chunks(text_reply("first"))]).with_model(flash()));
    let disposer = h
        .llm
        .register_adapter(&h.root(), ["ds"], first.clone())
        .unwrap();
    let signal = CancellationToken::new();
    let mut config = LlmCallConfig::new("ds", "flash");
    config.max_tokens = Some(100);
    let prepared = h.llm.prepare_call(config, &signal).await.unwrap();
    assert_eq!(prepared.config().max_tokens, Some(100));
    assert_eq!(prepared.config().reasoning_effort.as_deref(), Some("high"));
    assert!(prepared.adapter_defaults().reasoning_effort);
    assert!(!prepared.adapter_defaults().max_tokens);
    assert_eq!(prepared.context_window(), Some(1_000_000));
    assert_eq!(prepared.retry_policy(), &dsh_llm::RetryPolicy::default());

    // The route moves to another adapter; the prepared call keeps the first.
    disposer.dispose().await;
    let second = Scripted::arc(vec![Script::chunks(text_reply("second"))]);
    h.register(&["ds"], second.clone());

    let mut options = GenerateOptions::new("ds", "flash", Vec::new());
    let Err(wrong) = prepared.stream(options.clone()) else {
        panic!("a drifted config is refused")
    };
    assert_eq!(wrong.code, codes::INVALID_PREPARED_CALL);
    assert_eq!(
        wrong.message,
        "prepared LLM call config changed before adapter dispatch"
    );
    options.set_call_config(prepared.config());
    let chunks: Vec<StreamChunk> = prepared.stream(options.clone()).unwrap().collect().await;
    assert_eq!(text(&chunks), "first");
    assert!(second.requests().is_empty());
    let Err(again) = prepared.stream(options) else {
        panic!("a second dispatch is refused")
    };
    assert_eq!(
        again.message,
        "a prepared LLM call can only be dispatched once"
    );
}

#[tokio::test]
async fn a_listener_changing_a_prepared_config_fails_the_call() {
    let h = Harness::new().await;
    h.register(
        &["ds"],
        Scripted::arc(vec![Script::chunks(text_reply("x"))]),
    );
    h.root()
        .on::<LlmStreamEvent>(
            |mut options: GenerateOptions, next: Next<GenerateOptions, ChunkStream>| async move {
                options.temperature = Some(0.5);
                next.run(options).await
            },
        )
        .unwrap();
    let prepared = h
        .llm
        .prepare_call(LlmCallConfig::new("ds", "m"), &CancellationToken::new())
        .await
        .unwrap();
    let mut options = request("ds");
    options.set_call_config(prepared.config());
    let chunks: Vec<StreamChunk> = prepared.stream(options).unwrap().collect().await;
    let (_, failure) = final_failure(&chunks);
    assert_eq!(failure.code, codes::INVALID_PREPARED_CALL);
}
