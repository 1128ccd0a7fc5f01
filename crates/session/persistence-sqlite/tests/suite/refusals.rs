//! Databases that are not dsh schema-17 session stores are refused with a clear error and
//! left byte for byte as they were: another application's, older or newer schemas, altered
//! tables, files that are not databases, and unsafe paths.

use std::path::{Path, PathBuf};

use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};
use dsh_session::{SessionEvent, SessionHeader};
use serde_json::json;

use super::support::{install_fixture, store};

/// Every file of the database (main, WAL, shared memory) and its bytes.
fn snapshot(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|file| {
            let bytes = std::fs::read(&file).unwrap();
            (file, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Opens `path` through the backend and returns the refusal; checks nothing was changed.
async fn refusal(path: &Path) -> PersistenceError {
    let before = snapshot(path);
    let persistence = store(path);
    let error = persistence.list().await.unwrap_err();
    let again = persistence
        .append("s", vec![SessionEvent::new("goal/change", 0, 1, json!({}))])
        .await
        .unwrap_err();
    assert_eq!(again.to_string(), error.to_string());
    drop(persistence);
    assert_eq!(snapshot(path), before, "the database is left untouched");
    error
}

fn database_with(dir: &Path, sql: &str) -> PathBuf {
    let path = dir.join("other.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    path
}

fn expect(error: &PersistenceError, fragments: &[&str]) {
    let text = error.to_string();
    for fragment in fragments {
        assert!(text.contains(fragment), "{fragment:?} not in {text}");
    }
}

#[tokio::test]
async fn another_applications_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_with(
        dir.path(),
        "PRAGMA application_id = 42; PRAGMA user_version = 17; CREATE TABLE notes (x);",
    );
    let error = refusal(&path).await;
    assert!(error.is_format_refusal());
    expect(
        &error,
        &[
            &format!("session database at \"{}\"", path.display()),
            "has application id 42, expected 1146308688",
            "left untouched",
        ],
    );
}

#[tokio::test]
async fn an_unversioned_database_with_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_with(
        dir.path(),
        "CREATE TABLE notes (x); INSERT INTO notes VALUES (1);",
    );
    let error = refusal(&path).await;
    assert!(error.is_format_refusal());
    expect(
        &error,
        &["has an unversioned schema or application identity"],
    );
}

#[tokio::test]
async fn older_and_newer_schemas_are_refused_not_migrated() {
    for version in [15, 16, 18] {
        let dir = tempfile::tempdir().unwrap();
        let path = install_fixture(dir.path());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {version};"))
            .unwrap();
        drop(conn);
        let error = refusal(&path).await;
        assert!(error.is_format_refusal());
        expect(
            &error,
            &[&format!(
                "has schema version {version}, incompatible with this build (17)"
            )],
        );
    }
}

#[tokio::test]
async fn altered_or_loose_tables_are_refused() {
    let dsh = include_str!("../../src/sql/schema.sql");
    let cases = [
        dsh.replace(") STRICT;", ");"),
        format!("{dsh}\nCREATE TABLE extra (x);"),
        dsh.replace(
            "revision         INTEGER NOT NULL",
            "revision INTEGER NOT NULL, note TEXT",
        ),
        format!("{dsh}\nCREATE INDEX events_by_type ON events (type);"),
    ];
    for schema in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = database_with(
            dir.path(),
            &format!("{schema}\nPRAGMA application_id = 1146308688; PRAGMA user_version = 17;"),
        );
        let error = refusal(&path).await;
        assert!(error.is_format_refusal());
        expect(&error, &["does not contain the required schema objects"]);
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.sqlite");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).unwrap();
    let error = refusal(&path).await;
    expect(&error, &[&path.display().to_string(), "not a database"]);
}

#[tokio::test]
async fn unsafe_paths_are_refused_when_the_backend_is_built() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = install_fixture(dir.path());
    let link = dir.path().join("link.sqlite");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let backend = |path: &Path| {
        SqliteBackend::new(SqliteOptions {
            path: DatabasePath::File(path.to_path_buf()),
            journal_mode: JournalMode::Wal,
            busy_timeout: std::time::Duration::from_secs(1),
        })
    };
    let error = backend(&link).unwrap_err().to_string();
    assert!(
        error.contains("is a symbolic link, not a regular file"),
        "{error}"
    );

    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o666)).unwrap();
    let error = backend(&real).unwrap_err().to_string();
    assert!(error.contains("writable only by that user"), "{error}");

    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let error = backend(&shared.join("sessions.sqlite"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("not group/world-writable"), "{error}");
}

#[tokio::test]
async fn a_dsh_database_stays_usable_after_a_refused_open_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    let persistence = store(&path);
    persistence
        .create(SessionHeader::new("fresh", 1).with_cwd("/tmp"))
        .await
        .unwrap();
    persistence
        .append(
            "fresh",
            vec![SessionEvent::new("goal/change", 0, 1, json!({"goal": "x"}))],
        )
        .await
        .unwrap();
    assert_eq!(store(&path).list().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_session_of_a_newer_log_format_is_listed_but_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE sessions SET version = 1", []).unwrap();
    drop(conn);
    let persistence = store(&path);
    let listed = persistence.list().await.unwrap();
    assert_eq!(listed[0].version, 1);
    let error = persistence.inspect(&listed[0].id).await.unwrap_err();
    assert!(error.is_format_refusal());
    assert_eq!(
        error.to_string(),
        format!(
            "session \"{}\" uses log format v1, but this harness reads only v0: the log was \
             written by a newer harness — upgrade the harness to open it (database: {})",
            listed[0].id,
            path.display()
        )
    );
}
