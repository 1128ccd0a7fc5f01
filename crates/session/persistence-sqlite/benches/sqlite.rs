//! SQLite store benchmarks on the realistic 1,000-turn session (33,007 events), the JSONL
//! benchmarks' workload:
//!
//! - `sqlite/load`: a fresh store (new backend and coordinator, as a new process) opens the
//!   database and loads and validates the whole session (dsh 0.1.1: 817 ms; target under
//!   80 ms);
//! - `sqlite/append`: 1,000 one-turn batches appended through the coordinator into a fresh WAL
//!   database with `synchronous=FULL`, one transaction each (dsh 0.1.1: 3.8 s), next to bare
//!   rusqlite inserting the same physical rows the store wrote, grouped the same way, one
//!   `BEGIN IMMEDIATE` … `COMMIT` with a revision `UPDATE` per batch (target: within 1.3x of
//!   it);
//! - the database's size once the store is closed (dsh 0.1.1: 18.4 MB; target no larger),
//!   printed.
//!
//! Appends run on a two-worker multi-threaded runtime, as `dsh run` does: there the store
//! writes on the calling worker instead of the blocking pool.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::print_stderr,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_sqlite::{DatabasePath, JournalMode, SqliteBackend, SqliteOptions};
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::turns::{PREAMBLE_EVENTS, TURN_EVENTS, long_session_batches};
use rusqlite::Connection;
use rusqlite::types::Value;

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TURNS: u64 = 1000;
const EVENTS: usize = 33_007;
const SESSION: &str = "long";
const DATABASE: &str = "sessions.sqlite";

/// dsh 0.1's schema 17, the text the store creates.
const SCHEMA: &str = include_str!("../src/sql/schema.sql");

/// Alternating rounds of ours and the baseline behind the reported ratio.
const RATIO_ROUNDS: usize = 7;

fn store(path: &Path) -> Arc<Coordinator<SqliteBackend>> {
    let backend = SqliteBackend::new(SqliteOptions {
        path: DatabasePath::File(path.to_path_buf()),
        journal_mode: JournalMode::Wal,
        busy_timeout: Duration::from_secs(5),
    })
    .unwrap();
    Coordinator::new(backend, CoordinatorOptions::default())
}

/// The runtime of `dsh run`.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn header() -> SessionHeader {
    let mut header = SessionHeader::new(SESSION, 1_795_976_398_536).with_cwd("/srv/dsh-demo");
    header.delegation_depth = Some(0);
    header
}

/// The session split as a live session flushes it: the preamble, then one batch per turn.
fn batches() -> (Vec<SessionEvent>, Vec<Vec<SessionEvent>>) {
    long_session_batches(TURNS)
}

fn scratch_dir() -> tempfile::TempDir {
    let root = env!("CARGO_TARGET_TMPDIR");
    std::fs::create_dir_all(root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}

/// Creates the session in a fresh database at `path` and appends the preamble (which opens
/// and initializes the database), then the turn batches; returns the time of the turn
/// appends. The store is closed afterwards (so the WAL is checkpointed), outside the timing.
fn store_round(
    runtime: &tokio::runtime::Runtime,
    path: &Path,
    preamble: &[SessionEvent],
    turns: &[Vec<SessionEvent>],
) -> Duration {
    let store = store(path);
    let turns = turns.to_vec();
    runtime.block_on(async {
        store.create(header()).await.unwrap();
        store.append(SESSION, preamble.to_vec()).await.unwrap();
        let started = Instant::now();
        for batch in turns {
            store.append(SESSION, batch).await.unwrap();
        }
        let elapsed = started.elapsed();
        store.close().await.unwrap();
        elapsed
    })
}

/// What the store wrote, read back for the baseline to insert as is.
struct WrittenRows {
    /// The `persistence_state` row.
    store_id: String,
    /// The `sessions` row, every column.
    session: Vec<Value>,
    /// The `events` rows of each batch (preamble first), every column in insert order.
    batches: Vec<Vec<Vec<Value>>>,
}

impl WrittenRows {
    fn read(path: &Path) -> Self {
        let conn = Connection::open(path).unwrap();
        let store_id = conn
            .query_row("SELECT store_id FROM persistence_state", [], |row| {
                row.get(0)
            })
            .unwrap();
        let session = conn
            .query_row(
                "SELECT id, version, created_at, cwd, parent_session, seed_length, origin, \
                 delegation_depth, agent_preset, incarnation, revision FROM sessions",
                [],
                |row| (0..11).map(|index| row.get::<_, Value>(index)).collect(),
            )
            .unwrap();
        let mut statement = conn
            .prepare(
                "SELECT session_id, seq, type, time, data, source_event_seqs, surface_op, \
                 ignorable FROM events ORDER BY seq",
            )
            .unwrap();
        let rows: Vec<(i64, Vec<Value>)> = statement
            .query_map([], |row| {
                let columns = (0..8).map(|index| row.get::<_, Value>(index));
                Ok((row.get(1)?, columns.collect::<rusqlite::Result<_>>()?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        // Batch 0 is the preamble (seqs 0..7); batch k holds seqs 7 + 33(k-1) .. 7 + 33k.
        let mut batches = vec![Vec::new(); 1 + TURNS as usize];
        for (seq, row) in rows {
            let seq = usize::try_from(seq).unwrap();
            let batch = if seq < PREAMBLE_EVENTS {
                0
            } else {
                1 + (seq - PREAMBLE_EVENTS) / TURN_EVENTS
            };
            batches[batch].push(row);
        }
        assert!(batches.iter().all(|batch| !batch.is_empty()));
        Self {
            store_id,
            session,
            batches,
        }
    }

    fn row_count(&self) -> usize {
        self.batches.iter().map(Vec::len).sum()
    }
}

const INSERT_EVENT: &str = "INSERT INTO events \
     (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// Bare rusqlite on a fresh database of the same schema and settings: the schema and the
/// preamble batch first (untimed, like the store's first append), then one `BEGIN IMMEDIATE`
/// transaction per turn batch inserting the stored rows and bumping the revision; returns the
/// time of the turn batches.
fn baseline_round(path: &Path, rows: &WrittenRows) -> Duration {
    let conn = Connection::open(path).unwrap();
    // The store's connection settings that bear on writing: WAL, full sync, and the schema's
    // foreign key enforced.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
        .unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute(
        "INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?1)",
        [&rows.store_id],
    )
    .unwrap();
    conn.execute_batch("PRAGMA application_id = 1146308688; PRAGMA user_version = 17; COMMIT")
        .unwrap();

    let mut insert = conn.prepare_cached(INSERT_EVENT).unwrap();
    let mut bump = conn
        .prepare_cached("UPDATE sessions SET revision = revision + 1 WHERE id = ?1")
        .unwrap();
    let mut session = rows.session.clone();
    session[10] = Value::Integer(0);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn.execute(
        "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length, \
         origin, delegation_depth, agent_preset, incarnation, revision) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        rusqlite::params_from_iter(&session),
    )
    .unwrap();
    for row in &rows.batches[0] {
        insert.execute(rusqlite::params_from_iter(row)).unwrap();
    }
    bump.execute([SESSION]).unwrap();
    conn.execute_batch("COMMIT").unwrap();

    let started = Instant::now();
    for batch in &rows.batches[1..] {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        for row in batch {
            insert.execute(rusqlite::params_from_iter(row)).unwrap();
        }
        bump.execute([SESSION]).unwrap();
        conn.execute_batch("COMMIT").unwrap();
    }
    let elapsed = started.elapsed();
    drop((insert, bump));
    conn.close().unwrap();
    elapsed
}

fn file_size(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|meta| meta.len())
}

fn wal_path(path: &Path) -> PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Prints the size of the database the store wrote (closed, so checkpointed) and what is in
/// it.
fn report_size(path: &Path) {
    let size = file_size(path).unwrap();
    let wal = file_size(&wal_path(path)).map_or_else(
        || "no -wal file".to_owned(),
        |bytes| format!("-wal {:.2} MB", megabytes(bytes)),
    );
    let conn = Connection::open(path).unwrap();
    let (rows, blobs, data): (i64, i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), SUM(typeof(data) = 'blob'), SUM(length(CAST(data AS BLOB))) \
             FROM events",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    let (pages, page_size, free): (i64, i64, i64) = conn
        .query_row(
            "SELECT * FROM pragma_page_count, pragma_page_size, pragma_freelist_count",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    drop(conn);
    eprintln!(
        "sqlite/size: {:.2} MB after 1,000 turn appends and close ({wal}); dsh 0.1.1: 18.4 MB \
         (target: no larger) — {rows} rows for {EVENTS} events ({blobs} zstd), {:.2} MB of \
         data, {pages} pages of {page_size} B ({free} free)",
        megabytes(size),
        megabytes(u64::try_from(data).unwrap()),
    );
}

fn load(c: &mut Criterion) {
    let dir = scratch_dir();
    let path = dir.path().join(DATABASE);
    let (preamble, turns) = batches();
    let runtime = runtime();
    store_round(&runtime, &path, &preamble, &turns);
    let mut group = c.benchmark_group("sqlite");
    group.sample_size(20);
    group.bench_function("load", |b| {
        // Freeing the events afterwards is not part of loading them.
        b.iter_with_large_drop(|| {
            let fresh = store(&path);
            let inspection = runtime.block_on(fresh.load(SESSION)).unwrap();
            assert_eq!(inspection.events.len(), EVENTS);
            black_box(inspection)
        });
    });
    group.finish();
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn append(c: &mut Criterion) {
    let (preamble, turns) = batches();
    let runtime = runtime();
    let written = scratch_dir();
    let written_path = written.path().join(DATABASE);
    store_round(&runtime, &written_path, &preamble, &turns);
    report_size(&written_path);
    let rows = WrittenRows::read(&written_path);
    drop(written);

    let ours_round = || {
        let dir = scratch_dir();
        store_round(&runtime, &dir.path().join(DATABASE), &preamble, &turns)
    };
    let baseline = || {
        let dir = scratch_dir();
        let path = dir.path().join(DATABASE);
        let elapsed = baseline_round(&path, &rows);
        let stored: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM events", [], |row| row.get(0))
            .unwrap();
        assert_eq!(usize::try_from(stored).unwrap(), rows.row_count());
        elapsed
    };

    // fsync times drift a lot on shared machines, so the ratio is taken from rounds that
    // alternate the two, each pair under the same conditions.
    let mut ours = Vec::new();
    let mut bare = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..RATIO_ROUNDS {
        let (store_time, bare_time) = (ours_round(), baseline());
        ours.push(store_time.as_secs_f64());
        bare.push(bare_time.as_secs_f64());
        ratios.push(store_time.as_secs_f64() / bare_time.as_secs_f64());
    }
    eprintln!(
        "sqlite/append (1,000 turn batches, WAL, synchronous=FULL), median of {RATIO_ROUNDS} \
         alternating rounds: store {:.0} ms, bare rusqlite {:.0} ms ({} rows); store / bare \
         {:.2}x (target <= 1.3x; dsh 0.1.1: 3.8 s)",
        median(&mut ours) * 1e3,
        median(&mut bare) * 1e3,
        rows.row_count(),
        median(&mut ratios),
    );

    let mut group = c.benchmark_group("sqlite/append");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.bench_function("store", |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| ours_round()).sum());
    });
    group.bench_function("bare_rusqlite_baseline", |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| baseline()).sum());
    });
    group.finish();
}

criterion_group!(benches, load, append);
criterion_main!(benches);
