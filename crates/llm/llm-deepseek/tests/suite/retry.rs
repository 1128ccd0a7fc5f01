use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_kernel::{BoxError, Kernel};
use dsh_llm::{LLM, LlmPlugin, RetryItem, RetryRecord, RetryScope, StreamChunk, retry_stream};
use dsh_llm_deepseek::{DeepSeekConfig, DeepSeekPlugin, PROVIDER};
use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse;
use futures_util::StreamExt;
use serde_json::json;

use super::common::{adapter_for, options};

async fn run(server: &FakeDeepSeek) -> (Vec<RetryItem>, usize) {
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .plugin(LlmPlugin, serde_json::Value::Null)
        .unwrap();
    kernel.settle().await;
    let llm = kernel.root().require(&LLM).unwrap();
    let adapter = adapter_for(server, DeepSeekConfig::default());
    llm.register_adapter(&kernel.root(), [PROVIDER], Arc::new(adapter))
        .unwrap();
    let records = Arc::new(Mutex::new(Vec::new()));
    let sink = records.clone();
    let recorder = move |record: &RetryRecord| -> Result<(), BoxError> {
        sink.lock().unwrap().push(format!("{record:?}"));
        Ok(())
    };
    let scope = RetryScope { turn: 1, step: 1 };
    let items: Vec<RetryItem> = retry_stream(llm, options("hi"), scope, Arc::new(recorder))
        .collect()
        .await;
    kernel.shutdown().await;
    let count = records.lock().unwrap().len();
    (items, count)
}

fn last_finish(items: &[RetryItem]) -> StreamChunk {
    items
        .iter()
        .rev()
        .find_map(|item| item.chunk().filter(|c| c.finish_reason().is_some()))
        .cloned()
        .unwrap()
}

#[tokio::test]
async fn rate_limit_then_success() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::error(429, json!({"error": {"message": "slow"}})).retry_after("1"));
    server.push(Reply::sse(sse::text_events("ok", 2, None)));
    let (items, records) = run(&server).await;
    assert_eq!(server.requests().len(), 2);
    assert_eq!(records, 2, "llm/retry and llm/retry-started");
    let retry = items
        .iter()
        .find_map(|item| match item {
            RetryItem::Retry(retry) => Some(retry.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(retry.failure.code, "RATE_LIMIT");
    assert_eq!(retry.delay_ms, 1000.0);
    assert_eq!(
        last_finish(&items),
        StreamChunk::finish(dsh_llm::FinishReason::Stop)
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_exhaust_five_retries() {
    let server = FakeDeepSeek::start().await.unwrap();
    for _ in 0..6 {
        server.push(Reply::error(500, json!({"error": {"message": "boom"}})));
    }
    let (items, records) = run(&server).await;
    assert_eq!(server.requests().len(), 6);
    assert_eq!(records, 10);
    let finish = last_finish(&items);
    let failure = finish
        .finish_reason()
        .and_then(dsh_llm::FinishReason::failure)
        .unwrap();
    assert_eq!(
        (failure.code.as_str(), failure.status),
        ("SERVER", Some(500))
    );
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_is_retried_after_the_headers_bound() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    server.push(Reply::sse(sse::text_events("ok", 2, None)));
    let started = tokio::time::Instant::now();
    let (items, records) = tokio::time::timeout(Duration::from_secs(200), run(&server))
        .await
        .expect("the retried request should finish");
    assert_eq!((server.requests().len(), records), (2, 2));
    let retry = items
        .iter()
        .find_map(|item| match item {
            RetryItem::Retry(retry) => Some(retry.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (retry.failure.code.as_str(), retry.failure.message.as_str()),
        ("TIMEOUT", "DeepSeek response headers timeout after 60000ms")
    );
    assert!(started.elapsed() < Duration::from_secs(61));
    assert_eq!(
        last_finish(&items),
        StreamChunk::finish(dsh_llm::FinishReason::Stop)
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::error(401, json!({"error": {"message": "no"}})));
    let (items, records) = run(&server).await;
    assert_eq!((server.requests().len(), records), (1, 0));
    let finish = last_finish(&items);
    assert_eq!(
        finish
            .finish_reason()
            .and_then(dsh_llm::FinishReason::failure)
            .unwrap()
            .code,
        "AUTH"
    );
}

#[tokio::test]
async fn plugin_registers_the_route() {
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .plugin(LlmPlugin, serde_json::Value::Null)
        .unwrap();
    kernel
        .root()
        .plugin(DeepSeekPlugin, json!({"reasoningEffort": "max"}))
        .unwrap();
    kernel.settle().await;
    let llm = kernel.root().require(&LLM).unwrap();
    assert!(llm.has_provider(PROVIDER));
    let models = llm.list_models(PROVIDER).await.unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "deepseek-v4-flash",
            "deepseek-v4-pro",
            "deepseek-v4-flash-vision-exp"
        ]
    );
    kernel.shutdown().await;
}
