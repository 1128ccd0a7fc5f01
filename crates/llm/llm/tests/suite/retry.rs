//! Retry delays, and `retry_stream` against a scripted adapter on tokio's paused clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_kernel::BoxError;
use dsh_llm::retry::{Backoff, LlmRetry, RetryMode, next_delay_ms};
use dsh_llm::{
    FinishReason, GenerateOptions, LlmFailure, RetryItem, RetryPolicy, RetryRecord, RetryRecorder,
    RetryScope, StreamChunk, codes, next_delay, retry_stream,
};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::time::Instant;

use super::support::{Harness, Script, Scripted, request, text_reply};

fn server_error() -> LlmFailure {
    LlmFailure::new(codes::SERVER, "DeepSeek API error (HTTP 500)").with_status(500)
}

#[test]
fn delays_double_from_500ms_with_jitter_and_stop_after_five() {
    let policy = RetryPolicy::default();
    let failure = server_error();
    let delays: Vec<Option<f64>> = (1..=6)
        .map(|retry| next_delay_ms(&policy, retry, &failure, 0.5))
        .collect();
    assert_eq!(
        delays,
        [
            Some(500.0),
            Some(1000.0),
            Some(2000.0),
            Some(4000.0),
            Some(8000.0),
            None
        ]
    );
    assert_eq!(next_delay_ms(&policy, 1, &failure, 0.0), Some(450.0));
    assert_eq!(next_delay_ms(&policy, 1, &failure, 1.0), Some(550.0));
    assert_eq!(
        next_delay(&policy, 2, &failure, 0.25),
        Some(Duration::from_millis(950))
    );
    let generous = RetryPolicy {
        mode: RetryMode::Normal {
            max_retries: 10,
            retryable_codes: vec![codes::SERVER.into()],
        },
        backoff: Backoff::default(),
    };
    assert_eq!(
        next_delay_ms(&generous, 7, &failure, 1.0),
        Some(10_000.0),
        "capped"
    );
}

#[test]
fn provider_delays_are_honoured_within_the_maximum() {
    let policy = RetryPolicy::default();
    let busy = LlmFailure::new(codes::RATE_LIMIT, "busy")
        .with_status(429)
        .with_retry_after_ms(1500);
    assert_eq!(next_delay_ms(&policy, 1, &busy, 0.9), Some(1500.0));
    let long = busy.with_retry_after_ms(60_000);
    assert_eq!(
        next_delay_ms(&policy, 1, &long, 0.5),
        None,
        "normal gives up"
    );
    let always = RetryPolicy {
        mode: RetryMode::Always,
        backoff: Backoff::default(),
    };
    assert_eq!(next_delay_ms(&always, 1, &long, 0.5), Some(500.0));
    assert_eq!(next_delay_ms(&always, 40, &long, 0.5), Some(10_000.0));
}

#[test]
fn only_listed_codes_are_retried() {
    let policy = RetryPolicy::default();
    for code in [
        codes::EMPTY_RESPONSE,
        codes::RATE_LIMIT,
        codes::SERVER,
        codes::TIMEOUT,
        codes::TRANSPORT,
    ] {
        assert!(next_delay_ms(&policy, 1, &LlmFailure::new(code, "x"), 0.5).is_some());
    }
    for code in [
        codes::STREAM_CLOSED,
        codes::AUTH,
        codes::QUOTA,
        codes::CONTEXT_WINDOW_EXCEEDED,
        codes::INVALID_REQUEST,
        codes::ABORTED,
    ] {
        assert_eq!(
            next_delay_ms(&policy, 1, &LlmFailure::new(code, "x"), 0.5),
            None
        );
    }
}

/// Records what it is given, with the (paused) time it was given.
#[derive(Default)]
struct Recorded(Mutex<Vec<(Instant, RetryRecord)>>);

impl RetryRecorder for Recorded {
    fn record(&self, record: &RetryRecord) -> Result<(), BoxError> {
        self.0
            .lock()
            .unwrap()
            .push((Instant::now(), record.clone()));
        Ok(())
    }
}

impl Recorded {
    fn records(&self) -> Vec<(Instant, RetryRecord)> {
        self.0.lock().unwrap().clone()
    }
}

/// `options` retried through `h`'s runtime in turn 1, step 2, recorded by `recorder`.
fn retrying(
    h: &Harness,
    options: GenerateOptions,
    recorder: &Arc<Recorded>,
) -> BoxStream<'static, RetryItem> {
    let recorder: Arc<dyn RetryRecorder> = recorder.clone();
    retry_stream(
        Arc::clone(&h.llm),
        options,
        RetryScope { turn: 1, step: 2 },
        recorder,
    )
}

/// dsh's default policy without jitter, so each delay is exact.
fn steady_default() -> RetryPolicy {
    let policy = RetryPolicy::default();
    RetryPolicy {
        backoff: Backoff {
            jitter_ratio: 0.0,
            ..policy.backoff
        },
        ..policy
    }
}

fn chunks(items: &[RetryItem]) -> Vec<StreamChunk> {
    items.iter().filter_map(RetryItem::chunk).cloned().collect()
}

#[tokio::test(start_paused = true)]
async fn rate_limit_with_retry_after_then_success() {
    let h = Harness::new().await;
    let busy = LlmFailure::new(codes::RATE_LIMIT, "busy")
        .with_status(429)
        .with_retry_after_ms(1500);
    let adapter = Scripted::arc(vec![
        Script::Fail(busy.clone()),
        Script::chunks(text_reply("done")),
    ]);
    h.register(&["mock"], adapter.clone());
    let recorder = Arc::new(Recorded::default());
    let began = Instant::now();
    let items: Vec<RetryItem> = retrying(&h, request("mock"), &recorder).collect().await;
    assert_eq!(
        began.elapsed(),
        Duration::from_millis(1500),
        "the provider's delay"
    );
    assert_eq!(adapter.requests().len(), 2);

    let records = recorder.records();
    assert_eq!(records.len(), 2);
    let (scheduled_at, RetryRecord::Retry(retry)) = &records[0] else {
        panic!("first record is llm/retry: {records:?}");
    };
    let (started_at, RetryRecord::Started(started)) = &records[1] else {
        panic!("second record is llm/retry-started: {records:?}");
    };
    assert_eq!(*started_at - *scheduled_at, Duration::from_millis(1500));
    assert_eq!(
        RetryRecord::Retry(retry.clone()).data(),
        json!({
            "retryId": retry.retry_id, "turn": 1, "step": 2, "provider": "mock", "mode": "normal",
            "policyKey": "[\"normal\",5,[\"EMPTY_RESPONSE\",\"RATE_LIMIT\",\"SERVER\",\"TIMEOUT\",\"TRANSPORT\"],500,10000,0.1]",
            "retry": 1, "maxRetries": 5, "delayMs": 1500,
            "failure": {"message": "busy", "code": "RATE_LIMIT", "status": 429, "providerRetryAfterMs": 1500}
        })
    );
    assert_eq!(
        RetryRecord::Started(started.clone()).data(),
        json!({"retryId": retry.retry_id, "turn": 1, "step": 2, "retry": 1})
    );

    let mut expected = vec![
        RetryItem::Chunk(StreamChunk::error(busy)),
        RetryItem::Retry(retry.clone()),
        RetryItem::RetryStarted(started.clone()),
    ];
    expected.extend(text_reply("done").into_iter().map(RetryItem::Chunk));
    assert_eq!(items, expected);
}

#[tokio::test(start_paused = true)]
async fn server_errors_stop_after_five_retries() {
    let h = Harness::new().await;
    let adapter = Arc::new(
        Scripted::new((0..6).map(|_| Script::Fail(server_error())).collect())
            .with_policy(steady_default()),
    );
    h.register(&["mock"], adapter.clone());
    let recorder = Arc::new(Recorded::default());
    let began = Instant::now();
    let items: Vec<RetryItem> = retrying(&h, request("mock"), &recorder).collect().await;
    assert_eq!(adapter.requests().len(), 6);
    assert_eq!(
        began.elapsed(),
        Duration::from_millis(500 + 1000 + 2000 + 4000 + 8000)
    );
    let retries: Vec<LlmRetry> = recorder
        .records()
        .into_iter()
        .filter_map(|(_, record)| match record {
            RetryRecord::Retry(retry) => Some(retry),
            RetryRecord::Started(_) => None,
        })
        .collect();
    assert_eq!(
        retries
            .iter()
            .map(|retry| (retry.retry, retry.delay_ms))
            .collect::<Vec<_>>(),
        [
            (1, 500.0),
            (2, 1000.0),
            (3, 2000.0),
            (4, 4000.0),
            (5, 8000.0)
        ]
    );
    assert!(
        retries
            .iter()
            .all(|retry| retry.retry_id == retries[0].retry_id)
    );
    assert_eq!(recorder.records().len(), 10);
    assert_eq!(chunks(&items).len(), 6, "one finish per attempt");
    assert_eq!(
        items.last(),
        Some(&RetryItem::Chunk(StreamChunk::error(server_error())))
    );
}

#[tokio::test(start_paused = true)]
async fn auth_failures_are_not_retried() {
    let h = Harness::new().await;
    let denied = LlmFailure::new(codes::AUTH, "invalid key").with_status(401);
    let adapter = Scripted::arc(vec![
        Script::Fail(denied.clone()),
        Script::chunks(text_reply("unused")),
    ]);
    h.register(&["mock"], adapter.clone());
    let recorder = Arc::new(Recorded::default());
    let items: Vec<RetryItem> = retrying(&h, request("mock"), &recorder).collect().await;
    assert_eq!(items, vec![RetryItem::Chunk(StreamChunk::error(denied))]);
    assert_eq!(adapter.requests().len(), 1);
    assert!(recorder.records().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_partial_attempt_is_superseded_by_the_retry() {
    let h = Harness::new().await;
    let partial = vec![
        Ok(StreamChunk::TextDelta {
            index: 0,
            text: "discarded".into(),
        }),
        Err(LlmFailure::new(codes::TRANSPORT, "stream interrupted")),
    ];
    let adapter = Scripted::arc(vec![
        Script::Items(partial),
        Script::chunks(text_reply("recovered")),
    ]);
    h.register(&["mock"], adapter.clone());
    let recorder = Arc::new(Recorded::default());
    let items: Vec<RetryItem> = retrying(&h, request("mock"), &recorder).collect().await;
    let kinds: Vec<&str> = items
        .iter()
        .map(|item| match item {
            RetryItem::Chunk(chunk) => chunk.chunk_type(),
            RetryItem::Retry(_) => "RETRY",
            RetryItem::RetryStarted(_) => "STARTED",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text-delta",
            "finish",
            "RETRY",
            "STARTED",
            "block-start",
            "text-delta",
            "block-end",
            "usage",
            "finish"
        ]
    );
    // What a consumer assembles after the last `Retry`.
    let position = items
        .iter()
        .rposition(|item| matches!(item, RetryItem::RetryStarted(_)))
        .unwrap();
    assert_eq!(chunks(&items[position..]), text_reply("recovered"));
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_the_wait_ends_without_retrying() {
    let h = Harness::new().await;
    let adapter = Scripted::arc(vec![
        Script::Fail(server_error()),
        Script::chunks(text_reply("unused")),
    ]);
    h.register(&["mock"], adapter.clone());
    let recorder = Arc::new(Recorded::default());
    let options = request("mock");
    let signal = options.signal.clone();
    let mut stream = retrying(&h, options, &recorder);
    assert!(matches!(stream.next().await, Some(RetryItem::Chunk(_))));
    assert!(matches!(stream.next().await, Some(RetryItem::Retry(_))));
    signal.cancel();
    assert_eq!(stream.next().await, None);
    assert_eq!(adapter.requests().len(), 1);
    assert_eq!(recorder.records().len(), 1, "no llm/retry-started");
}

#[tokio::test(start_paused = true)]
async fn the_provider_policy_decides_the_retries() {
    let policy = RetryPolicy {
        mode: RetryMode::Normal {
            max_retries: 1,
            retryable_codes: vec!["BUSY".into()],
        },
        backoff: Backoff {
            initial_delay_ms: 25.0,
            max_delay_ms: 100.0,
            jitter_ratio: 0.0,
        },
    };
    let h = Harness::new().await;
    let busy = |attempt: u32| {
        let reason = FinishReason::Error {
            failure: LlmFailure::new("BUSY", format!("attempt {attempt}")),
        };
        Script::chunks(vec![StreamChunk::finish(reason)])
    };
    let adapter = Scripted::new(vec![busy(1), busy(2), busy(3)]).with_policy(policy);
    h.register(&["custom"], Arc::new(adapter));
    let recorder = Arc::new(Recorded::default());
    let items: Vec<RetryItem> = retrying(&h, request("custom"), &recorder).collect().await;
    assert_eq!(
        chunks(&items).len(),
        2,
        "one retry, then the failure is final"
    );
    let RetryItem::Retry(retry) = &items[1] else {
        panic!("{items:?}");
    };
    assert_eq!(retry.provider, "custom");
    assert_eq!(retry.delay_ms, 25.0);
    assert_eq!(retry.max_retries, Some(1));
}

#[tokio::test(start_paused = true)]
async fn an_unregistered_provider_is_not_retried() {
    let h = Harness::new().await;
    let recorder = Arc::new(Recorded::default());
    let items: Vec<RetryItem> = retrying(&h, request("nowhere"), &recorder).collect().await;
    assert_eq!(items.len(), 1);
    assert!(recorder.records().is_empty());
}
