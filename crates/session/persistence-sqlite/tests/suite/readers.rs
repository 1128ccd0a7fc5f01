//! What readers may and may not do to the database: a read never writes (a zero-byte or
//! schema-less file lists as empty and stays as it was), a path that is not a database file is
//! named for what it is, a database or directory its owner made read-only is not written even
//! by root, and one bad session row does not hide the others.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use dsh_persistence::{PersistenceError, SessionPersistence, UnreadableSession};
use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};
use dsh_session::{SessionEvent, SessionHeader};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{FIXTURE_ID, install_fixture, store};

/// Every file in `dir` and its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap_or_default();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn backend(path: &Path) -> Result<SqliteBackend, dsh_persistence::BackendError> {
    SqliteBackend::new(SqliteOptions {
        path: DatabasePath::File(path.to_path_buf()),
        journal_mode: JournalMode::Wal,
        busy_timeout: Duration::from_secs(1),
    })
}

#[tokio::test]
async fn a_zero_byte_database_lists_as_empty_and_stays_zero_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    std::fs::write(&path, b"").unwrap();
    set_mode(&path, 0o600);
    let before = files(dir.path());

    let persistence = store(&path);
    assert!(persistence.list().await.unwrap().is_empty());
    let listing = persistence.list_with_unreadable().await.unwrap();
    assert!(listing.sessions.is_empty() && listing.unreadable.is_empty());
    assert!(persistence.list_snapshots().await.unwrap().is_empty());
    assert!(matches!(
        persistence.inspect("any").await.unwrap_err(),
        PersistenceError::NotFound(_)
    ));
    assert!(matches!(
        persistence.read_from("any", 0).await.unwrap_err(),
        PersistenceError::NotFound(_)
    ));
    drop(persistence);
    assert_eq!(files(dir.path()), before, "no schema, no -wal, no -shm");

    // The first write still makes it a database.
    let writer = store(&path);
    writer
        .create(SessionHeader::new("first", 1).with_cwd("/w"))
        .await
        .unwrap();
    writer
        .append(
            "first",
            vec![SessionEvent::new("goal/change", 0, 1, json!({"goal": "x"}))],
        )
        .await
        .unwrap();
    assert_eq!(store(&path).list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_database_without_a_schema_is_read_as_empty_and_not_initialized() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("VACUUM;").unwrap();
    drop(conn);
    set_mode(&path, 0o600);
    let before = files(dir.path());
    assert!(!before.is_empty());

    let persistence = store(&path);
    assert!(persistence.list().await.unwrap().is_empty());
    drop(persistence);
    assert_eq!(files(dir.path()), before);
}

/// Builds the backend over `path` in a thread of its own; fails if that takes longer than a
/// few seconds (a FIFO opened for reading would block forever).
fn backend_error_within_deadline(path: &Path) -> String {
    let (sender, receiver) = mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = sender.send(backend(&owned).err().map(|error| error.to_string()));
    });
    let Ok(error) = receiver.recv_timeout(Duration::from_secs(10)) else {
        let _ = std::fs::OpenOptions::new().write(true).open(path);
        panic!("opening {} blocked", path.display());
    };
    error.expect("the backend must refuse this path")
}

#[test]
fn a_fifo_or_a_directory_at_the_database_path_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.sqlite");
    nix::unistd::mkfifo(
        &fifo,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .unwrap();
    assert_eq!(
        backend_error_within_deadline(&fifo),
        format!(
            "session database \"{}\" is a FIFO, not a regular file; move it away, or point the \
             row's `path` at a database file",
            fifo.display()
        )
    );
    let directory = dir.path().join("dir.sqlite");
    std::fs::create_dir(&directory).unwrap();
    assert_eq!(
        backend_error_within_deadline(&directory),
        format!(
            "session database \"{}\" is a directory, not a regular file; move it away, or point \
             the row's `path` at a database file",
            directory.display()
        )
    );
    let link = dir.path().join("link.sqlite");
    std::os::unix::fs::symlink(install_fixture(dir.path()), &link).unwrap();
    assert!(
        backend_error_within_deadline(&link).contains("is a symbolic link, not a regular file"),
    );
}

#[tokio::test]
async fn a_database_its_owner_made_read_only_is_read_but_never_written() {
    // The tests run as root in CI, for whom `access()` allows any write: the mode bits decide.
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    set_mode(&path, 0o400);
    let before = files(dir.path());
    let expected = format!(
        "session database at \"{}\" is read-only (mode 0400), and dsh does not write to a \
         database its owner made read-only, even as root; make it writable (`chmod u+w`) to \
         write sessions to it",
        path.display()
    );

    let persistence = store(&path);
    assert_eq!(persistence.list().await.unwrap().len(), 1, "it is read");
    // Resuming would write: refused before anything is read or repaired.
    let refused = persistence.prepare(FIXTURE_ID).await.unwrap_err();
    assert_eq!(refused.to_string(), expected);
    let refused = persistence
        .create(SessionHeader::new("new", 1).with_cwd("/w"))
        .await
        .unwrap_err();
    assert_eq!(refused.to_string(), expected);
    let next = persistence.read_from(FIXTURE_ID, 0).await.unwrap().len() as u64;
    let refused = persistence
        .append(
            FIXTURE_ID,
            vec![SessionEvent::new(
                "goal/change",
                next,
                1,
                json!({"goal": "x"}),
            )],
        )
        .await
        .unwrap_err();
    assert_eq!(refused.to_string(), expected);
    drop(persistence);
    assert_eq!(files(dir.path()), before, "nothing was written");
}

#[tokio::test]
async fn a_database_in_a_read_only_directory_is_read_but_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    set_mode(&home, 0o700);
    let path = install_fixture(&home);
    set_mode(&home, 0o500);
    let before = files(&home);

    let persistence = store(&path);
    let listed = persistence.list().await.unwrap();
    let refused = persistence
        .prepare(FIXTURE_ID)
        .await
        .unwrap_err()
        .to_string();
    drop(persistence);
    let after = files(&home);
    set_mode(&home, 0o700);
    assert_eq!(listed.len(), 1);
    assert_eq!(
        refused,
        format!(
            "the directory \"{}\" of the session database is read-only (mode 0500), and SQLite \
             keeps its journal beside the database; make the directory writable (`chmod u+w`) \
             to write sessions",
            home.display()
        )
    );
    assert_eq!(after, before, "no journal, no -wal, no -shm");
}

#[tokio::test]
async fn a_bad_session_row_is_reported_and_the_other_sessions_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_fixture(dir.path());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO sessions SELECT 'bad-row', version, created_at, 'relative/cwd', \
         parent_session, seed_length, origin, delegation_depth, agent_preset, incarnation, \
         revision FROM sessions WHERE id = ?1",
        [FIXTURE_ID],
    )
    .unwrap();
    drop(conn);

    let persistence = store(&path);
    let listing = persistence.list_with_unreadable().await.unwrap();
    let ids: Vec<&str> = listing.sessions.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, [FIXTURE_ID]);
    assert_eq!(
        listing.unreadable,
        [UnreadableSession {
            id: Some("bad-row".into()),
            path: Some(path.clone()),
            error: format!(
                "stored session \"bad-row\" failed validation: session row \"bad-row\" in {} is \
                 invalid: stored session cwd must be absolute",
                path.display()
            ),
        }]
    );
    let plain: Vec<String> = persistence
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|header| header.id)
        .collect();
    assert_eq!(plain, [FIXTURE_ID]);
}
