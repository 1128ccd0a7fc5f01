//! Torn tails versus corruption (spec §4.6): a damaged or discontinuous row after the last
//! committed `turn/end` is cut (by `load`, never by `inspect`); one before it is corruption
//! naming the seq and the database; malformed packed rows are told apart the same way.

use std::path::{Path, PathBuf};

use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_session::SessionHeader;
use dsh_session::repair::interrupted_turn_closers;
use dsh_test_support::turns::LogBuilder;
use pretty_assertions::assert_eq;
use rusqlite::types::Value as SqlValue;
use serde_json::json;

use super::support::{physical_rows, store, texts};

const ID: &str = "tail";

/// One complete turn (ending at seq `len - 1`), then `turn/start` of an open one.
async fn one_turn_then_open() -> (tempfile::TempDir, PathBuf, Vec<dsh_session::SessionEvent>) {
    let mut log = LogBuilder::default();
    log.preamble().turn(1);
    log.push("turn/start", json!({"turn": 2}));
    let events = log.finish();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let persistence = store(&path);
    persistence
        .create(SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo"))
        .await
        .unwrap();
    persistence.append(ID, events.clone()).await.unwrap();
    (dir, path, events)
}

/// Inserts a row with plain SQL.
fn insert(path: &Path, seq: u64, kind: &str, data: SqlValue, ignorable: Option<i64>) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute(
        "INSERT INTO events (session_id, seq, type, time, data, ignorable) \
         VALUES (?1, ?2, ?3, 5, ?4, ?5)",
        rusqlite::params![ID, i64::try_from(seq).unwrap(), kind, data, ignorable],
    )
    .unwrap();
}

fn text(value: &str) -> SqlValue {
    SqlValue::Text(value.to_owned())
}

fn seqs(path: &Path) -> Vec<i64> {
    physical_rows(path, ID).iter().map(|row| row.seq).collect()
}

fn corruption(error: PersistenceError) -> String {
    match error {
        PersistenceError::Corruption { cause, .. } => cause,
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[tokio::test]
async fn a_damaged_row_after_the_last_turn_end_is_torn_and_only_load_cuts_it() {
    let (_dir, path, events) = one_turn_then_open().await;
    let next = events.len() as u64;
    insert(&path, next, "assistant/chunk", text("{not json"), None);
    let before = seqs(&path);

    let persistence = store(&path);
    let mut balanced = events.clone();
    balanced.extend(interrupted_turn_closers(&events));
    let inspected = persistence.inspect(ID).await.unwrap();
    assert_eq!(texts(&inspected.events), texts(&balanced));
    assert_eq!(seqs(&path), before, "inspect changes nothing");

    let loaded = persistence.load(ID).await.unwrap();
    assert_eq!(texts(&loaded.events), texts(&balanced));
    let again = store(&path).read_from(ID, 0).await.unwrap();
    assert_eq!(
        texts(&again),
        texts(&balanced),
        "the cut and the closers are durable"
    );
}

#[tokio::test]
async fn a_damaged_row_before_a_later_turn_end_is_corruption_naming_seq_and_database() {
    let (_dir, path, events) = one_turn_then_open().await;
    let next = events.len() as u64;
    insert(&path, next, "goal/change", text("[1,"), None);
    insert(
        &path,
        next + 1,
        "turn/end",
        text(r#"{"turn":2,"reason":{"kind":"completed"}}"#),
        None,
    );
    let before = seqs(&path);
    let cause = corruption(store(&path).load(ID).await.unwrap_err());
    assert!(
        cause.starts_with(&format!(
            "corrupt session log: invalid committed physical row at seq {next} ("
        )),
        "{cause}"
    );
    assert!(
        cause.ends_with(&format!("(database: {})", path.display())),
        "{cause}"
    );
    assert_eq!(seqs(&path), before, "a corrupt log is left as it is");
}

#[tokio::test]
async fn a_seq_gap_after_the_last_turn_end_is_torn() {
    let (_dir, path, events) = one_turn_then_open().await;
    let next = events.len() as u64;
    insert(&path, next + 1, "goal/change", text("{}"), None);
    let persistence = store(&path);
    let loaded = persistence.load(ID).await.unwrap();
    let mut balanced = events.clone();
    balanced.extend(interrupted_turn_closers(&events));
    assert_eq!(texts(&loaded.events), texts(&balanced));
    assert!(!seqs(&path).contains(&i64::try_from(next + 1).unwrap()));
}

#[tokio::test]
async fn malformed_packed_rows_are_torn_in_the_tail_and_corrupt_before_a_turn_end() {
    let row = |members: usize| {
        let texts: Vec<String> = (0..members).map(|k| format!("t{k}")).collect();
        let dt = vec![1; members.saturating_sub(1)];
        text(&json!({"turn": 2, "step": 1, "index": 0, "dt": dt, "texts": texts}).to_string())
    };
    let cases: [(&str, SqlValue, &str); 5] = [
        ("text-chunks", row(2), "texts must contain 3..1024 strings"),
        (
            "text-chunks",
            row(1025),
            "texts must contain 3..1024 strings",
        ),
        (
            "goal/change",
            row(3),
            "packed discriminator requires a chunk tag",
        ),
        (
            "reasoning-chunks",
            text(r#"{"turn":2}"#),
            "malformed reasoning-chunks storage row",
        ),
        ("tool-call-chunks", text("[1"), "data is not JSON"),
    ];
    for (kind, data, reason) in cases {
        // In the tail: torn, and the load cuts it.
        let (_dir, path, events) = one_turn_then_open().await;
        let next = events.len() as u64;
        insert(&path, next, kind, data.clone(), Some(0));
        let loaded = store(&path).load(ID).await.unwrap();
        assert_eq!(
            loaded.events.len(),
            events.len() + interrupted_turn_closers(&events).len()
        );

        // Before a turn end: corruption with the row's reason.
        let (_dir, path, events) = one_turn_then_open().await;
        let next = events.len() as u64;
        insert(&path, next, kind, data, Some(0));
        insert(
            &path,
            next + 3,
            "turn/end",
            text(r#"{"turn":2,"reason":{"kind":"completed"}}"#),
            None,
        );
        let cause = corruption(store(&path).inspect(ID).await.unwrap_err());
        assert!(cause.contains(reason), "{kind}: {cause}");
    }
}

#[tokio::test]
async fn an_append_to_a_session_with_a_torn_tail_first_repairs_it() {
    let (_dir, path, events) = one_turn_then_open().await;
    let next = events.len() as u64;
    insert(&path, next, "assistant/chunk", text("{not json"), None);
    let persistence = store(&path);
    let closers = interrupted_turn_closers(&events);
    let follow = dsh_session::SessionEvent::new(
        "goal/change",
        next + closers.len() as u64,
        9,
        json!({"goal": "more"}),
    );
    persistence.append(ID, vec![follow.clone()]).await.unwrap();
    let mut expected = events.clone();
    expected.extend(closers);
    expected.push(follow);
    assert_eq!(
        texts(&store(&path).read_from(ID, 0).await.unwrap()),
        texts(&expected)
    );
}
