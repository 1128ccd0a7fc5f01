//! Schema 17's row format (spec §4.3–4.4): packed rows and their bounds, the packed-row
//! discriminator, data compression, varint provenance, surface ops, insert-only appends,
//! revisions, and seeks inside packed rows.

use std::path::{Path, PathBuf};

use dsh_persistence::SessionPersistence;
use dsh_session::{SessionEvent, SessionHeader, SurfaceOp};
use dsh_test_support::turns::LogBuilder;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{PhysicalRow, physical_rows, store, texts};

const ID: &str = "format";

fn header() -> SessionHeader {
    SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo")
}

/// A database with `batches` appended; returns its directory and path.
async fn written(batches: Vec<Vec<SessionEvent>>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let persistence = store(&path);
    persistence.create(header()).await.unwrap();
    for batch in batches {
        persistence.append(ID, batch).await.unwrap();
    }
    (dir, path)
}

/// `count` text deltas of turn 1, step 1, from `seq0`, each `text`.
fn text_run(seq0: u64, count: u64, text: &str) -> Vec<SessionEvent> {
    (0..count)
        .map(|k| {
            SessionEvent::new(
                "assistant/chunk",
                seq0 + k,
                1000 + i64::try_from(k).unwrap(),
                json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}}),
            )
        })
        .collect()
}

fn layout(rows: &[PhysicalRow]) -> Vec<(i64, &str, usize)> {
    rows.iter()
        .map(|row| (row.seq, row.kind.as_str(), row.members))
        .collect()
}

async fn read_back(path: &Path) -> Vec<SessionEvent> {
    store(path).read_from(ID, 0).await.unwrap()
}

#[tokio::test]
async fn a_long_run_is_cut_into_rows_of_at_most_1024_members() {
    let run = text_run(0, 2500, "t");
    let (_dir, path) = written(vec![run.clone()]).await;
    assert_eq!(
        layout(&physical_rows(&path, ID)),
        [
            (0, "text-chunks", 1024),
            (1024, "text-chunks", 1024),
            (2048, "text-chunks", 452)
        ]
    );
    assert_eq!(texts(&read_back(&path).await), texts(&run));
    let suffix = store(&path).read_from(ID, 1500).await.unwrap();
    assert_eq!(texts(&suffix), texts(&run[1500..]));
}

#[tokio::test]
async fn fewer_than_three_members_left_over_are_stored_one_by_one() {
    let run = text_run(0, 1026, "t");
    let (_dir, path) = written(vec![run.clone()]).await;
    assert_eq!(
        layout(&physical_rows(&path, ID)),
        [
            (0, "text-chunks", 1024),
            (1024, "assistant/chunk", 1),
            (1025, "assistant/chunk", 1)
        ]
    );
    assert_eq!(texts(&read_back(&path).await), texts(&run));
}

#[tokio::test]
async fn a_run_over_one_mib_packs_the_longest_prefix_that_fits() {
    let member = "x".repeat(300 * 1024);
    let run = text_run(0, 5, &member);
    let (_dir, path) = written(vec![run.clone()]).await;
    let rows = physical_rows(&path, ID);
    assert_eq!(
        layout(&rows),
        [
            (0, "text-chunks", 3),
            (3, "assistant/chunk", 1),
            (4, "assistant/chunk", 1)
        ]
    );
    assert!(rows[0].data_bytes <= 1_048_576);
    assert_eq!(rows[0].data_type, "blob", "large data is compressed");
    assert_eq!(texts(&read_back(&path).await), texts(&run));
}

#[tokio::test]
async fn a_member_too_large_for_any_row_is_stored_alone() {
    let run = text_run(0, 4, &"y".repeat(600 * 1024));
    let (_dir, path) = written(vec![run.clone()]).await;
    assert_eq!(
        layout(&physical_rows(&path, ID)),
        [
            (0, "assistant/chunk", 1),
            (1, "assistant/chunk", 1),
            (2, "assistant/chunk", 1),
            (3, "assistant/chunk", 1)
        ]
    );
    assert_eq!(texts(&read_back(&path).await), texts(&run));
}

#[tokio::test]
async fn only_the_new_batch_is_packed_and_no_row_is_rewritten() {
    let run = text_run(0, 8, "a");
    let (_dir, path) = written(vec![run[..4].to_vec()]).await;
    let first = physical_rows(&path, ID);
    store(&path).append(ID, run[4..].to_vec()).await.unwrap();
    let rows = physical_rows(&path, ID);
    assert_eq!(rows[..first.len()], first[..]);
    assert_eq!(
        layout(&rows),
        [(0, "text-chunks", 4), (4, "text-chunks", 4)]
    );
    assert_eq!(texts(&read_back(&path).await), texts(&run));
}

#[tokio::test]
async fn an_ignorable_event_named_like_a_tag_stays_scalar_and_reads_back() {
    let mut events = Vec::new();
    for (seq, kind) in ["text-chunks", "reasoning-chunks", "tool-call-chunks"]
        .into_iter()
        .enumerate()
    {
        let mut event = SessionEvent::new(kind, seq as u64, 5, json!({"texts": ["a", "b", "c"]}));
        event.ignorable = true;
        events.push(event);
    }
    let (_dir, path) = written(vec![events.clone()]).await;
    let rows = physical_rows(&path, ID);
    assert!(
        rows.iter()
            .all(|row| row.ignorable == Some(1) && row.members == 1)
    );
    assert_eq!(texts(&read_back(&path).await), texts(&events));
}

#[tokio::test]
async fn data_of_4_kib_and_more_is_compressed() {
    // `{"text":"…"}` is 11 bytes around the text: 4,095 and 4,096 bytes of JSON.
    let events = vec![
        SessionEvent::new("goal/change", 0, 1, json!({"text": "a".repeat(4084)})),
        SessionEvent::new("goal/change", 1, 1, json!({"text": "a".repeat(4085)})),
    ];
    let (_dir, path) = written(vec![events.clone()]).await;
    let rows = physical_rows(&path, ID);
    let stored: Vec<(&str, usize)> = rows
        .iter()
        .map(|row| (row.data_type.as_str(), row.data_bytes))
        .collect();
    assert_eq!(stored, [("text", 4095), ("blob", 4096)]);
    assert_eq!(texts(&read_back(&path).await), texts(&events));
}

#[tokio::test]
async fn surface_columns_hold_dshs_encoding() {
    let mut log = LogBuilder::default();
    log.push("turn/start", json!({"turn": 1}));
    log.push_surface(
        "user/message",
        json!({"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}),
        None,
    );
    log.push("x/y", json!({}));
    log.push("x/y", json!({}));
    log.push_surface(
        "user/message",
        json!({"id": "u2", "role": "user", "content": [{"type": "text", "text": "again"}], "source": {"kind": "user"}}),
        Some(vec![3, 1, 2]),
    );
    log.push_surface(
        "assistant/message",
        json!({"turn": 1, "step": 1, "message": {"id": "a1", "role": "assistant", "content": [], "source": {"kind": "model", "provider": "p", "model": "m"}}}),
        Some(vec![]),
    );
    let events = log.finish();
    let (_dir, path) = written(vec![events.clone()]).await;
    let rows = physical_rows(&path, ID);
    assert_eq!(rows[1].surface_op.as_deref(), Some("\"append\""));
    assert_eq!(rows[1].sources, None);
    // 3, then 1 - 3 = -2 → 3, then 2 - 1 = +1 → 2.
    assert_eq!(rows[4].sources.as_deref(), Some(&[3_u8, 3, 2][..]));
    assert_eq!(rows[5].sources.as_deref(), Some(&[][..]), "empty, not NULL");
    assert_eq!(rows[0].surface_op, None);
    assert_eq!(rows[0].ignorable, None);
    assert_eq!(texts(&read_back(&path).await), texts(&events));
}

#[tokio::test]
async fn a_replace_surface_op_is_stored_as_its_json() {
    let mut log = LogBuilder::default();
    log.push_surface(
        "user/message",
        json!({"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}),
        None,
    );
    let mut replace = SessionEvent::new(
        "user/message",
        1,
        9,
        json!({"id": "u2", "role": "user", "content": [{"type": "text", "text": "edited"}], "source": {"kind": "user"}}),
    );
    replace.surface_op = Some(SurfaceOp::Replace { start: 0, end: 0 });
    replace.source_event_seqs = Some(vec![0]);
    let mut events = log.finish();
    events.push(replace);
    let (_dir, path) = written(vec![events.clone()]).await;
    assert_eq!(
        physical_rows(&path, ID)[1].surface_op.as_deref(),
        Some(r#"{"op":"replace","start":0,"end":0}"#)
    );
    assert_eq!(texts(&read_back(&path).await), texts(&events));
}

#[tokio::test]
async fn revisions_name_the_file_the_store_and_the_incarnation() {
    let (_dir, path) = written(vec![text_run(0, 1, "a")]).await;
    let persistence = store(&path);
    let revision = persistence.list_snapshots().await.unwrap()[0]
        .revision
        .clone();
    assert!(revision.starts_with("file:"), "{revision}");
    assert!(
        revision.contains(":store:") && revision.ends_with(":revision:1"),
        "{revision}"
    );
    persistence.append(ID, text_run(1, 1, "b")).await.unwrap();
    let after = persistence.list_snapshots().await.unwrap()[0]
        .revision
        .clone();
    assert_eq!(after, revision.replace(":revision:1", ":revision:2"));
}

#[tokio::test]
async fn the_session_row_holds_the_header_columns() {
    let (_dir, path) = written(vec![text_run(0, 1, "a")]).await;
    let conn = rusqlite::Connection::open(&path).unwrap();
    let row: (String, i64, i64, String, Option<String>, i64) = conn
        .query_row(
            "SELECT id, version, created_at, cwd, origin, revision FROM sessions",
            [],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        row,
        (
            ID.into(),
            0,
            1_795_976_398_536,
            "/srv/dsh-demo".into(),
            None,
            1
        )
    );
    let headers = store(&path).list().await.unwrap();
    assert_eq!(headers, [header()]);
}

#[tokio::test]
async fn a_stale_writer_is_refused_with_dshs_message() {
    let events = text_run(0, 6, "a");
    let (_dir, path) = written(vec![events[..2].to_vec()]).await;
    let stale = store(&path);
    assert_eq!(stale.read_from(ID, 0).await.unwrap().len(), 2);
    stale.load(ID).await.unwrap();
    store(&path)
        .append(ID, events[2..4].to_vec())
        .await
        .unwrap();
    let error = stale.append(ID, events[2..4].to_vec()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "session format append starts at seq 2, stored next seq is 4"
    );
    assert_eq!(texts(&read_back(&path).await), texts(&events[..4]));
}

#[tokio::test]
async fn the_database_keeps_dshs_pragmas() {
    let (_dir, path) = written(vec![text_run(0, 1, "a")]).await;
    let conn = rusqlite::Connection::open(&path).unwrap();
    let pragma = |name: &str| -> Value {
        conn.query_row(&format!("PRAGMA {name}"), [], |row| {
            Ok(match row.get_ref(0)? {
                rusqlite::types::ValueRef::Integer(n) => json!(n),
                rusqlite::types::ValueRef::Text(text) => json!(String::from_utf8_lossy(text)),
                other => panic!("{other:?}"),
            })
        })
        .unwrap()
    };
    assert_eq!(pragma("user_version"), json!(17));
    assert_eq!(pragma("application_id"), json!(1_146_308_688));
    assert_eq!(pragma("journal_mode"), json!("wal"));
    let store_id: String = conn
        .query_row("SELECT store_id FROM persistence_state", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(store_id.len(), 36);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn reading_a_missing_database_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home/sessions.sqlite");
    let persistence = store(&path);
    assert!(persistence.list().await.unwrap().is_empty());
    assert!(persistence.read_from("nobody", 0).await.is_err());
    persistence.create(header()).await.unwrap();
    assert!(!path.exists() && !path.parent().unwrap().exists());
    persistence.append(ID, text_run(0, 1, "a")).await.unwrap();
    assert!(path.exists());
}

#[tokio::test]
async fn an_in_memory_database_works_for_one_store() {
    use dsh_persistence::{Coordinator, CoordinatorOptions};
    use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};
    let backend = SqliteBackend::new(SqliteOptions {
        path: DatabasePath::Memory,
        journal_mode: JournalMode::Wal,
        busy_timeout: std::time::Duration::from_secs(1),
    })
    .unwrap();
    let persistence = Coordinator::new(backend, CoordinatorOptions::default());
    persistence.create(header()).await.unwrap();
    let run = text_run(0, 5, "m");
    persistence.append(ID, run.clone()).await.unwrap();
    assert_eq!(
        texts(&persistence.read_from(ID, 0).await.unwrap()),
        texts(&run)
    );
    let revision = &persistence.list_snapshots().await.unwrap()[0].revision;
    assert!(revision.starts_with("memory:store:"), "{revision}");
}

#[tokio::test]
async fn a_writer_whose_last_append_was_overtaken_is_refused() {
    let events = text_run(0, 6, "a");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let first = store(&path);
    first.create(header()).await.unwrap();
    first.append(ID, events[..2].to_vec()).await.unwrap();
    store(&path)
        .append(ID, events[2..4].to_vec())
        .await
        .unwrap();
    let error = first.append(ID, events[2..4].to_vec()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "session format append starts at seq 2, stored next seq is 4"
    );
}

#[tokio::test]
async fn a_schema_changed_by_another_connection_between_appends_is_refused() {
    let events = text_run(0, 4, "a");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let persistence = store(&path);
    persistence.create(header()).await.unwrap();
    persistence.append(ID, events[..2].to_vec()).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA user_version = 16;").unwrap();
    drop(conn);
    let error = persistence
        .append(ID, events[2..].to_vec())
        .await
        .unwrap_err();
    assert!(error.is_format_refusal(), "{error}");
    assert!(
        error
            .to_string()
            .contains("schema changed before mutation (expected 17, got 16)"),
        "{error}"
    );
}
