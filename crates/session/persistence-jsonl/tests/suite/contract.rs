//! The backend-neutral persistence contract, for every encoding and packing setting.

use std::sync::Arc;

use dsh_persistence::contract::{Opener, run};
use dsh_persistence_jsonl::Compression;

use super::support::dyn_store;

async fn contract_holds(compression: Compression, pack: bool) {
    let roots = std::sync::Mutex::new(Vec::new());
    let failures = run(|| {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("sessions");
        roots.lock().unwrap().push(root);
        let opener: Opener = Arc::new(move || dyn_store(&path, compression, pack));
        opener
    })
    .await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_zstd_with_packed_rows() {
    contract_holds(Compression::Zstd, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_zstd_without_packing() {
    contract_holds(Compression::Zstd, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_raw_jsonl_with_packed_rows() {
    contract_holds(Compression::None, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_holds_for_raw_jsonl_without_packing() {
    contract_holds(Compression::None, false).await;
}
