//! A killed writer loses nothing that a completed append reported durable.
//!
//! The writer is this test binary run again as a child process ([`child_writer`]): it appends
//! turn after turn and reports `durable <seq>` after each append returns. The parent kills it
//! with SIGKILL at a random moment, then reopens the database: every reported event is there,
//! the log is a prefix of the plan (SQLite transactions are atomic, so a batch is all there or
//! not at all), and the open turn is closed by crash closers.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_persistence_sqlite::JournalMode;
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::turns::LogBuilder;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use super::support::{store_with, texts};

/// Where the child writes; without it [`child_writer`] does nothing.
const PATH_VAR: &str = "DSH_SQLITE_KILL_TEST_PATH";
/// The journal mode the child uses (`wal` or `delete`).
const JOURNAL_VAR: &str = "DSH_SQLITE_KILL_TEST_JOURNAL";
const DURABLE: &str = "dsh-kill-child durable ";
const ID: &str = "killed-writer";
const TURNS: u64 = 40;

/// The plan: a preamble batch, then one batch per turn; every fifth turn carries a large
/// event, so that some appends take a while.
fn plan() -> Vec<Vec<SessionEvent>> {
    let mut log = LogBuilder::default();
    log.preamble();
    let mut bounds = vec![log.events().len()];
    for turn in 1..=TURNS {
        log.turn(turn);
        if turn % 5 == 0 {
            let noise: String = (0..200_000_u32)
                .map(|k| {
                    char::from(b'a' + u8::try_from(k.wrapping_mul(2_654_435_761) % 26).unwrap())
                })
                .collect();
            log.push("command/run", json!({"output": noise}));
        }
        bounds.push(log.events().len());
    }
    let events = log.finish();
    let mut batches = Vec::new();
    let mut start = 0;
    for end in bounds {
        batches.push(events[start..end].to_vec());
        start = end;
    }
    batches
}

fn header() -> SessionHeader {
    SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo")
}

fn journal(name: &str) -> JournalMode {
    if name == "delete" {
        JournalMode::Delete
    } else {
        JournalMode::Wal
    }
}

#[test]
fn a_killed_writer_loses_nothing_an_append_reported_durable() {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
        | 1;
    let mut killed_midway = 0;
    for round in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let mode = if round % 2 == 0 { "wal" } else { "delete" };
        let wait = Duration::from_micros(u64::from(seed % 60_000));
        let (reported, total) = kill_and_reopen(mode, wait);
        if reported < total {
            killed_midway += 1;
        }
    }
    assert!(killed_midway > 0, "no run was cut before the end");
}

/// Runs one child, kills it after `wait`, and checks the database; returns how many batches
/// were reported durable and how many were planned.
fn kill_and_reopen(mode: &str, wait: Duration) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.sqlite");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::kill::child_writer",
            "--ignored",
            "--nocapture",
        ])
        .env(PATH_VAR, &path)
        .env(JOURNAL_VAR, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| {
                line.strip_prefix(DURABLE)
                    .map(|seq| seq.parse::<u64>().unwrap())
            })
            .collect::<Vec<u64>>()
    });
    let started = Instant::now();
    while started.elapsed() < wait && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGKILL,
    );
    child.wait().unwrap();
    let reported = reader.join().unwrap();

    let plan = plan();
    let planned: Vec<SessionEvent> = plan.concat();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let persistence = store_with(&path, journal(mode));
        let stored = match persistence.read_from(ID, 0).await {
            Ok(events) => events,
            Err(PersistenceError::NotFound(_)) => Vec::new(),
            Err(error) => panic!("{mode}: {error}"),
        };
        let durable = reported.last().map_or(0, |seq| seq + 1);
        assert!(
            stored.len() as u64 >= durable,
            "{mode}: {} events stored, {durable} reported durable",
            stored.len()
        );
        assert_eq!(
            texts(&stored),
            texts(&planned[..stored.len()]),
            "{mode}: a prefix of the plan"
        );
        let mut batch_ends = plan.iter().scan(0, |end, batch| {
            *end += batch.len();
            Some(*end)
        });
        assert!(
            stored.is_empty() || batch_ends.any(|end| end == stored.len()),
            "{mode}: whole batches only, got {}",
            stored.len()
        );
        if !stored.is_empty() {
            let loaded = persistence.load(ID).await.unwrap();
            let mut balanced = stored.clone();
            balanced.extend(interrupted_turn_closers(&stored));
            assert_eq!(texts(&loaded.events), texts(&balanced));
        }
    });
    (reported.len(), plan.len())
}

/// The writer process; run by the kill test with `PATH_VAR` set.
#[test]
#[ignore = "the child process of the kill test; does nothing unless DSH_SQLITE_KILL_TEST_PATH is set"]
fn child_writer() {
    let Some(path) = std::env::var_os(PATH_VAR) else {
        return;
    };
    let mode = journal(&std::env::var(JOURNAL_VAR).unwrap_or_default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let persistence = store_with(Path::new(&path), mode);
        persistence.create(header()).await.unwrap();
        let mut stdout = std::io::stdout().lock();
        for batch in plan() {
            let last = batch.last().unwrap().seq;
            persistence.append(ID, batch).await.unwrap();
            writeln!(stdout, "{DURABLE}{last}").unwrap();
            stdout.flush().unwrap();
        }
    });
}
