//! The time bounds of one request attempt: response headers, stream idleness (data only) and
//! the whole attempt. Every test has an outer timeout, so a bound that does not fire fails the
//! test instead of hanging it.

use std::time::Duration;

use dsh_llm::{FinishReason, LlmFailure, StreamChunk};
use dsh_llm_deepseek::{DeepSeekAdapter, DeepSeekConfig};
use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{self, SseEvent};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::time::Instant;

use super::common::{adapter_for, collect, options};

/// How long any test here may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(20);

fn config(value: serde_json::Value) -> DeepSeekConfig {
    serde_json::from_value(value).unwrap()
}

/// Runs one request under the outer timeout: the chunks, the failure and the time taken.
async fn attempt(
    server: &FakeDeepSeek,
    config: DeepSeekConfig,
    within: Duration,
) -> (Vec<StreamChunk>, Option<LlmFailure>, Duration) {
    let adapter = adapter_for(server, config);
    let started = Instant::now();
    let Ok((chunks, failure)) =
        tokio::time::timeout(within, collect(&adapter, options("hi"))).await
    else {
        panic!("the request was still running after {within:?}");
    };
    (chunks, failure, started.elapsed())
}

fn expect_timeout(failure: Option<LlmFailure>, message: &str) {
    let failure = failure.expect("the request should have failed");
    assert_eq!(
        (failure.code.as_str(), failure.message.as_str()),
        ("TIMEOUT", message)
    );
}

#[tokio::test]
async fn a_server_that_never_answers_fails_at_the_headers_bound() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    let (_, failure, took) = attempt(&server, config(json!({"headersTimeoutMs": 200})), HANG).await;
    expect_timeout(failure, "DeepSeek response headers timeout after 200ms");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn with_default_settings_a_silent_server_fails_within_a_minute() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    let (_, failure, took) =
        attempt(&server, DeepSeekConfig::default(), Duration::from_secs(120)).await;
    expect_timeout(failure, "DeepSeek response headers timeout after 60000ms");
    assert!(
        (Duration::from_secs(60)..Duration::from_secs(61)).contains(&took),
        "{took:?}"
    );
}

#[tokio::test]
async fn the_shortest_bound_names_the_failure_while_waiting_for_headers() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    let shorter_request = config(json!({"headersTimeoutMs": 5000, "requestTimeoutMs": 150}));
    let (_, failure, _) = attempt(&server, shorter_request, HANG).await;
    expect_timeout(failure, "DeepSeek request timeout after 150ms");

    server.push(Reply::hang());
    let shorter_idle = config(json!({"headersTimeoutMs": 5000, "streamIdleTimeoutMs": 150}));
    let (_, failure, _) = attempt(&server, shorter_idle, HANG).await;
    expect_timeout(failure, "DeepSeek stream idle timeout after 150ms");
}

#[tokio::test]
async fn keep_alive_comments_alone_fail_at_the_idle_bound() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(
        Reply::sse(Vec::new())
            .repeat_forever(SseEvent::comment("keep-alive").after(Duration::from_millis(30))),
    );
    let (chunks, failure, took) =
        attempt(&server, config(json!({"streamIdleTimeoutMs": 300})), HANG).await;
    expect_timeout(failure, "DeepSeek stream idle timeout after 300ms");
    assert!(chunks.is_empty());
    assert!(took >= Duration::from_millis(300), "{took:?}");
}

#[tokio::test]
async fn keep_alive_comments_and_blank_lines_after_data_do_not_rearm_the_watchdog() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(
        Reply::sse(vec![
            SseEvent::data(sse::chunk_role()),
            SseEvent::data(sse::chunk_text("partial")),
        ])
        .repeat_forever(SseEvent::raw(": keep-alive\n\n\n").after(Duration::from_millis(30))),
    );
    let (chunks, failure, _) =
        attempt(&server, config(json!({"streamIdleTimeoutMs": 300})), HANG).await;
    expect_timeout(failure, "DeepSeek stream idle timeout after 300ms");
    assert!(
        chunks
            .iter()
            .any(|chunk| matches!(chunk, StreamChunk::TextDelta { text, .. } if text == "partial"))
    );
}

#[tokio::test]
async fn data_trickling_forever_fails_at_the_request_bound() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(
        Reply::sse(vec![SseEvent::data(sse::chunk_role())]).repeat_forever(
            SseEvent::data(sse::chunk_reasoning(".")).after(Duration::from_millis(100)),
        ),
    );
    let bounds = config(json!({"streamIdleTimeoutMs": 1000, "requestTimeoutMs": 2000}));
    let (chunks, failure, took) = attempt(&server, bounds, HANG).await;
    expect_timeout(failure, "DeepSeek request timeout after 2000ms");
    assert!(took >= Duration::from_millis(2000), "{took:?}");
    let deltas = chunks
        .iter()
        .filter(|chunk| matches!(chunk, StreamChunk::ReasoningDelta { .. }))
        .count();
    assert!(deltas >= 5, "only {deltas} reasoning deltas arrived");
}

#[tokio::test]
async fn a_slow_stream_that_finishes_within_the_bounds_succeeds() {
    let server = FakeDeepSeek::start().await.unwrap();
    let mut events = vec![SseEvent::data(sse::chunk_role())];
    for word in ["a ", "slow ", "but ", "steady ", "answer"] {
        events.push(SseEvent::comment("keep-alive").after(Duration::from_millis(100)));
        events.push(SseEvent::data(sse::chunk_text(word)).after(Duration::from_millis(100)));
    }
    events.push(SseEvent::data(sse::chunk_finish("stop", None)));
    server.push(Reply::sse(events));
    // Longer than the headers bound and several idle windows, within the request bound.
    let bounds = config(json!({
        "headersTimeoutMs": 500, "streamIdleTimeoutMs": 500, "requestTimeoutMs": 10000
    }));
    let (chunks, failure, took) = attempt(&server, bounds, HANG).await;
    assert_eq!(failure, None);
    assert!(took >= Duration::from_millis(1000), "{took:?}");
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::finish(FinishReason::Stop))
    );
}

#[test]
fn timeouts_outside_their_range_are_refused_when_the_adapter_is_built() {
    for key in [
        "headersTimeoutMs",
        "streamIdleTimeoutMs",
        "requestTimeoutMs",
    ] {
        for value in [json!(0), json!(2_147_483_648_u64), json!(u64::MAX)] {
            let failure = DeepSeekAdapter::new(config(json!({key: value}))).unwrap_err();
            assert_eq!(
                (failure.code.as_str(), failure.message),
                (
                    "INVALID_ADAPTER",
                    format!(
                        "llm-deepseek.{key} must be a whole number of milliseconds from 1 to \
                         2147483647, got {value}"
                    )
                ),
            );
        }
    }
}
