//! A retried step is recorded as one model call per attempt: the n-th request gets the n-th
//! attempt, so the recorded failure is replayed, retried, and followed by the recorded success.

use std::sync::Arc;

use dsh_kernel::{BoxError, Kernel};
use dsh_llm::{
    ContentBlock, FinishReason, GenerateOptions, LLM, LlmAdapter, LlmFailure, LlmPlugin, Message,
    MessageSource, RetryItem, RetryRecord, RetryScope, StreamChunk, retry_stream,
};
use dsh_llm_replay::{REPLAY_DIVERGED, REPLAY_EXHAUSTED, RecordedStep, Recording, ReplayAdapter};
use dsh_session::SessionEvent;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// A session log under construction: contiguous seqs, the events replay reads.
#[derive(Default)]
struct Log {
    events: Vec<SessionEvent>,
}

impl Log {
    fn push(&mut self, kind: &str, data: Value) -> &mut Self {
        let seq = self.events.len() as u64;
        self.events.push(SessionEvent::new(kind, seq, 0, data));
        self
    }

    fn chunk(&mut self, turn: u64, step: u64, chunk: &StreamChunk) -> &mut Self {
        let chunk = serde_json::to_value(chunk).unwrap();
        self.push(
            "assistant/chunk",
            json!({"turn": turn, "step": step, "chunk": chunk}),
        )
    }

    fn chunks(&mut self, turn: u64, step: u64, chunks: &[StreamChunk]) -> &mut Self {
        for chunk in chunks {
            self.chunk(turn, step, chunk);
        }
        self
    }

    fn retry(&mut self, turn: u64, step: u64) -> &mut Self {
        self.push(
            "llm/retry",
            json!({"retryId": "r", "turn": turn, "step": step, "provider": "deepseek-official",
                   "mode": "normal", "policyKey": "k", "retry": 1, "maxRetries": 2,
                   "delayMs": 1, "failure": {"message": "overloaded", "code": "SERVER"}}),
        )
        .push(
            "llm/retry-started",
            json!({"retryId": "r", "turn": turn, "step": step, "retry": 1}),
        )
    }
}

fn text(text: &str) -> Vec<StreamChunk> {
    vec![
        StreamChunk::TextDelta {
            index: 0,
            text: text.into(),
        },
        StreamChunk::finish(FinishReason::Stop),
    ]
}

fn server_error() -> StreamChunk {
    StreamChunk::error(LlmFailure::new("SERVER", "overloaded"))
}

/// A partial tool call cut off by a server error.
fn doomed_call() -> Vec<StreamChunk> {
    vec![
        StreamChunk::ToolCallDelta {
            index: 0,
            id: "doomed".into(),
            name: Some("bash".into()),
            arguments_delta: "{\"comm".into(),
        },
        server_error(),
    ]
}

fn call(id: &str) -> Vec<StreamChunk> {
    vec![
        StreamChunk::BlockEnd {
            index: 0,
            block: ContentBlock::ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: "{\"command\":\"ls\"}".into(),
            },
        },
        StreamChunk::finish(FinishReason::ToolCalls),
    ]
}

/// Turn 1: step 1 fails mid tool call, is retried and asks for `c1`; step 2 answers.
/// Turn 2: step 1 fails before its `finish` was logged, is retried and answers.
fn retried_session() -> Vec<SessionEvent> {
    let mut log = Log::default();
    log.push("turn/start", json!({"turn": 1}))
        .push("step/start", json!({"turn": 1, "step": 1}))
        .chunks(1, 1, &doomed_call())
        .retry(1, 1)
        .chunks(1, 1, &call("c1"))
        .push("step/end", json!({"turn": 1, "step": 1}))
        .push("step/start", json!({"turn": 1, "step": 2}))
        .chunks(1, 2, &text("done"))
        .push("turn/start", json!({"turn": 2}))
        .chunks(
            2,
            1,
            &[StreamChunk::TextDelta {
                index: 0,
                text: "cut".into(),
            }],
        )
        .retry(2, 1)
        .chunks(2, 1, &text("again"));
    log.events
}

fn user(text: &str) -> Message {
    Message::user(
        vec![ContentBlock::Text { text: text.into() }],
        MessageSource::User,
    )
}

fn result(id: &str) -> Message {
    Message::tool_result(id, vec![ContentBlock::Text { text: "out".into() }], false)
}

fn options(messages: Vec<Message>) -> GenerateOptions {
    let mut options = GenerateOptions::new("deepseek-official", "deepseek-v4-flash", messages);
    options.session_id = Some("retried".into());
    options
}

async fn chunks(
    adapter: &ReplayAdapter,
    options: GenerateOptions,
) -> Result<Vec<StreamChunk>, LlmFailure> {
    let stream = adapter.stream(options).await?;
    Ok(stream.map(Result::unwrap).collect().await)
}

#[test]
fn each_attempt_of_a_retried_step_is_a_call_of_its_own() {
    let recording = Recording::from_events(&retried_session()).unwrap();
    let calls: Vec<(u64, u64, Vec<StreamChunk>)> = recording
        .steps
        .iter()
        .map(|step| (step.turn, step.step, step.chunks.clone()))
        .collect();
    let cut = vec![StreamChunk::TextDelta {
        index: 0,
        text: "cut".into(),
    }];
    assert_eq!(
        calls,
        [
            (1, 1, doomed_call()),
            (1, 1, call("c1")),
            (1, 2, text("done")),
            (2, 1, cut),
            (2, 1, text("again")),
        ]
    );
    let failed: Vec<bool> = recording.steps.iter().map(RecordedStep::failed).collect();
    assert_eq!(failed, [true, false, false, false, false]);
    assert_eq!(recording.steps[0].tool_call_ids(), ["doomed"]);
}

#[test]
fn chunks_of_one_step_without_a_finish_or_retry_stay_one_call() {
    let mut log = Log::default();
    log.chunk(
        1,
        1,
        &StreamChunk::TextDelta {
            index: 0,
            text: "a".into(),
        },
    )
    .push("tool/call", json!({"anything": true}))
    .chunks(1, 1, &text("b"));
    let recording = Recording::from_events(&log.events).unwrap();
    assert_eq!(recording.steps.len(), 1);
    assert_eq!(recording.steps[0].chunks.len(), 3);
}

#[test]
fn a_malformed_chunk_names_its_event() {
    let mut log = Log::default();
    log.push("turn/start", json!({"turn": 1})).push(
        "assistant/chunk",
        json!({"turn": 1, "chunk": {"type": "finish"}}),
    );
    let error = Recording::from_events(&log.events).unwrap_err();
    assert!(
        error.starts_with("event 1 (assistant/chunk) does not have the expected shape: "),
        "{error}"
    );
}

#[tokio::test]
async fn the_nth_request_gets_the_nth_attempt() {
    let adapter = ReplayAdapter::new(Recording::from_events(&retried_session()).unwrap());
    let first = chunks(&adapter, options(vec![user("go")])).await.unwrap();
    assert_eq!(first, doomed_call(), "the recorded failure is replayed");
    let retried = chunks(&adapter, options(vec![user("go")]))
        .await
        .expect("the retry carries no result for the failed attempt's tool call");
    assert_eq!(retried, call("c1"));
    let missing = chunks(&adapter, options(vec![user("go")]))
        .await
        .unwrap_err();
    assert_eq!(missing.code, REPLAY_DIVERGED);
    assert!(
        missing.message.contains("\"c1\"") && !missing.message.contains("doomed"),
        "{}",
        missing.message
    );
    let done = chunks(&adapter, options(vec![user("go"), result("c1")]))
        .await
        .unwrap();
    assert_eq!(done, text("done"));
    let cut = chunks(&adapter, options(vec![user("next")])).await.unwrap();
    assert_eq!(cut.len(), 1);
    let again = chunks(&adapter, options(vec![user("next")])).await.unwrap();
    assert_eq!(again, text("again"));
    let error = chunks(&adapter, options(vec![user("more")]))
        .await
        .unwrap_err();
    assert_eq!(error.code, REPLAY_EXHAUSTED);
    assert_eq!(
        error.message,
        "the replay recording has no more model steps: all 5 were replayed"
    );
}

// Paused time: the default policy's half-second backoff passes at once.
#[tokio::test(start_paused = true)]
async fn the_runtime_retries_the_replayed_failure_into_the_recorded_success() {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(LlmPlugin, json!({})).unwrap();
    kernel.settle().await;
    let llm = ctx.get(&LLM).unwrap();
    let adapter = ReplayAdapter::new(Recording::from_events(&retried_session()).unwrap());
    llm.register_adapter(&ctx, ["deepseek-official"], Arc::new(adapter))
        .unwrap();
    // The replay route's policy is dsh's default: the recorded SERVER failure is retried
    // after about half a second.
    let recorder = Arc::new(|_: &RetryRecord| -> Result<(), BoxError> { Ok(()) });
    let scope = RetryScope { turn: 1, step: 1 };
    let items: Vec<RetryItem> =
        retry_stream(Arc::clone(&llm), options(vec![user("go")]), scope, recorder)
            .collect()
            .await;
    let kinds: Vec<&str> = items
        .iter()
        .map(|item| match item {
            RetryItem::Chunk(chunk) => chunk.chunk_type(),
            RetryItem::Retry(_) => "retry",
            RetryItem::RetryStarted(_) => "retry-started",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tool-call-delta",
            "finish",
            "retry",
            "retry-started",
            "block-end",
            "finish"
        ]
    );
    let last: Vec<StreamChunk> = items
        .iter()
        .skip(4)
        .filter_map(RetryItem::chunk)
        .cloned()
        .collect();
    assert_eq!(last, call("c1"));
    kernel.shutdown().await;
}
