//! The `tokenMeter` service behind its plugin, over the store's live sessions.

use std::sync::Arc;

use dsh_kernel::{FiberState, Kernel};
use dsh_session::{CreateOptions, LiveSession, SESSIONS, SessionPlugin, SurfaceIntent};
use dsh_test_support::turns::long_session;
use dsh_token_meter::{PLUGIN_NAME, SessionMeter, TOKEN_METER, TokenMeterPlugin};
use pretty_assertions::assert_eq;
use serde_json::json;

async fn boot() -> Kernel {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    root.plugin(SessionPlugin, json!(null)).unwrap();
    let meter = root.plugin(TokenMeterPlugin, json!({})).unwrap();
    kernel.settle().await;
    kernel.audit(&[meter.id()]).unwrap();
    kernel
}

fn append_all(live: &Arc<LiveSession>, events: &[dsh_session::SessionEvent]) {
    for event in events {
        let intent = SurfaceIntent {
            op: event.surface_op,
            source_event_seqs: event.source_event_seqs.clone(),
        };
        live.append(&event.kind, (*event.data).clone(), intent)
            .unwrap();
    }
}

#[tokio::test]
async fn the_service_measures_live_sessions_as_they_grow() {
    let kernel = boot().await;
    let store = kernel.root().require(&SESSIONS).unwrap();
    let meter = kernel.root().require(&TOKEN_METER).unwrap();
    let live = store
        .create(CreateOptions {
            id: Some("s1".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    let events = long_session(4);
    let (head, tail) = events.split_at(60);
    append_all(&live, head);
    let first = meter.measure(&live, None).unwrap();
    assert_eq!(first.log_revision, 60);
    // Read once, the fold now follows every append.
    append_all(&live, tail);
    let mut reference = SessionMeter::new();
    live.with(|session| reference.sync(session.events()))
        .unwrap();
    assert_eq!(meter.measure(&live, None).unwrap(), reference.measure(None));
    assert_eq!(meter.nodes(&live).unwrap(), reference.nodes());

    // A new session under a disposed one's id starts over.
    store.clear();
    let again = store
        .create(CreateOptions {
            id: Some("s1".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    assert_eq!(meter.measure(&again, None).unwrap().log_revision, 0);
    kernel.shutdown().await;
}

#[tokio::test]
async fn a_refused_event_is_reported_by_every_read() {
    let kernel = boot().await;
    let store = kernel.root().require(&SESSIONS).unwrap();
    let meter = kernel.root().require(&TOKEN_METER).unwrap();
    let live = store.create(CreateOptions::default()).unwrap();
    assert_eq!(meter.measure(&live, None).unwrap().log_revision, 0);
    live.append(
        "step/start",
        json!({"turn": 1, "step": 1}),
        SurfaceIntent::default(),
    )
    .unwrap();
    live.append(
        "step/start",
        json!({"turn": 1, "step": 2}),
        SurfaceIntent::default(),
    )
    .unwrap();
    for _ in 0..2 {
        let error = meter.measure(&live, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "token meter: step/start at seq 1 arrived before turn 1/step 1 ended"
        );
    }
    kernel.shutdown().await;
}

#[tokio::test]
async fn the_config_must_be_empty() {
    assert_eq!(PLUGIN_NAME, "dsh-token-meter");
    let kernel = Kernel::new().unwrap();
    let fine = kernel.root().plugin(TokenMeterPlugin, json!(null)).unwrap();
    let bad = kernel
        .root()
        .plugin(TokenMeterPlugin, json!({"charsPerToken": 3}))
        .unwrap();
    kernel.settle().await;
    assert_eq!(fine.state(), FiberState::Active);
    assert_eq!(bad.state(), FiberState::Failed);
    let error = bad.error().unwrap();
    assert!(
        error.contains(
            r#"TokenMeterConfig: unknown key "charsPerToken" (no settings are supported)"#
        ),
        "{error}"
    );
    kernel.shutdown().await;
}
