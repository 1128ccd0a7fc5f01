use std::time::{Duration, SystemTime};

use dsh_llm_deepseek::DeepSeekConfig;
use dsh_llm_deepseek::errors::{http_error_code, retry_after_ms};
use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse;
use serde_json::json;

use super::common::{KEY, adapter_for, collect, options};

#[tokio::test]
async fn rate_limit_fields() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(
        Reply::error(
            429,
            json!({"error": {"message": "slow down", "type": "rate_limit"}}),
        )
        .retry_after("2")
        .request_id("req-42"),
    );
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (_, failure) = collect(&adapter, options("hi")).await;
    let failure = failure.unwrap();
    assert_eq!(failure.code, "RATE_LIMIT");
    assert_eq!(failure.message, "slow down");
    assert_eq!(failure.status, Some(429));
    assert_eq!(failure.provider_retry_after_ms, Some(2000));
    assert_eq!(failure.request_id.as_deref(), Some("req-42"));
}

#[tokio::test]
async fn unauthorized_is_auth_and_key_never_leaks() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::error(401, json!({"error": {"message": "bad key"}})));
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (_, failure) = collect(&adapter, options("hi")).await;
    let failure = failure.unwrap();
    assert_eq!(failure.code, "AUTH");
    assert!(!format!("{failure:?} {adapter:?}").contains(KEY));
}

#[tokio::test]
async fn missing_key_and_transport() {
    let adapter = dsh_llm_deepseek::DeepSeekAdapter::new(DeepSeekConfig {
        base_url: Some("http://127.0.0.1:1".into()),
        ..DeepSeekConfig::default()
    })
    .unwrap()
    .with_env(|_| None);
    let (_, failure) = collect(&adapter, options("hi")).await;
    assert_eq!(failure.unwrap().code, "MISSING_CREDENTIAL");
    let adapter = adapter.with_env(|name| (name == "DEEPSEEK_API_KEY").then(|| KEY.to_string()));
    let (_, failure) = collect(&adapter, options("hi")).await;
    let failure = failure.unwrap();
    assert_eq!(failure.code, "TRANSPORT");
    assert!(
        failure.message.starts_with(
            "DeepSeek API request to http://127.0.0.1:1 failed: error sending request: "
        ),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("Connection refused"),
        "the cause chain reaches the OS error: {}",
        failure.message
    );
    assert!(
        !failure.message.contains("for url"),
        "the URL is named once: {}",
        failure.message
    );
    assert!(!format!("{failure:?}").contains(KEY));
}

#[tokio::test]
async fn a_dropped_connection_names_its_cause_and_never_the_key() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::disconnect());
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert!(chunks.is_empty());
    let failure = failure.unwrap();
    assert_eq!(failure.code, "TRANSPORT");
    let prefix = format!(
        "DeepSeek API request to {} failed: error sending request: ",
        server.base_url()
    );
    assert!(failure.message.starts_with(&prefix), "{}", failure.message);
    assert!(
        failure.message.len() > prefix.len(),
        "a cause follows: {}",
        failure.message
    );
    assert!(!format!("{failure:?}").contains(KEY));
}

#[tokio::test]
async fn a_broken_body_names_its_cause_and_never_the_key() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("hello", 2, None)).cut());
    let adapter = adapter_for(&server, DeepSeekConfig::default());
    let (chunks, failure) = collect(&adapter, options("hi")).await;
    assert!(!chunks.is_empty(), "the events before the cut arrive");
    let failure = failure.unwrap();
    assert_eq!(failure.code, "TRANSPORT");
    let prefix = format!(
        "DeepSeek API stream from {} failed: error decoding response body: ",
        server.base_url()
    );
    assert!(failure.message.starts_with(&prefix), "{}", failure.message);
    assert!(
        failure.message.len() > prefix.len(),
        "a cause follows: {}",
        failure.message
    );
    assert!(!failure.message.contains("for url"), "{}", failure.message);
    assert!(!format!("{failure:?}").contains(KEY));
}

#[test]
fn code_table() {
    assert_eq!(http_error_code(403, ""), "AUTH");
    assert_eq!(http_error_code(413, ""), "INVALID_REQUEST");
    assert_eq!(http_error_code(402, "Insufficient Balance"), "QUOTA");
    assert_eq!(http_error_code(429, "insufficient_quota"), "QUOTA");
    assert_eq!(http_error_code(429, "too many"), "RATE_LIMIT");
    assert_eq!(
        http_error_code(400, "This model's maximum context length is 131072 tokens"),
        "CONTEXT_WINDOW_EXCEEDED"
    );
    assert_eq!(http_error_code(400, "bad"), "INVALID_REQUEST");
    assert_eq!(http_error_code(503, ""), "SERVER");
    assert_eq!(http_error_code(404, ""), "HTTP_404");
}

#[test]
fn retry_after_forms() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    assert_eq!(retry_after_ms("3", now), Some(3000));
    assert_eq!(retry_after_ms("0", now), None);
    let later = httpdate::fmt_http_date(now + Duration::from_secs(5));
    assert_eq!(retry_after_ms(&later, now), Some(5000));
    let earlier = httpdate::fmt_http_date(now - Duration::from_secs(5));
    assert_eq!(retry_after_ms(&earlier, now), None);
}
