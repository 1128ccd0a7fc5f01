//! Live sessions persist themselves: the store and the JSONL plugin booted in a kernel, as a
//! profile boots them (dsh's coordinator contract, live half).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_kernel::Kernel;
use dsh_persistence::{SESSION_PERSISTENCE, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlPersistencePlugin};
use dsh_session::{
    CreateOptions, LiveSession, SESSIONS, SessionPlugin, SessionStore, SurfaceIntent,
};
use serde_json::json;

use super::support::{dyn_store, texts};

struct Booted {
    kernel: Kernel,
    store: Arc<SessionStore>,
    persistence: Arc<dyn SessionPersistence>,
}

async fn boot(root: &Path, window_ms: u64) -> Booted {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(SessionPlugin, json!({})).unwrap();
    ctx.plugin(
        JsonlPersistencePlugin,
        json!({"root": root, "writeBatchMaxDelayMs": window_ms}),
    )
    .unwrap();
    kernel.settle().await;
    let store = ctx.get(&SESSIONS).expect("the session store is up");
    let persistence = ctx.get(&SESSION_PERSISTENCE).expect("persistence is up");
    Booted {
        kernel,
        store,
        persistence,
    }
}

fn turn(session: &Arc<LiveSession>, turn: u64) {
    session
        .append(
            "turn/start",
            json!({"turn": turn}),
            SurfaceIntent::default(),
        )
        .unwrap();
    let user = json!({"id": format!("u{turn}"), "role": "user",
        "content": [{"type": "text", "text": "hello"}], "source": {"kind": "user"}});
    session
        .append("user/message", user, SurfaceIntent::append())
        .unwrap();
    let end = json!({"turn": turn, "reason": {"kind": "completed"}});
    session
        .append("turn/end", end, SurfaceIntent::default())
        .unwrap();
}

fn create(store: &SessionStore, id: &str) -> Arc<LiveSession> {
    store
        .create(CreateOptions {
            id: Some(id.into()),
            cwd: Some("/work".into()),
            ..CreateOptions::default()
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_makes_live_appends_durable() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let session = create(&booted.store, "live");
    turn(&session, 1);
    assert!(
        booted.store.flush("live").await.unwrap(),
        "persistence listened to the flush"
    );
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .load("live")
        .await
        .unwrap();
    assert_eq!(texts(&stored.events), texts(&session.events()));
    assert!(
        dir.path()
            .join("--work--/live/session.jsonl.zstd")
            .is_file()
    );
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_are_written_when_the_window_closes_without_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 50).await;
    let session = create(&booted.store, "windowed");
    turn(&session, 1);
    let path = dir.path().join("--work--/windowed/session.jsonl.zstd");
    assert!(
        !path.exists(),
        "nothing is written before the window closes"
    );
    for _ in 0..100 {
        if path.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .inspect("windowed")
        .await
        .unwrap();
    assert_eq!(stored.events.len(), 3);
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unloading_flushes_what_is_pending() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let session = create(&booted.store, "pending");
    turn(&session, 1);
    let expected = texts(&session.events());
    booted.kernel.shutdown().await;
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .load("pending")
        .await
        .unwrap();
    assert_eq!(texts(&stored.events), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_writes_only_its_end_seed_and_new_events() {
    let dir = tempfile::tempdir().unwrap();
    let first = boot(dir.path(), 60_000).await;
    turn(&create(&first.store, "resume"), 1);
    first.kernel.shutdown().await;

    let second = boot(dir.path(), 60_000).await;
    let prepared = second.persistence.prepare("resume").await.unwrap();
    assert_eq!(prepared.session.first_live_seq(), 3);
    let session = second.store.publish(prepared.session).unwrap();
    second.store.flush("resume").await.unwrap();
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .load("resume")
        .await
        .unwrap();
    let kinds: Vec<&str> = stored.events.iter().map(|e| e.kind.as_ref()).collect();
    assert_eq!(
        kinds,
        ["turn/start", "user/message", "turn/end", "session/end-seed"]
    );
    turn(&session, 2);
    second.store.flush("resume").await.unwrap();
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .load("resume")
        .await
        .unwrap();
    assert_eq!(texts(&stored.events), texts(&session.events()));
    assert!(
        second.persistence.prepare("resume").await.is_err(),
        "a live id cannot be prepared"
    );
    second.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_writes_its_seed_once_with_its_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let parent = create(&booted.store, "parent");
    turn(&parent, 1);
    let child = booted
        .store
        .fork("parent", None, Some("child".into()))
        .unwrap();
    turn(&child, 2);
    booted.store.flush("child").await.unwrap();
    booted.store.flush("child").await.unwrap();
    let stored = dyn_store(dir.path(), Compression::Zstd, true)
        .load("child")
        .await
        .unwrap();
    assert_eq!(texts(&stored.events), texts(&child.events()));
    assert_eq!(
        stored.events.len(),
        3 + 1 + 3,
        "seed, end-seed, own turn: each once"
    );
    assert_eq!(stored.header.parent_session.as_deref(), Some("parent"));
    assert_eq!(stored.header.seed_length, Some(3));
    assert_eq!(stored.header.cwd.as_deref(), Some("/work"));
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_inside_an_open_turn_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let parent = create(&booted.store, "open");
    parent
        .append("turn/start", json!({"turn": 1}), SurfaceIntent::default())
        .unwrap();
    let error = booted.store.fork("open", None, None).unwrap_err();
    assert!(error.to_string().contains("turn 1 is open"), "{error}");
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_id_that_collides_with_another_stored_session_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let other = dyn_store(dir.path(), Compression::Zstd, true);
    let mut header = dsh_session::SessionHeader::new("taken", 1).with_cwd("/work");
    header.delegation_depth = Some(0);
    other.create(header).await.unwrap();
    let event = dsh_session::SessionEvent::new("goal/change", 0, 1, json!({"goal": "theirs"}));
    other.append("taken", vec![event]).await.unwrap();
    let before = std::fs::read(dir.path().join("--work--/taken/session.jsonl.zstd")).unwrap();

    let booted = boot(dir.path(), 60_000).await;
    let session = create(&booted.store, "taken");
    turn(&session, 1);
    let error = booted.store.flush("taken").await.unwrap_err();
    assert!(error.to_string().contains("id collision"), "{error}");
    let after = std::fs::read(dir.path().join("--work--/taken/session.jsonl.zstd")).unwrap();
    assert_eq!(before, after);
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushing_an_unknown_session_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let error = booted.store.flush("nobody").await.unwrap_err();
    assert_eq!(error.to_string(), "session \"nobody\" not found");
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_reads_as_its_current_log() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let session = create(&booted.store, "busy");
    turn(&session, 1);
    let loaded = booted.persistence.load("busy").await.unwrap();
    assert_eq!(texts(&loaded.events), texts(&session.events()));
    session
        .append("turn/start", json!({"turn": 2}), SurfaceIntent::default())
        .unwrap();
    let inspected = booted.persistence.inspect("busy").await.unwrap();
    assert_eq!(
        inspected.events.len(),
        4,
        "the open turn as it is, without closers"
    );
    let error = booted.persistence.load("busy").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot load session \"busy\" while its live turn is open"
    );
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_does_not_take_over_a_loaded_id_of_another_session() {
    let dir = tempfile::tempdir().unwrap();
    let other = dyn_store(dir.path(), Compression::Zstd, true);
    let mut header = dsh_session::SessionHeader::new("taken", 1).with_cwd("/elsewhere");
    header.delegation_depth = Some(0);
    other.create(header).await.unwrap();
    let event = dsh_session::SessionEvent::new("goal/change", 0, 1, json!({"goal": "theirs"}));
    other.append("taken", vec![event]).await.unwrap();
    let path = dir.path().join("--elsewhere--/taken/session.jsonl.zstd");
    let before = std::fs::read(&path).unwrap();

    let booted = boot(dir.path(), 60_000).await;
    booted.persistence.load("taken").await.unwrap();
    let session = create(&booted.store, "taken");
    turn(&session, 1);
    let error = booted.store.flush("taken").await.unwrap_err();
    assert!(error.to_string().contains("id collision"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    booted.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposing_flushes_and_forgets_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let booted = boot(dir.path(), 60_000).await;
    let session = create(&booted.store, "done");
    turn(&session, 1);
    booted.store.dispose("done").await.unwrap();
    let prepared = booted.persistence.prepare("done").await.unwrap();
    assert_eq!(
        prepared.session.first_live_seq(),
        3,
        "every event was flushed before disposal"
    );
    booted.kernel.shutdown().await;
}
