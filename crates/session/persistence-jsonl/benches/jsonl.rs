//! JSONL store benchmarks on a realistic 1,000-turn session (33,007 events):
//!
//! - `load`: reopen, decode and validate the whole log (dsh 0.1.1: 824 ms zstd, 676 ms raw;
//!   target under 60 ms);
//! - `append`: 1,000 one-turn batches, each fsync'd (dsh 0.1.1: 3.9 s), next to the machine's
//!   bare `write` + `fsync` of the same bytes (target: within 1.2x of it).

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::print_stderr,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlBackend, JsonlOptions};
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::turns::long_session_batches;

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TURNS: u64 = 1000;

fn store(root: &Path, compression: Compression) -> Arc<Coordinator<JsonlBackend>> {
    let options = JsonlOptions {
        root: root.to_path_buf(),
        compression,
        pack_chunks: true,
    };
    Coordinator::new(
        JsonlBackend::new(options).unwrap(),
        CoordinatorOptions::default(),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn header() -> SessionHeader {
    let mut header = SessionHeader::new("long", 1_795_976_398_536).with_cwd("/srv/dsh-demo");
    header.delegation_depth = Some(0);
    header
}

/// The session split as a live session flushes it: the preamble, then one batch per turn.
fn batches() -> (Vec<SessionEvent>, Vec<Vec<SessionEvent>>) {
    long_session_batches(TURNS)
}

fn write_session(root: &Path, compression: Compression) {
    let (preamble, turns) = batches();
    let store = store(root, compression);
    runtime().block_on(async {
        store.create(header()).await.unwrap();
        store.append("long", preamble).await.unwrap();
        for batch in turns {
            store.append("long", batch).await.unwrap();
        }
    });
}

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("load_33007_events");
    group.sample_size(20);
    for (name, compression) in [("zstd", Compression::Zstd), ("raw", Compression::None)] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        write_session(dir.path(), compression);
        let runtime = runtime();
        group.bench_function(name, |b| {
            // Freeing the events afterwards is not part of loading them.
            b.iter_with_large_drop(|| {
                let fresh = store(dir.path(), compression);
                let inspection = runtime.block_on(fresh.inspect("long")).unwrap();
                assert_eq!(inspection.events.len(), 33_007);
                black_box(inspection)
            });
        });
    }
    group.finish();
}

/// The bytes our store appends for each turn batch (one zstd frame each), captured from a
/// written log.
fn appended_frames(dir: &Path) -> Vec<Vec<u8>> {
    write_session(dir, Compression::Zstd);
    let path = dir.join("--srv-dsh-demo--/long/session.jsonl.zstd");
    let bytes = std::fs::read(path).unwrap();
    let scan = dsh_persistence::log_file::zstd_frames::scan_frames(&bytes).unwrap();
    scan.frames
        .iter()
        .skip(2)
        .map(|range| bytes[range.clone()].to_vec())
        .collect()
}

/// Appends every turn batch through the store to a fresh log; returns the time of the appends.
fn store_round(
    runtime: &tokio::runtime::Runtime,
    preamble: &[SessionEvent],
    turns: &[Vec<SessionEvent>],
) -> Duration {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = store(dir.path(), Compression::Zstd);
    let turns = turns.to_vec();
    runtime.block_on(async {
        store.create(header()).await.unwrap();
        store.append("long", preamble.to_vec()).await.unwrap();
        let started = Instant::now();
        for batch in turns {
            store.append("long", batch).await.unwrap();
        }
        started.elapsed()
    })
}

/// Appends the same frames with bare `open`, `write`, `fsync`; returns the time taken.
fn baseline_round(frames: &[Vec<u8>]) -> Duration {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("baseline.bin");
    std::fs::write(&path, b"").unwrap();
    let started = Instant::now();
    for frame in frames {
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(frame).unwrap();
        file.sync_all().unwrap();
    }
    started.elapsed()
}

fn append(c: &mut Criterion) {
    let (preamble, turns) = batches();
    let frames_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let frames = appended_frames(frames_dir.path());
    assert_eq!(frames.len(), usize::try_from(TURNS).unwrap());
    let runtime = runtime();
    // fsync times drift a lot on shared machines, so the ratio is taken from rounds that
    // alternate the two, each pair under the same conditions.
    let mut ratios: Vec<f64> = (0..7)
        .map(|_| {
            let ours = store_round(&runtime, &preamble, &turns);
            let bare = baseline_round(&frames);
            ours.as_secs_f64() / bare.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    eprintln!(
        "append_1000_turn_batches_fsync: store / bare write+fsync, median of 7 alternating rounds: \
         {:.2}x (target <= 1.2x)",
        ratios[ratios.len() / 2]
    );
    let mut group = c.benchmark_group("append_1000_turn_batches_fsync");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("jsonl_store", |b| {
        b.iter_custom(|iterations| {
            (0..iterations)
                .map(|_| store_round(&runtime, &preamble, &turns))
                .sum()
        });
    });
    group.bench_function("bare_write_fsync_baseline", |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| baseline_round(&frames)).sum());
    });
    group.finish();
}

criterion_group!(benches, load, append);
criterion_main!(benches);
