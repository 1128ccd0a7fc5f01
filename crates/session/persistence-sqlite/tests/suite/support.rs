//! Shared helpers: stores over a temporary database, and dsh 0.1.1's database.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};

/// A store over the database at `path`: a fresh coordinator and connection each call, as a
/// new process would have.
pub fn store(path: &Path) -> Arc<Coordinator<SqliteBackend>> {
    store_with(path, JournalMode::Wal)
}

/// A store over `path` with another journal mode.
pub fn store_with(path: &Path, journal_mode: JournalMode) -> Arc<Coordinator<SqliteBackend>> {
    let backend = SqliteBackend::new(SqliteOptions {
        path: DatabasePath::File(path.to_path_buf()),
        journal_mode,
        busy_timeout: Duration::from_secs(5),
    })
    .unwrap();
    Coordinator::new(backend, CoordinatorOptions::default())
}

/// The same store as a trait object.
pub fn dyn_store(path: &Path) -> Arc<dyn SessionPersistence> {
    store(path)
}

/// The session in dsh 0.1.1's database.
pub const FIXTURE_ID: &str = "session-ff7d60e8-a48c-41a1-aee4-d75e7b9cd5f1";

/// Where the fixtures live.
pub fn fixture_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dsh-0.1.1")
        .join(relative)
}

/// Copies dsh 0.1.1's database into `dir` (private, as dsh makes it); returns its path.
pub fn install_fixture(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("sessions.sqlite");
    std::fs::copy(fixture_path("04-sqlite-one-bash/sessions.sqlite"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Each event as compact JSON, for byte-for-byte comparisons.
pub fn texts<E: std::borrow::Borrow<dsh_session::SessionEvent>>(events: &[E]) -> Vec<String> {
    events
        .iter()
        .map(|event| dsh_protocol::json::to_js_string(event.borrow()))
        .collect()
}

/// One row of `events` as stored, summarized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalRow {
    /// `seq`.
    pub seq: i64,
    /// `type`.
    pub kind: String,
    /// `typeof(data)`: `text` or `blob`.
    pub data_type: String,
    /// Bytes of the (uncompressed) data JSON.
    pub data_bytes: usize,
    /// Members of a packed row; 1 for a scalar row.
    pub members: usize,
    /// `source_event_seqs`.
    pub sources: Option<Vec<u8>>,
    /// `surface_op`.
    pub surface_op: Option<String>,
    /// `ignorable`.
    pub ignorable: Option<i64>,
}

/// The rows of session `id`, in seq order, read with plain SQL.
pub fn physical_rows(database: &Path, id: &str) -> Vec<PhysicalRow> {
    let conn = rusqlite::Connection::open(database).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT seq, type, typeof(data), data, source_event_seqs, surface_op, ignorable \
             FROM events WHERE session_id = ?1 ORDER BY seq",
        )
        .unwrap();
    statement
        .query_map([id], |row| {
            let data_type: String = row.get(2)?;
            let json = match row.get_ref(3)? {
                rusqlite::types::ValueRef::Text(text) => text.to_vec(),
                rusqlite::types::ValueRef::Blob(frame) => zstd::stream::decode_all(frame).unwrap(),
                other => panic!("data is {other:?}"),
            };
            let ignorable: Option<i64> = row.get(6)?;
            let members = if ignorable == Some(0) {
                let data: serde_json::Value = serde_json::from_slice(&json).unwrap();
                data.get("texts")
                    .or_else(|| data.get("args"))
                    .and_then(serde_json::Value::as_array)
                    .map_or(0, Vec::len)
            } else {
                1
            };
            Ok(PhysicalRow {
                seq: row.get(0)?,
                kind: row.get(1)?,
                data_type,
                data_bytes: json.len(),
                members,
                sources: row.get(4)?,
                surface_op: row.get(5)?,
                ignorable,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
