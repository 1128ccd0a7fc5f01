//! dsh 0.1.1's own database opens and reads here; what we write is what dsh writes, row for
//! row; and a database we create shows dsh's schema text to Python's `sqlite3`.

use std::process::Command;

use dsh_persistence::SessionPersistence;
use dsh_session::SessionHeader;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    FIXTURE_ID, dyn_store, fixture_path, install_fixture, physical_rows, store, texts,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dshs_database_lists_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    let persistence = dyn_store(&path);
    let headers = persistence.list().await.unwrap();
    let mut expected = SessionHeader::new(FIXTURE_ID, 1_795_976_401_679).with_cwd("/srv/dsh-demo");
    expected.version = 0;
    assert_eq!(headers, [expected]);

    let inspection = persistence.inspect(FIXTURE_ID).await.unwrap();
    assert_eq!(inspection.events.len(), 41);
    let kinds: Vec<&str> = inspection
        .events
        .iter()
        .map(|event| event.kind.as_ref())
        .collect();
    assert_eq!(
        kinds[30..35],
        ["assistant/chunk"; 5],
        "the packed row expands"
    );
    assert_eq!(kinds[40], "turn/end");
    let texts_of_run: String = inspection.events[30..35]
        .iter()
        .map(|event| event.data["chunk"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        texts_of_run.starts_with("Done. The last command printed: sqli"),
        "{texts_of_run}"
    );
    // The zstd-compressed request header reads back as JSON.
    assert_eq!(inspection.events[10].kind, "request/header");
    assert!(inspection.events[10].data["header"].is_object());
    assert_eq!(
        inspection.events[23].source_event_seqs.as_deref(),
        Some(&[13_u64, 14, 15, 16, 17, 18, 19, 20, 21, 22][..])
    );

    let suffix = persistence.read_from(FIXTURE_ID, 32).await.unwrap();
    assert_eq!(texts(&suffix), texts(&inspection.events[32..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewriting_dshs_session_gives_dshs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let source = install_fixture(dir.path());
    let inspection = store(&source).inspect(FIXTURE_ID).await.unwrap();

    let copy = dir.path().join("copy/sessions.sqlite");
    let persistence = store(&copy);
    persistence.create(inspection.header.clone()).await.unwrap();
    persistence
        .append(FIXTURE_ID, inspection.events.clone())
        .await
        .unwrap();
    persistence.close().await.unwrap();

    // Physical rows compare everything but the zstd frame bytes (their content is compared).
    let theirs = physical_rows(&source, FIXTURE_ID);
    let ours = physical_rows(&copy, FIXTURE_ID);
    assert_eq!(ours.len(), 37);
    assert_eq!(ours, theirs);
    let data = |path: &std::path::Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let mut statement = conn
            .prepare("SELECT data FROM events WHERE typeof(data) = 'text' ORDER BY seq")
            .unwrap();
        statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        data(&copy),
        data(&source),
        "data text is byte for byte dsh's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_appended_to_dshs_database_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    let persistence = store(&path);
    let next = persistence.load(FIXTURE_ID).await.unwrap().events.len() as u64;
    let turn: Vec<_> = (0..6)
        .map(|k| {
            let (kind, data) = match k {
                0 => ("turn/start", json!({"turn": 2})),
                5 => ("turn/end", json!({"turn": 2, "reason": {"kind": "completed"}})),
                _ => (
                    "assistant/chunk",
                    json!({"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": format!("w{k}")}}),
                ),
            };
            dsh_session::SessionEvent::new(kind, next + k, 1_795_976_500_000, data)
        })
        .collect();
    persistence.append(FIXTURE_ID, turn.clone()).await.unwrap();
    let events = store(&path).read_from(FIXTURE_ID, next).await.unwrap();
    assert_eq!(texts(&events), texts(&turn));
    let rows = physical_rows(&path, FIXTURE_ID);
    let last: Vec<(&str, usize)> = rows[rows.len() - 3..]
        .iter()
        .map(|row| (row.kind.as_str(), row.members))
        .collect();
    assert_eq!(
        last,
        [("turn/start", 1), ("text-chunks", 4), ("turn/end", 1)]
    );
}

fn python(script: &str, database: &std::path::Path) -> String {
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(database)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Dumps the schema as the fixture's `sessions.schema.sql` was made.
const DUMP_SCHEMA: &str = r#"
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
for (sql,) in conn.execute("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid"):
    print(sql + ";")
version = conn.execute("PRAGMA user_version").fetchone()[0]
application = conn.execute("PRAGMA application_id").fetchone()[0]
print(f"-- user_version={version} application_id={application}")
print(conn.execute("PRAGMA integrity_check").fetchone()[0])
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_we_write_shows_dshs_schema_to_python() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let persistence = store(&path);
    persistence
        .create(SessionHeader::new("ours", 1).with_cwd("/tmp"))
        .await
        .unwrap();
    persistence
        .append(
            "ours",
            vec![dsh_session::SessionEvent::new(
                "goal/change",
                0,
                1,
                json!({"goal": "x"}),
            )],
        )
        .await
        .unwrap();
    persistence.close().await.unwrap();

    let dumped = python(DUMP_SCHEMA, &path);
    let expected =
        std::fs::read_to_string(fixture_path("04-sqlite-one-bash/sessions.schema.sql")).unwrap();
    assert_eq!(dumped, format!("{expected}ok\n"));
}
