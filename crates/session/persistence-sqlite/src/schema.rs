//! Opening a database: connection settings, and proof that the database is a dsh schema-17
//! session store before anything is written to it.
//!
//! A fresh, empty database is initialized with dsh's schema. Anything else must already be
//! exactly schema 17 with dsh's application id and tables; a database of another application,
//! an older or newer schema, or altered tables is refused and never migrated or modified.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dsh_persistence::BackendError;
use dsh_protocol::ids::random_uuid;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use crate::path_checks::DatabasePath;
use crate::sql;
use crate::tail_cache::TailCache;

/// How the database journals writes (`journalMode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    /// Write-ahead log (dsh's default).
    #[default]
    Wal,
    /// Rollback journal, deleted after each transaction.
    Delete,
    /// Rollback journal, truncated after each transaction.
    Truncate,
    /// Rollback journal, header zeroed after each transaction.
    Persist,
}

impl JournalMode {
    fn pragma(self) -> &'static str {
        match self {
            Self::Wal => "PRAGMA journal_mode = WAL",
            Self::Delete => "PRAGMA journal_mode = DELETE",
            Self::Truncate => "PRAGMA journal_mode = TRUNCATE",
            Self::Persist => "PRAGMA journal_mode = PERSIST",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Wal => "wal",
            Self::Delete => "delete",
            Self::Truncate => "truncate",
            Self::Persist => "persist",
        }
    }
}

/// How often a busy journal-mode switch is retried.
const JOURNAL_BUSY_RETRY: Duration = Duration::from_millis(10);

/// One row of `sqlite_schema`, its SQL with whitespace collapsed.
type SchemaObject = (String, String, String, String);

/// An open, validated database.
pub(crate) struct Database {
    /// The connection.
    pub conn: Connection,
    /// Where it is, for messages.
    pub path: DatabasePath,
    /// The store's identity: the file's identity and the store id (part of every revision).
    pub identity: String,
    /// The schema cookie last validated, so a mutation re-validates only after a change.
    validated_cookie: Option<i64>,
    /// Why this connection must not write, when it was opened for reading only.
    read_only: Option<String>,
    /// The journal mode to select before the first write, when opened for reading (selecting
    /// it may rewrite the file header, and a read changes nothing).
    pending_journal: Option<(JournalMode, Duration)>,
    /// What this connection's last write left behind, while no other connection writes.
    pub tail_cache: TailCache,
}

/// What the ownership check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// A dsh schema-17 database.
    Ours,
    /// An empty database: no version, no application id, no objects.
    Empty,
}

fn sqlite(path: &DatabasePath, error: &rusqlite::Error) -> BackendError {
    BackendError::Invalid(format!(
        "session database at \"{}\": {error}",
        path.display()
    ))
}

/// Flags of every connection: no link is followed to the database file.
fn base_flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_EXRESCODE
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
}

impl Database {
    fn connect(path: &DatabasePath, conn: Connection, read_only: Option<String>) -> Self {
        Self {
            conn,
            path: path.clone(),
            identity: String::new(),
            validated_cookie: None,
            read_only,
            pending_journal: None,
            tail_cache: TailCache::default(),
        }
    }

    fn connect_read_write(
        path: &DatabasePath,
        busy_timeout: Duration,
    ) -> Result<Self, BackendError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | base_flags();
        let conn = match path {
            DatabasePath::Memory => Connection::open_in_memory_with_flags(flags),
            DatabasePath::File(file) => Connection::open_with_flags(file, flags),
        }
        .map_err(|error| sqlite(path, &error))?;
        conn.busy_timeout(busy_timeout)
            .map_err(|error| sqlite(path, &error))?;
        let database = Self::connect(path, conn, None);
        database.secure_connection()?;
        Ok(database)
    }

    /// Opens `path` (which must exist when it is a file) for writing: validates it, or
    /// initializes it when it is empty.
    pub fn open(
        path: &DatabasePath,
        journal: JournalMode,
        busy_timeout: Duration,
    ) -> Result<Self, BackendError> {
        let deadline = Instant::now() + busy_timeout;
        let mut database = Self::connect_read_write(path, busy_timeout)?;
        database.claim_schema()?;
        database.select_journal(journal, deadline)?;
        database.require_full_sync()?;
        database.identity = database.identity()?;
        Ok(database)
    }

    /// Opens a database file this process may write, for reading: it is validated but never
    /// initialized, and its journal mode is selected only before the first write.
    /// `Ok(None)` for an empty database, which holds no sessions.
    pub fn open_for_reading(
        file: &std::path::Path,
        journal: JournalMode,
        busy_timeout: Duration,
    ) -> Result<Option<Self>, BackendError> {
        let path = DatabasePath::File(file.to_path_buf());
        let mut database = Self::connect_read_write(&path, busy_timeout)?;
        if database.check_in_read_transaction()? == Claim::Empty {
            return Ok(None);
        }
        database.require_full_sync()?;
        database.identity = database.identity()?;
        database.pending_journal = Some((journal, busy_timeout));
        Ok(Some(database))
    }

    /// Opens a database file this process must not write (`refusal` says why), for reading
    /// only; `Ok(None)` for an empty database.
    ///
    /// SQLite would open such a file read-only on its own, but could then create a `-shm` file
    /// with the database's read-only mode, which keeps every later writer out even after a
    /// `chmod`. So it is opened `immutable`: no locks, no lock files. That is only sound when
    /// no write-ahead log is waiting to be merged, so a non-empty `-wal` is refused.
    pub fn open_read_only(
        file: &std::path::Path,
        refusal: String,
    ) -> Result<Option<Self>, BackendError> {
        let path = DatabasePath::File(file.to_path_buf());
        if let Some(wal) = crate::path_checks::pending_wal(file) {
            return Err(BackendError::Invalid(format!(
                "{refusal}; its write-ahead log {} still holds writes that only a writer can \
                 merge",
                wal.display()
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | base_flags();
        let conn = Connection::open_with_flags(immutable_uri(file), flags)
            .map_err(|error| sqlite(&path, &error))?;
        let mut database = Self::connect(&path, conn, Some(refusal));
        database.secure_connection()?;
        if database.check_in_read_transaction()? == Claim::Empty {
            return Ok(None);
        }
        database.identity = database.identity()?;
        Ok(Some(database))
    }

    /// The ownership check in a read transaction: nothing is written, an empty database is
    /// reported as such.
    fn check_in_read_transaction(&mut self) -> Result<Claim, BackendError> {
        self.exec(sql::BEGIN)?;
        let checked = self.check_ownership();
        let _ = self.conn.execute_batch(sql::ROLLBACK);
        checked
    }

    /// Why this connection must not write, when it was opened for reading only.
    pub fn refusal(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// Makes the connection ready for a write: refuses one opened for reading only, and
    /// selects the journal mode a reading open left for later.
    pub fn ready_for_writes(&mut self) -> Result<(), BackendError> {
        if let Some(refusal) = &self.read_only {
            return Err(BackendError::Invalid(refusal.clone()));
        }
        if let Some((journal, busy_timeout)) = self.pending_journal {
            self.select_journal(journal, Instant::now() + busy_timeout)?;
            self.pending_journal = None;
        }
        Ok(())
    }

    /// `PRAGMA data_version`.
    pub(crate) fn data_version(&self) -> Result<i64, BackendError> {
        self.int(sql::DATA_VERSION)
    }

    pub(crate) fn fail(&self, error: &rusqlite::Error) -> BackendError {
        sqlite(&self.path, error)
    }

    fn int(&self, pragma: &str) -> Result<i64, BackendError> {
        self.conn
            .prepare_cached(pragma)
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .map_err(|error| self.fail(&error))
    }

    /// Runs one statement, kept prepared (`BEGIN`, `COMMIT`: every transaction runs them).
    pub(crate) fn run(&self, statement: &str) -> Result<(), BackendError> {
        self.conn
            .prepare_cached(statement)
            .and_then(|mut statement| statement.execute([]))
            .map(drop)
            .map_err(|error| self.fail(&error))
    }

    pub(crate) fn exec(&self, statement: &str) -> Result<(), BackendError> {
        self.conn
            .execute_batch(statement)
            .map_err(|error| self.fail(&error))
    }

    fn setting(&self, set: &str, get: &str, expected: i64, name: &str) -> Result<(), BackendError> {
        self.exec(set)?;
        let actual = self.int(get)?;
        if actual != expected {
            return Err(BackendError::Invalid(format!(
                "session database at \"{}\" retained {name}={actual}, expected {expected}",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn secure_connection(&self) -> Result<(), BackendError> {
        self.setting(
            sql::TRUSTED_SCHEMA_OFF,
            sql::TRUSTED_SCHEMA,
            0,
            "trusted_schema",
        )?;
        self.exec(sql::MMAP_OFF)?;
        if matches!(self.path, DatabasePath::File(_)) {
            self.setting(sql::MMAP_OFF, sql::MMAP_SIZE, 0, "mmap_size")?;
        }
        self.exec(sql::FOREIGN_KEYS_ON)
    }

    /// Inside one `BEGIN IMMEDIATE`: initialize an empty database, or check that this one is
    /// ours. Nothing is written to a database that fails the check.
    fn claim_schema(&mut self) -> Result<(), BackendError> {
        self.exec(sql::BEGIN_IMMEDIATE)?;
        let outcome = match self.check_ownership() {
            Ok(Claim::Ours) => Ok(()),
            Ok(Claim::Empty) => self
                .initialize()
                .and_then(|()| self.require_schema_objects()),
            Err(error) => Err(error),
        };
        match outcome {
            Ok(()) => self.exec(sql::COMMIT),
            Err(error) => {
                let _ = self.conn.execute_batch(sql::ROLLBACK);
                Err(error)
            }
        }
    }

    /// The ownership checks, inside the caller's transaction: a dsh schema-17 database with
    /// dsh's tables, or an empty one; anything else is refused.
    fn check_ownership(&mut self) -> Result<Claim, BackendError> {
        let version = self.int(sql::USER_VERSION)?;
        let application = self.int(sql::APPLICATION_ID_PRAGMA)?;
        let objects = self.int(sql::USER_OBJECT_COUNT)?;
        let path = self.path.display();
        if version == 0 && (application != 0 || objects > 0) {
            return Err(BackendError::FormatUnsupported(format!(
                "session database at \"{path}\" has an unversioned schema or application \
                 identity; it is not a dsh session database, so it is left untouched — point \
                 the session-persistence-sqlite row's `path` at another file"
            )));
        }
        if version != 0 && version != sql::SCHEMA_VERSION {
            return Err(BackendError::FormatUnsupported(format!(
                "session database at \"{path}\" has schema version {version}, incompatible with \
                 this build ({}); session databases are never migrated, so it is left untouched \
                 — open it with the dsh that wrote it, or use another `path`",
                sql::SCHEMA_VERSION
            )));
        }
        if version != 0 && application != sql::APPLICATION_ID {
            return Err(BackendError::FormatUnsupported(format!(
                "session database at \"{path}\" has application id {application}, expected {}; \
                 it belongs to another application, so it is left untouched — use another `path`",
                sql::APPLICATION_ID
            )));
        }
        if version == 0 {
            return Ok(Claim::Empty);
        }
        self.require_schema_objects()?;
        Ok(Claim::Ours)
    }

    fn initialize(&self) -> Result<(), BackendError> {
        self.exec(sql::SCHEMA)?;
        self.conn
            .execute(sql::INSERT_STORE_ID, [random_uuid()])
            .map_err(|error| self.fail(&error))?;
        self.exec(sql::SET_APPLICATION_ID)?;
        self.exec(sql::SET_USER_VERSION)
    }

    /// The tables must be exactly dsh's (same names, same SQL up to whitespace).
    fn require_schema_objects(&mut self) -> Result<(), BackendError> {
        let cookie = self.int(sql::SCHEMA_COOKIE)?;
        let found = schema_objects(&self.conn).map_err(|error| self.fail(&error))?;
        if found != *canonical_schema()? {
            return Err(BackendError::FormatUnsupported(format!(
                "session database at \"{}\" does not contain the required schema objects (its \
                 tables differ from dsh's schema {}); it is left untouched",
                self.path.display(),
                sql::SCHEMA_VERSION
            )));
        }
        self.validated_cookie = Some(cookie);
        Ok(())
    }

    /// Re-checks ownership inside a write transaction, in case another process changed the
    /// database since it was opened. The table comparison reruns only when the schema cookie
    /// moved.
    pub fn check_before_mutation(&mut self) -> Result<(), BackendError> {
        let application = self.int(sql::APPLICATION_ID_PRAGMA)?;
        if application != sql::APPLICATION_ID {
            return Err(BackendError::FormatUnsupported(format!(
                "session database application id changed before mutation (expected {}, got \
                 {application})",
                sql::APPLICATION_ID
            )));
        }
        let version = self.int(sql::USER_VERSION)?;
        if version != sql::SCHEMA_VERSION {
            return Err(BackendError::FormatUnsupported(format!(
                "session database schema changed before mutation (expected {}, got {version})",
                sql::SCHEMA_VERSION
            )));
        }
        let cookie = self.int(sql::SCHEMA_COOKIE)?;
        if self.validated_cookie != Some(cookie) {
            self.require_schema_objects()?;
        }
        Ok(())
    }

    fn select_journal(&self, journal: JournalMode, deadline: Instant) -> Result<(), BackendError> {
        let selected: String = loop {
            match self
                .conn
                .query_row(journal.pragma(), [], |row| row.get::<_, String>(0))
            {
                Ok(mode) => break mode,
                Err(error)
                    if error.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(JOURNAL_BUSY_RETRY);
                }
                Err(error) => return Err(self.fail(&error)),
            }
        };
        let expected = match self.path {
            DatabasePath::Memory => "memory",
            DatabasePath::File(_) => journal.name(),
        };
        if !selected.eq_ignore_ascii_case(expected) {
            return Err(BackendError::Invalid(format!(
                "session database at \"{}\" selected journal mode {selected}, expected {expected}",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn require_full_sync(&self) -> Result<(), BackendError> {
        self.setting(sql::SYNCHRONOUS_FULL, sql::SYNCHRONOUS, 2, "synchronous")
    }

    /// `file:<dev>:<inode>:<birth ns>:store:<store id>` (or `memory:store:<id>`).
    fn identity(&self) -> Result<String, BackendError> {
        let store_id: Option<String> = self
            .conn
            .query_row(sql::SELECT_STORE_ID, [], |row| row.get(0))
            .optional()
            .ok()
            .flatten();
        let Some(store_id) = store_id.filter(|id| is_uuid(id)) else {
            return Err(BackendError::Corrupt(format!(
                "session database at \"{}\" has no valid store identity",
                self.path.display()
            )));
        };
        match &self.path {
            DatabasePath::Memory => Ok(format!("memory:store:{store_id}")),
            DatabasePath::File(file) => {
                use std::os::unix::fs::MetadataExt;
                let meta = std::fs::metadata(file).map_err(|source| BackendError::Io {
                    action: "inspecting",
                    path: file.clone(),
                    source,
                })?;
                let born = meta
                    .created()
                    .ok()
                    .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |since| since.as_nanos());
                Ok(format!(
                    "file:{}:{}:{born}:store:{store_id}",
                    meta.dev(),
                    meta.ino()
                ))
            }
        }
    }
}

/// A `file:` URI opening `file` immutable (`%`, `?` and `#` escaped).
fn immutable_uri(file: &std::path::Path) -> String {
    let mut uri = String::from("file:");
    for c in file.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            other => uri.push(other),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut statement = conn.prepare(sql::SCHEMA_OBJECTS)?;
    let rows = statement.query_map([], |row| {
        let text: Option<String> = row.get(3)?;
        Ok((
            row.get(0)?,
            row.get(1)?,
            row.get(2)?,
            collapse_whitespace(text.as_deref().unwrap_or_default()),
        ))
    })?;
    rows.collect()
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The schema objects of a database built from [`sql::SCHEMA`], computed once.
fn canonical_schema() -> Result<&'static Vec<SchemaObject>, BackendError> {
    static CANONICAL: OnceLock<Result<Vec<SchemaObject>, String>> = OnceLock::new();
    CANONICAL
        .get_or_init(|| {
            let build = || -> rusqlite::Result<Vec<SchemaObject>> {
                let conn = Connection::open_in_memory()?;
                conn.execute_batch(sql::FOREIGN_KEYS_ON)?;
                conn.execute_batch(sql::SCHEMA)?;
                schema_objects(&conn)
            };
            build().map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|error| {
            BackendError::Invalid(format!("cannot build the reference schema: {error}"))
        })
}

/// Whether `text` is a UUID (any version 1 to 8, RFC variant), as dsh checks store ids.
pub(crate) fn is_uuid(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 36 {
        return false;
    }
    bytes.iter().enumerate().all(|(index, byte)| match index {
        8 | 13 | 18 | 23 => *byte == b'-',
        14 => (b'1'..=b'8').contains(byte),
        19 => matches!(byte.to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'),
        _ => byte.is_ascii_hexdigit(),
    })
}

#[cfg(test)]
mod tests;
