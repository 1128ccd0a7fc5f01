//! The backend-neutral persistence contract, in each journal mode and on either runtime (the
//! JSONL store runs it in its own suite).

use std::sync::{Arc, Mutex};

use dsh_persistence::SessionPersistence;
use dsh_persistence::contract::{Opener, run};
use dsh_persistence_sqlite::JournalMode;

use super::support::store_with;

/// Runs the contract over fresh stores that `open(dir)` builds in a new temporary directory.
async fn contract_holds(
    open: impl Fn(&std::path::Path) -> Arc<dyn SessionPersistence> + Send + Sync + Clone + 'static,
) {
    let dirs = Mutex::new(Vec::new());
    let failures = run(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        dirs.lock().unwrap().push(dir);
        let open = open.clone();
        let opener: Opener = Arc::new(move || open(&path));
        opener
    })
    .await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_sqlite_in_wal_mode() {
    contract_holds(|dir| store_with(&dir.join("sessions.sqlite"), JournalMode::Wal)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_sqlite_with_a_rollback_journal() {
    contract_holds(|dir| store_with(&dir.join("sessions.sqlite"), JournalMode::Delete)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_contract_holds_for_sqlite_on_a_single_threaded_runtime() {
    contract_holds(|dir| store_with(&dir.join("db/sessions.sqlite"), JournalMode::Truncate)).await;
}
