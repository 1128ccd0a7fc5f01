//! The two session stores agree: the same random logs, written to the SQLite and the JSONL
//! store, read back identically, event for event and byte for byte, with and without the
//! closers of a turn left open.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlBackend, JsonlOptions};
use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};
use dsh_protocol::json::to_js_string;
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::plans::{Plan, config, events_of, plan};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const ID: &str = "differential";

fn sqlite(path: &Path) -> Arc<dyn SessionPersistence> {
    let backend = SqliteBackend::new(SqliteOptions {
        path: DatabasePath::File(path.to_path_buf()),
        journal_mode: JournalMode::Wal,
        busy_timeout: Duration::from_secs(5),
    })
    .unwrap();
    Coordinator::new(backend, CoordinatorOptions::default())
}

fn jsonl(root: &Path) -> Arc<dyn SessionPersistence> {
    let backend = JsonlBackend::new(JsonlOptions {
        root: root.to_path_buf(),
        compression: Compression::Zstd,
        pack_chunks: true,
    })
    .unwrap();
    Coordinator::new(backend, CoordinatorOptions::default())
}

/// Each event as compact JSON, for byte-for-byte comparisons.
fn texts(events: &[SessionEvent]) -> Vec<String> {
    events.iter().map(to_js_string).collect()
}

async fn write(store: &dyn SessionPersistence, plan: &Plan) {
    store
        .create(SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo"))
        .await
        .unwrap();
    for batch in events_of(plan) {
        store.append(ID, batch).await.unwrap();
    }
}

fn run(
    body: impl std::future::Future<Output = Result<(), TestCaseError>>,
) -> Result<(), TestCaseError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(body)
}

proptest! {
    #![proptest_config(config(40))]

    #[test]
    fn both_backends_load_the_same_log(plan in plan(1..6)) {
        run(async move {
            let dir = tempfile::tempdir().unwrap();
            let database = dir.path().join("sessions.sqlite");
            let root = dir.path().join("sessions");
            write(sqlite(&database).as_ref(), &plan).await;
            write(jsonl(&root).as_ref(), &plan).await;

            let (sqlite, jsonl) = (sqlite(&database), jsonl(&root));
            let from_sqlite = sqlite.read_from(ID, 0).await.unwrap();
            prop_assert_eq!(texts(&from_sqlite), texts(&jsonl.read_from(ID, 0).await.unwrap()));
            let inspected = sqlite.inspect(ID).await.unwrap();
            prop_assert_eq!(texts(&inspected.events), texts(&jsonl.inspect(ID).await.unwrap().events));
            Ok(())
        })?;
    }
}
