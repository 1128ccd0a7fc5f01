//! The store's operations on one connection: each read is one read transaction, each write
//! one `BEGIN IMMEDIATE` transaction that re-checks schema ownership first.
//!
//! The database opens lazily. A read of a database file that does not exist yet finds no
//! sessions and creates nothing; the first write creates the file (`0600`) and the schema.

use std::sync::Arc;
use std::time::Duration;

use dsh_persistence::{
    BackendError, PersistenceError, PersistenceSnapshot, SnapshotListing, StoredLog,
    UnreadableSession,
};
use dsh_protocol::ids::random_uuid;
use dsh_session::{SessionEvent, SessionHeader};
use rusqlite::{OptionalExtension, Params};

use crate::packing::rows_for_batch;
use crate::path_checks::{self, DatabasePath};
use crate::rows::{BoundRow, EventRow};
use crate::scan::{Scanned, scan_rows};
use crate::schema::{Database, JournalMode};
use crate::session_row::{SessionRow, upsert_params};
use crate::sql;

/// Where the store is and how it connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// The database file, or memory.
    pub path: DatabasePath,
    /// The journal mode (WAL by default).
    pub journal_mode: JournalMode,
    /// How long to wait for another connection's lock.
    pub busy_timeout: Duration,
}

/// The store: its options and, once opened, its connection.
pub(crate) struct Store {
    options: SqliteOptions,
    database: Option<Database>,
}

type Result<T> = std::result::Result<T, BackendError>;

impl Store {
    /// A store over `options`; checks an existing path's ownership now, opens nothing.
    pub fn new(options: SqliteOptions) -> Result<Self> {
        if let DatabasePath::File(path) = &options.path {
            path_checks::check_existing(path)?;
        }
        Ok(Self {
            options,
            database: None,
        })
    }

    /// The options.
    pub fn options(&self) -> &SqliteOptions {
        &self.options
    }

    /// The open database; `None` for a read of a database file that is missing, empty (zero
    /// bytes) or holds no schema yet: it holds no sessions, and a read creates nothing.
    fn database(&mut self, for_write: bool) -> Result<Option<&mut Database>> {
        if self.database.is_none() {
            self.database = self.open(for_write)?;
        }
        Ok(self.database.as_mut())
    }

    fn open(&self, for_write: bool) -> Result<Option<Database>> {
        let SqliteOptions {
            path,
            journal_mode,
            busy_timeout,
        } = &self.options;
        let DatabasePath::File(file) = path else {
            return Database::open(path, *journal_mode, *busy_timeout).map(Some);
        };
        let found = path_checks::check_existing(file)?;
        let refusal = path_checks::write_refusal(file)?;
        if for_write {
            if let Some(refusal) = refusal {
                return Err(BackendError::Invalid(refusal));
            }
            path_checks::prepare_for_write(file)?;
            // Warn where it matters: when sessions are about to be written into it.
            path_checks::warn_if_shared(file);
            return Database::open(path, *journal_mode, *busy_timeout).map(Some);
        }
        match found {
            None => Ok(None),
            Some(found) if found.len == 0 => Ok(None),
            Some(_) => match refusal {
                Some(refusal) => Database::open_read_only(file, refusal),
                None => Database::open_for_reading(file, *journal_mode, *busy_timeout),
            },
        }
    }

    fn writable(&mut self) -> Result<&mut Database> {
        let path = self.options.path.display();
        let db = self.database(true)?.ok_or_else(|| {
            BackendError::Invalid(format!(
                "session database at \"{path}\" could not be opened"
            ))
        })?;
        db.ready_for_writes()?;
        Ok(db)
    }

    /// Refuses when the database must not be written (see [`path_checks::write_refusal`]).
    pub fn check_writable(&self) -> Result<()> {
        if let Some(db) = &self.database {
            return db.refusal().map_or(Ok(()), |refusal| {
                Err(BackendError::Invalid(refusal.to_owned()))
            });
        }
        match &self.options.path {
            DatabasePath::Memory => Ok(()),
            DatabasePath::File(file) => match path_checks::write_refusal(file)? {
                Some(refusal) => Err(BackendError::Invalid(refusal)),
                None => Ok(()),
            },
        }
    }

    /// Closes the connection (SQLite checkpoints a WAL when its last connection closes).
    pub fn close(&mut self) {
        self.database = None;
    }

    /// The stored log of `id`.
    pub fn load(&mut self, id: &str) -> Result<Option<StoredLog<u64>>> {
        let Some(db) = self.database(false)? else {
            return Ok(None);
        };
        let read = in_transaction(db, sql::BEGIN, |db| {
            let Some(row) = session_row(db, id)? else {
                return Ok(None);
            };
            let rows = event_rows(db, sql::SELECT_EVENTS, (id,))?;
            Ok(Some((row, rows)))
        })?;
        let Some((row, rows)) = read else {
            return Ok(None);
        };
        let header = header_of(db, &row)?;
        let Scanned { events, torn_from } = scan(db, &rows, 0)?;
        Ok(Some(StoredLog {
            header,
            events,
            revision: row.revision(&db.identity),
            torn: torn_from,
        }))
    }

    /// The stored events of `id` from `from_seq` on, reading only the rows that can hold them.
    pub fn load_from(
        &mut self,
        id: &str,
        from_seq: u64,
    ) -> Result<Option<(SessionHeader, Vec<SessionEvent>)>> {
        let Some(db) = self.database(false)? else {
            return Ok(None);
        };
        let read = in_transaction(db, sql::BEGIN, |db| {
            let Some(row) = session_row(db, id)? else {
                return Ok(None);
            };
            let (base, rows) = physical_span_from(db, id, from_seq)?;
            Ok(Some((row, base, rows)))
        })?;
        let Some((row, base, rows)) = read else {
            return Ok(None);
        };
        let header = header_of(db, &row)?;
        let mut events = scan(db, &rows, base)?.events;
        events.retain(|event| event.seq >= from_seq);
        Ok(Some((header, events)))
    }

    /// The revision of `id`.
    pub fn revision(&mut self, id: &str) -> Result<Option<String>> {
        let Some(db) = self.database(false)? else {
            return Ok(None);
        };
        Ok(session_row(db, id)?.map(|row| row.revision(&db.identity)))
    }

    /// Every session row with its header and revision, and each row that cannot be read; a
    /// row of another format version is listed (loading it is refused).
    pub fn list(&mut self) -> Result<SnapshotListing> {
        let Some(db) = self.database(false)? else {
            return Ok(SnapshotListing::default());
        };
        let mut statement = db
            .conn
            .prepare_cached(sql::SELECT_SESSIONS)
            .map_err(|error| db.fail(&error))?;
        let rows = statement
            .query_map([], |row| Ok(SessionRow::read(row)))
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(|error| db.fail(&error))?;
        drop(statement);
        let mut snapshots = Vec::with_capacity(rows.len());
        let mut unreadable = Vec::new();
        for row in rows {
            let row = match row {
                Ok(row) => row,
                Err((id, reason)) => {
                    let error = bad_session_row(db, &id, &reason);
                    let (id, error) = if id.is_empty() {
                        (None, error.to_string())
                    } else {
                        let error = PersistenceError::of_session(&id, error).to_string();
                        (Some(id), error)
                    };
                    unreadable.push(UnreadableSession {
                        id,
                        path: match &db.path {
                            DatabasePath::File(file) => Some(file.clone()),
                            DatabasePath::Memory => None,
                        },
                        error,
                    });
                    continue;
                }
            };
            match row.listed_header() {
                Some(header) => snapshots.push(PersistenceSnapshot {
                    header,
                    revision: row.revision(&db.identity),
                }),
                None => tracing::warn!(
                    "session row \"{}\" in {} has version {}; it is not listed",
                    row.id,
                    db.path.display(),
                    row.version
                ),
            }
        }
        Ok(SnapshotListing {
            snapshots,
            unreadable,
        })
    }

    /// Appends a contiguous batch in one transaction, after the stale-writer check.
    pub fn append(
        &mut self,
        header: &SessionHeader,
        events: &[Arc<SessionEvent>],
        materialized: bool,
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let id = header.id.as_str();
        let rows = rows_for_batch(events).map_err(BackendError::Invalid)?;
        let db = self.writable()?;
        let written = in_transaction(db, sql::BEGIN_IMMEDIATE, |db| {
            let data_version = db.data_version()?;
            let expected = match db.tail_cache.next_seq(id, data_version) {
                Some(next) => next,
                None => {
                    db.check_before_mutation()?;
                    next_seq(db, id)?
                }
            };
            let first = events.first().map_or(expected, |event| event.seq);
            if first != expected {
                return Err(BackendError::Invalid(format!(
                    "session {id} append starts at seq {first}, stored next seq is {expected}"
                )));
            }
            if !materialized {
                db.conn
                    .prepare_cached(sql::UPSERT_SESSION)
                    .and_then(|mut upsert| {
                        upsert.execute(rusqlite::params_from_iter(upsert_params(
                            header,
                            &random_uuid(),
                        )))
                    })
                    .map_err(|error| db.fail(&error))?;
            }
            insert_rows(db, id, &rows)?;
            bump_revision(db, id)?;
            Ok(data_version)
        });
        match written {
            Ok(data_version) => {
                let next = events.last().map_or(0, |event| event.seq + 1);
                db.tail_cache.remember(id, data_version, next);
                Ok(())
            }
            Err(error) => {
                db.tail_cache.clear();
                Err(error)
            }
        }
    }

    /// Deletes the torn tail from `torn` (if any) and appends `closers`, refusing a stale
    /// repair so a newer writer's rows are never deleted.
    pub fn repair(
        &mut self,
        header: &SessionHeader,
        torn: Option<u64>,
        closers: &[Arc<SessionEvent>],
    ) -> Result<()> {
        if torn.is_none() && closers.is_empty() {
            return Ok(());
        }
        let id = header.id.as_str();
        let db = self.writable()?;
        db.tail_cache.clear();
        in_transaction(db, sql::BEGIN_IMMEDIATE, |db| {
            db.check_before_mutation()?;
            if session_row(db, id)?.is_none() {
                return Err(BackendError::Invalid(format!(
                    "session {id} metadata row is missing"
                )));
            }
            let rows = event_rows(db, sql::SELECT_EVENTS, (id,))?;
            let current = scan(db, &rows, 0)?;
            match (torn, current.torn_from) {
                (Some(marker), Some(now)) if marker == now => {
                    db.conn
                        .execute(sql::DELETE_EVENTS_FROM, (id, to_i64(marker)))
                        .map_err(|error| db.fail(&error))?;
                }
                (Some(marker), _) => {
                    return Err(BackendError::Invalid(format!(
                        "session {id} repair is stale: physical tail no longer starts at seq \
                         {marker}"
                    )));
                }
                (None, Some(now)) => {
                    return Err(BackendError::Invalid(format!(
                        "session {id} repair omitted current torn tail at seq {now}"
                    )));
                }
                (None, None) => {}
            }
            if let Some(first) = closers.first() {
                let expected = current.events.last().map_or(0, |event| event.seq + 1);
                if first.seq != expected {
                    return Err(BackendError::Invalid(format!(
                        "session {id} repair is stale: closer starts at seq {}, stored next seq \
                         is {expected}",
                        first.seq
                    )));
                }
                let rows: Vec<BoundRow<'_>> = closers
                    .iter()
                    .map(|closer| BoundRow::scalar(closer))
                    .collect();
                insert_rows(db, id, &rows)?;
            }
            bump_revision(db, id)
        })
    }
}

fn to_i64(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// Runs `work` between `begin` and `COMMIT`, rolling back on any error.
fn in_transaction<T>(
    db: &mut Database,
    begin: &str,
    work: impl FnOnce(&mut Database) -> Result<T>,
) -> Result<T> {
    db.run(begin)?;
    match work(db) {
        Ok(value) => match db.run(sql::COMMIT) {
            Ok(()) => Ok(value),
            Err(error) => {
                let _ = db.conn.execute_batch(sql::ROLLBACK);
                Err(error)
            }
        },
        Err(error) => {
            if let Err(rollback) = db.conn.execute_batch(sql::ROLLBACK) {
                return Err(BackendError::Invalid(format!(
                    "{error}; the rollback also failed: {rollback}"
                )));
            }
            Err(error)
        }
    }
}

fn bad_session_row(db: &Database, id: &str, reason: &str) -> BackendError {
    BackendError::Corrupt(format!(
        "session row \"{id}\" in {} is invalid: {reason}",
        db.path.display()
    ))
}

fn session_row(db: &Database, id: &str) -> Result<Option<SessionRow>> {
    let row = db
        .conn
        .prepare_cached(sql::SELECT_SESSION)
        .and_then(|mut statement| {
            statement
                .query_row((id,), |row| Ok(SessionRow::read(row)))
                .optional()
        })
        .map_err(|error| db.fail(&error))?;
    row.transpose()
        .map_err(|(_, reason)| bad_session_row(db, id, &reason))
}

fn header_of(db: &Database, row: &SessionRow) -> Result<SessionHeader> {
    row.header().map_err(|refusal| {
        BackendError::FormatUnsupported(format!("{refusal} (database: {})", db.path.display()))
    })
}

fn event_rows(db: &Database, query: &str, params: impl Params) -> Result<Vec<EventRow>> {
    let mut statement = db
        .conn
        .prepare_cached(query)
        .map_err(|error| db.fail(&error))?;
    let rows = statement
        .query_map(params, EventRow::read)
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(|error| db.fail(&error))?;
    rows.into_iter()
        .map(|row| {
            row.map_err(|reason| {
                BackendError::Corrupt(format!(
                    "corrupt session log: {reason} (database: {})",
                    db.path.display()
                ))
            })
        })
        .collect()
}

fn scan(db: &Database, rows: &[EventRow], base: u64) -> Result<Scanned> {
    scan_rows(rows, base).map_err(|error| {
        BackendError::Corrupt(format!("{error} (database: {})", db.path.display()))
    })
}

/// The rows that hold `from_seq` and everything after it, and the seq of the first one.
///
/// Rows never overlap, so only the row just before `from_seq` can reach it, and only if it is
/// packed. One that does not decode is included, so the scan judges it rather than skipping it.
fn physical_span_from(db: &Database, id: &str, from_seq: u64) -> Result<(u64, Vec<EventRow>)> {
    let before = event_rows(db, sql::SELECT_ROW_BEFORE, (id, to_i64(from_seq)))?;
    let mut base = from_seq;
    if let Some(row) = before.first().filter(|row| row.is_packed()) {
        let mut members = Vec::new();
        let reaches = match row.decode_into(&mut members) {
            Ok(()) => members.last().is_some_and(|last| last.seq >= from_seq),
            Err(_) => true,
        };
        if reaches {
            base = row.seq;
        }
    }
    let rows = event_rows(db, sql::SELECT_EVENTS_FROM, (id, to_i64(base)))?;
    Ok((base, rows))
}

/// The seq the next append must start at, from the last two rows only (rows never overlap,
/// so they hold the end of the log); a tail that does not read refuses the append.
fn next_seq(db: &Database, id: &str) -> Result<u64> {
    let mut tail = event_rows(db, sql::SELECT_TAIL_EVENTS, (id,))?;
    tail.reverse();
    let Some(base) = tail.first().map(|row| row.seq) else {
        return Ok(0);
    };
    let scanned = scan(db, &tail, base)?;
    if let Some(torn) = scanned.torn_from {
        return Err(BackendError::Invalid(format!(
            "session {id} has an invalid physical tail at seq {torn}"
        )));
    }
    Ok(scanned.events.last().map_or(0, |event| event.seq + 1))
}

fn insert_rows(db: &Database, id: &str, rows: &[BoundRow<'_>]) -> Result<()> {
    let mut insert = db
        .conn
        .prepare_cached(sql::INSERT_EVENT)
        .map_err(|error| db.fail(&error))?;
    for row in rows {
        row.insert(&mut insert, id)
            .map_err(|error| db.fail(&error))?;
    }
    Ok(())
}

fn bump_revision(db: &Database, id: &str) -> Result<()> {
    let changed = db
        .conn
        .prepare_cached(sql::BUMP_REVISION)
        .and_then(|mut bump| bump.execute((id,)))
        .map_err(|error| db.fail(&error))?;
    if changed != 1 {
        return Err(BackendError::Invalid(format!(
            "session {id} metadata row is missing"
        )));
    }
    Ok(())
}
