//! The store: staging, announcing, refusing, disposing, forking, and minted ids.

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use dsh_kernel::{BoxError, Kernel};
use dsh_session::store::{fork_seed, mint_session_id};
use dsh_session::{
    CreateOptions, EventNotice, LiveSession, SessionCreated, SessionDisposed, SessionEvent,
    SessionEventAppended, SessionStore, StoreError, SurfaceIntent,
};
use serde_json::json;

fn store(kernel: &Kernel) -> SessionStore {
    SessionStore::new(kernel.root())
}

#[tokio::test]
async fn a_staged_session_is_invisible_until_committed_and_then_announced_whole() {
    let kernel = Kernel::new().unwrap();
    let announced: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let sink = Arc::clone(&announced);
    kernel
        .root()
        .on::<SessionCreated>(move |live: &Arc<LiveSession>| -> Result<(), BoxError> {
            sink.lock()
                .unwrap()
                .push((live.id().to_owned(), live.events().len()));
            Ok(())
        })
        .unwrap();
    let appended = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&appended);
    kernel
        .root()
        .on::<SessionEventAppended>(move |_: &EventNotice| -> Result<(), BoxError> {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    let store = store(&kernel);
    let session = store
        .new_session(CreateOptions {
            id: Some("s1".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    let live = store.stage(session).unwrap();
    live.append("goal/change", json!({}), SurfaceIntent::default())
        .unwrap();
    assert!(store.get("s1").is_none());
    assert_eq!(
        appended.load(Ordering::SeqCst),
        0,
        "staged appends are not published"
    );
    store.commit(&live).unwrap();
    assert!(store.get("s1").is_some());
    assert_eq!(*announced.lock().unwrap(), [("s1".to_owned(), 1)]);
    live.append("goal/change", json!({}), SurfaceIntent::default())
        .unwrap();
    assert_eq!(appended.load(Ordering::SeqCst), 1);
    assert!(matches!(
        store.commit(&live),
        Err(StoreError::AlreadyExists(_))
    ));
}

#[tokio::test]
async fn a_refusing_created_listener_withdraws_the_session() {
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .on::<SessionCreated>(|_: &Arc<LiveSession>| -> Result<(), BoxError> {
            Err("not today".into())
        })
        .unwrap();
    let disposed = Arc::new(AtomicUsize::new(0));
    let sink = Arc::clone(&disposed);
    kernel
        .root()
        .on::<SessionDisposed>(move |_: &Arc<LiveSession>| -> Result<(), BoxError> {
            sink.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    let store = store(&kernel);
    let live = store
        .stage(store.new_session(CreateOptions::default()).unwrap())
        .unwrap();
    let refused = store.commit(&live).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("was refused by a session/created listener"),
        "{refused}"
    );
    assert!(refused.to_string().contains("not today"), "{refused}");
    assert!(store.ids().is_empty());
    assert_eq!(disposed.load(Ordering::SeqCst), 1);
    assert!(matches!(
        live.append("goal/change", json!({}), SurfaceIntent::default()),
        Err(StoreError::Disposed(_))
    ));
    // `create` keeps its old contract: a failing listener is logged, the session stays.
    let kept = store.create(CreateOptions::default()).unwrap();
    assert!(store.get(kept.id()).is_some());
}

#[tokio::test]
async fn listeners_may_read_the_session_they_are_told_about() {
    let kernel = Kernel::new().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let sink = Arc::clone(&seen);
    kernel
        .root()
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            sink.store(notice.session.events().len(), Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    let store = store(&kernel);
    let live = store.create(CreateOptions::default()).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let appender = Arc::clone(&live);
    std::thread::spawn(move || {
        let appended = appender.append("goal/change", json!({}), SurfaceIntent::default());
        done.send(appended.is_ok()).unwrap();
    });
    let appended = finished
        .recv_timeout(Duration::from_secs(5))
        .expect("no deadlock");
    assert!(appended);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_listener_appending_to_its_own_session_is_refused() {
    let kernel = Kernel::new().unwrap();
    let refused = Arc::new(AtomicUsize::new(0));
    let sink = Arc::clone(&refused);
    kernel
        .root()
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            if notice.event.kind == "goal/change" {
                let again = notice
                    .session
                    .append("plan/mode", json!({}), SurfaceIntent::default());
                if matches!(again, Err(StoreError::Reentrant(_))) {
                    sink.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(())
        })
        .unwrap();
    let live = store(&kernel).create(CreateOptions::default()).unwrap();
    live.append("goal/change", json!({}), SurfaceIntent::default())
        .unwrap();
    assert_eq!(refused.load(Ordering::SeqCst), 1);
    assert_eq!(live.events().len(), 1);
}

#[tokio::test]
async fn a_disposed_session_takes_no_more_events() {
    let kernel = Kernel::new().unwrap();
    let store = store(&kernel);
    let live = store
        .create(CreateOptions {
            id: Some("s".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    store.dispose("s").await.unwrap();
    let error = live
        .append("goal/change", json!({}), SurfaceIntent::default())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "session \"s\" was disposed and takes no more events"
    );
    assert!(store.get("s").is_none());
}

#[test]
fn minted_ids_look_like_dsh_ids_and_differ() {
    let id = mint_session_id();
    assert_eq!(id.len(), "session-".len() + 36, "{id}");
    assert_eq!(id.as_bytes()[8 + 14], b'4', "{id}");
    assert!(
        matches!(id.as_bytes()[8 + 19], b'8' | b'9' | b'a' | b'b'),
        "{id}"
    );
    assert_ne!(mint_session_id(), mint_session_id());
}

#[test]
fn forks_refuse_bad_boundaries() {
    let error = fork_seed("s", &[], Some(0)).unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidBoundary { len: 0, .. }),
        "{error}"
    );
    assert!(fork_seed("s", &[], None).unwrap().is_empty());
    let events = vec![
        Arc::new(SessionEvent::new("turn/start", 0, 0, json!({"turn": 1}))),
        Arc::new(SessionEvent::new(
            "turn/end",
            1,
            0,
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        )),
    ];
    assert!(matches!(
        fork_seed("s", &events, Some(0)),
        Err(StoreError::OpenTurn { .. })
    ));
    assert_eq!(fork_seed("s", &events, Some(1)).unwrap().len(), 2);
    assert!(matches!(
        fork_seed("s", &events, Some(2)),
        Err(StoreError::InvalidBoundary { .. })
    ));
}
