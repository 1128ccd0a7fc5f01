//! The session retry recorder: a request retried outside a turn with `retry_stream` logs
//! `llm/retry` and `llm/retry-started` into the session, as log-only events.

use std::sync::Arc;

use dsh_agent_loop::SessionRetryRecorder;
use dsh_llm::{
    GenerateOptions, LLM, LlmFailure, RetryItem, RetryRecorder, RetryScope, codes, retry_stream,
};
use dsh_session::{CreateOptions, SurfaceIntent};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Harness, Reply, Setup, text_reply};

#[tokio::test(start_paused = true)]
async fn session_recorder_appends_the_known_events() {
    // dsh's default policy without jitter, so the delay is exact.
    let setup = Setup {
        retry_policy: Some(json!({
            "mode": "normal",
            "maxRetries": 5,
            "backoff": {"initialDelayMs": 500, "maxDelayMs": 10000, "jitterRatio": 0},
        })),
        ..Setup::default()
    };
    let server_error =
        LlmFailure::new(codes::SERVER, "DeepSeek API error (HTTP 500)").with_status(500);
    let h = Harness::with(
        setup,
        vec![Reply::Fail(server_error), Reply::Chunks(text_reply("ok"))],
    )
    .await;
    let session = h.sessions.create(CreateOptions::default()).unwrap();
    session
        .append("turn/start", json!({"turn": 1}), SurfaceIntent::default())
        .unwrap();
    session
        .append(
            "step/start",
            json!({"turn": 1, "step": 1}),
            SurfaceIntent::default(),
        )
        .unwrap();
    let recorder: Arc<dyn RetryRecorder> =
        Arc::new(SessionRetryRecorder::new(Arc::clone(&session)));
    let items: Vec<RetryItem> = retry_stream(
        h.ctx.require(&LLM).unwrap(),
        GenerateOptions::new("mock", "m", Vec::new()),
        RetryScope { turn: 1, step: 1 },
        recorder,
    )
    .collect()
    .await;
    let chunks: Vec<_> = items.iter().filter_map(RetryItem::chunk).collect();
    assert_eq!(chunks.last().copied(), text_reply("ok").last());
    let events = session.events();
    let kinds: Vec<&str> = events.iter().map(|event| event.kind.as_ref()).collect();
    assert_eq!(
        kinds,
        ["turn/start", "step/start", "llm/retry", "llm/retry-started"]
    );
    assert_eq!(events[2].data["delayMs"], json!(500));
    assert_eq!(events[2].data["failure"]["code"], json!("SERVER"));
    assert_eq!(events[3].data["retryId"], events[2].data["retryId"]);
    assert!(events[2].surface_op.is_none());
    h.shutdown().await;
}
