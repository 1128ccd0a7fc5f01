//! The schema: dsh's UUID rule, the reference tables, and read-only opens.

use super::*;

#[test]
fn uuids_are_recognized_as_dsh_does() {
    assert!(is_uuid("c8558295-a997-449b-b16d-da548786d0a0"));
    assert!(is_uuid(&random_uuid()));
    assert!(!is_uuid("c8558295-a997-049b-b16d-da548786d0a0"));
    assert!(!is_uuid("c8558295-a997-449b-716d-da548786d0a0"));
    assert!(!is_uuid("not-a-uuid"));
}

#[test]
fn the_reference_schema_has_dshs_three_tables() {
    let names: Vec<&str> = canonical_schema()
        .unwrap()
        .iter()
        .map(|(_, name, _, _)| name.as_str())
        .collect();
    assert_eq!(names, ["events", "persistence_state", "sessions"]);
}

#[test]
fn a_read_only_open_reads_without_lock_files_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("odd ?#% name.sqlite");
    std::fs::write(&file, b"").unwrap();
    let path = DatabasePath::File(file.clone());
    drop(Database::open(&path, JournalMode::Wal, Duration::from_secs(1)).unwrap());
    let listing = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing(dir.path());
    let mut database = Database::open_read_only(&file, "refused: read-only".into())
        .unwrap()
        .unwrap();
    assert_eq!(database.int(sql::USER_VERSION).unwrap(), 17);
    assert_eq!(listing(dir.path()), before, "no -wal or -shm appears");
    let error = database.ready_for_writes().unwrap_err().to_string();
    assert_eq!(error, "refused: read-only");

    std::fs::write(dir.path().join("odd ?#% name.sqlite-wal"), b"pending").unwrap();
    let error = Database::open_read_only(&file, "refused".into())
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("still holds writes"), "{error}");

    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    assert!(
        Database::open_read_only(&empty, "refused".into())
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_reading_open_never_initializes_nor_switches_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    // An empty SQLite database with a header page: nothing is written into it.
    let empty = dir.path().join("empty.sqlite");
    let conn = Connection::open(&empty).unwrap();
    conn.execute_batch("PRAGMA page_size = 4096; VACUUM;")
        .unwrap();
    drop(conn);
    let bytes = std::fs::read(&empty).unwrap();
    assert!(!bytes.is_empty());
    let opened =
        Database::open_for_reading(&empty, JournalMode::Wal, Duration::from_secs(1)).unwrap();
    assert!(opened.is_none());
    assert_eq!(std::fs::read(&empty).unwrap(), bytes);

    // A dsh database in rollback-journal mode stays so until the first write.
    let file = dir.path().join("delete.sqlite");
    std::fs::write(&file, b"").unwrap();
    let path = DatabasePath::File(file.clone());
    drop(Database::open(&path, JournalMode::Delete, Duration::from_secs(1)).unwrap());
    let bytes = std::fs::read(&file).unwrap();
    let mut database = Database::open_for_reading(&file, JournalMode::Wal, Duration::from_secs(1))
        .unwrap()
        .unwrap();
    assert_eq!(
        std::fs::read(&file).unwrap(),
        bytes,
        "a read changes nothing"
    );
    database.ready_for_writes().unwrap();
    let mode: String = database
        .conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_in_memory_database_initializes() {
    let database = Database::open(
        &DatabasePath::Memory,
        JournalMode::Wal,
        Duration::from_secs(1),
    )
    .unwrap();
    assert!(database.identity.starts_with("memory:store:"));
    assert_eq!(database.int(sql::USER_VERSION).unwrap(), 17);
    assert_eq!(
        database.int(sql::APPLICATION_ID_PRAGMA).unwrap(),
        0x4453_4850
    );
}
