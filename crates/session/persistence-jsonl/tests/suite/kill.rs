//! A killed writer loses nothing that a completed append reported durable.
//!
//! The writer is this test binary run again as a child process ([`child_writer`]): it appends
//! a planned log batch by batch and reports `durable <seq>` after each append returns. The
//! parent kills it with SIGKILL at a random moment, then reopens the log: it loads, keeps every
//! reported event, and is a contiguous prefix of the plan closed by crash closers.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_persistence_jsonl::Compression;
use dsh_protocol::json::to_js_string;
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::turns::LogBuilder;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use super::support::{store, texts};

/// Where the child writes; without it [`child_writer`] does nothing.
const ROOT_VAR: &str = "DSH_JSONL_KILL_TEST_ROOT";
/// The plan the child writes.
const SEED_VAR: &str = "DSH_JSONL_KILL_TEST_SEED";
/// Set to a seed from a failure message to replay that one run.
const REPLAY_VAR: &str = "DSH_JSONL_KILL_TEST_REPLAY";
/// What the child prints after each append returned.
const DURABLE: &str = "dsh-kill-child durable ";
const ID: &str = "killed-writer";
const ITERATIONS: u64 = 24;

#[test]
fn a_killed_writer_loses_nothing_an_append_reported_durable() {
    if let Ok(seed) = std::env::var(REPLAY_VAR) {
        kill_and_reopen(seed.parse().unwrap());
        return;
    }
    let seed0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for iteration in 0..ITERATIONS {
        if started.elapsed() > Duration::from_secs(12) && iteration >= 8 {
            break;
        }
        let seed = Rng(seed0.wrapping_add(iteration)).next();
        outcomes.push(kill_and_reopen(seed));
    }
    // Some runs must have been cut in the middle, and the others are checked all the same.
    assert!(
        outcomes.iter().any(|outcome| outcome.killed),
        "{outcomes:?}"
    );
    assert!(
        outcomes.iter().any(|outcome| outcome.reported > 0),
        "{outcomes:?}"
    );
}

/// The writer process; run by the kill test with `ROOT_VAR` and `SEED_VAR` set.
#[test]
#[ignore = "the child process of the kill test; does nothing unless DSH_JSONL_KILL_TEST_ROOT is set"]
fn child_writer() {
    let Some(root) = std::env::var_os(ROOT_VAR) else {
        return;
    };
    let seed: u64 = std::env::var(SEED_VAR).unwrap().parse().unwrap();
    let plan = Plan::new(seed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let persistence = store(Path::new(&root), plan.compression, plan.pack);
        persistence.create(header()).await.unwrap();
        let mut stdout = std::io::stdout().lock();
        for batch in &plan.batches {
            persistence.append(ID, batch.clone()).await.unwrap();
            writeln!(stdout, "{DURABLE}{}", batch.last().unwrap().seq).unwrap();
            stdout.flush().unwrap();
        }
        writeln!(stdout, "dsh-kill-child done").unwrap();
        stdout.flush().unwrap();
    });
}

/// When the parent kills the child.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// At a random moment after the start (possibly before the first write).
    AfterStart { micros: u64 },
    /// A random delay after the child reported `reports` appends durable.
    AfterReports { reports: usize, micros: u64 },
    /// As soon as the file grows after `reports` reports: inside the write of a large batch.
    InsideWrite { reports: usize },
}

impl Moment {
    fn pick(plan: &Plan, rng: &mut Rng) -> Self {
        let large = plan.large_batches();
        match rng.below(4) {
            0 => Self::AfterStart {
                micros: rng.below(50_000),
            },
            1 if !large.is_empty() => Self::InsideWrite {
                reports: large[rng.below(large.len() as u64) as usize],
            },
            _ => Self::AfterReports {
                reports: 1 + rng.below(plan.batches.len() as u64) as usize,
                micros: rng.below(3_000),
            },
        }
    }

    fn reports(self) -> usize {
        match self {
            Self::AfterStart { .. } => 0,
            Self::AfterReports { reports, .. } | Self::InsideWrite { reports } => reports,
        }
    }
}

/// What one run did, for the failure message.
#[derive(Debug)]
#[expect(
    dead_code,
    reason = "the fields are read only by the Debug print of a failed run"
)]
struct Outcome {
    seed: u64,
    moment: Moment,
    killed: bool,
    /// Whether the kill left a torn tail (half a line or half a frame).
    torn: bool,
    reported: usize,
    kept: usize,
    planned: usize,
}

/// Runs the child with the plan of `seed`, kills it at a random moment, and checks the log.
fn kill_and_reopen(seed: u64) -> Outcome {
    let plan = Plan::new(seed);
    let mut rng = Rng(seed ^ 0x5EED);
    let root = tempfile::tempdir().unwrap();
    let stderr_path = root.path().join("child.stderr");
    let sessions = root.path().join("sessions");
    let mut child = spawn_child(&sessions, seed, &stderr_path);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());

    let moment = Moment::pick(&plan, &mut rng);
    let mut output = String::new();
    let mut finished = false;
    let mut seen = 0;
    while seen < moment.reports() {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            finished = true;
            break;
        }
        seen += usize::from(line.contains(DURABLE));
        output.push_str(&line);
    }
    if !finished {
        match moment {
            Moment::AfterStart { micros } | Moment::AfterReports { micros, .. } => {
                std::thread::sleep(Duration::from_micros(micros));
            }
            Moment::InsideWrite { .. } => wait_for_growth(&mut child, &log_path(&sessions, &plan)),
        }
    }
    let killed = kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGKILL,
    )
    .is_ok();
    let status = child.wait().unwrap();
    stdout.read_to_string(&mut output).unwrap();
    let completed = output.contains("dsh-kill-child done");
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    if status.code().is_some() {
        assert!(
            status.success() && completed,
            "seed {seed}: the child exited on its own without finishing: {status}\n{output}\n{stderr}"
        );
    }

    let durable: Vec<u64> = output
        .lines()
        .filter_map(|line| line.split(DURABLE).nth(1))
        .map(|seq| seq.trim().parse().unwrap())
        .collect();
    assert!(
        durable.windows(2).all(|pair| pair[0] < pair[1]),
        "seed {seed}: {durable:?}"
    );
    let torn = torn_tail(&sessions, &plan);
    let kept = check_reopened(&sessions, &plan, durable.last().copied(), seed);
    Outcome {
        seed,
        moment,
        killed: killed && !completed,
        torn,
        reported: durable.len(),
        kept,
        planned: plan.len(),
    }
}

/// Reopens the log the child left: it must hold every reported event, be a prefix of the
/// plan, repair into a balanced log, and take the next append. Returns the events kept.
fn check_reopened(root: &Path, plan: &Plan, last_durable: Option<u64>, seed: u64) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let persistence = store(root, plan.compression, plan.pack);
        let stored = match persistence.read_from(ID, 0).await {
            Err(PersistenceError::NotFound(_)) => {
                assert_eq!(
                    last_durable, None,
                    "seed {seed}: a reported append is missing"
                );
                assert!(persistence.list().await.unwrap().is_empty());
                return 0;
            }
            other => other.unwrap_or_else(|error| panic!("seed {seed}: {error}")),
        };
        let planned = plan.events();
        let needed = last_durable.map_or(0, |seq| seq as usize + 1);
        assert!(
            stored.len() >= needed,
            "seed {seed}: kept {} events, but seq {} was reported durable",
            stored.len(),
            needed - 1
        );
        assert!(stored.len() <= planned.len(), "seed {seed}");
        assert_eq!(
            texts(&stored),
            texts(&planned[..stored.len()]),
            "seed {seed}"
        );

        let mut balanced = stored.clone();
        balanced.extend(interrupted_turn_closers(&stored));
        let loaded = persistence.load(ID).await.unwrap();
        assert_eq!(texts(&loaded.events), texts(&balanced), "seed {seed}");

        let reopened = store(root, plan.compression, plan.pack);
        let reloaded = reopened.load(ID).await.unwrap();
        assert_eq!(texts(&reloaded.events), texts(&balanced), "seed {seed}");
        let next = SessionEvent::new("turn/start", balanced.len() as u64, 1, json!({"turn": 99}));
        reopened.append(ID, vec![next.clone()]).await.unwrap();
        let last = reopened.read_from(ID, next.seq).await.unwrap();
        assert_eq!(texts(&last), [to_js_string(&next)], "seed {seed}");
        stored.len()
    })
}

/// Spins until the log grows past its size now, that is while the child writes the next
/// append, so that the kill lands inside the write; gives up when the child exits.
fn wait_for_growth(child: &mut Child, path: &Path) {
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let durable = size(path);
    let started = Instant::now();
    while size(path) == durable && started.elapsed() < Duration::from_secs(2) {
        if child.try_wait().unwrap().is_some() {
            return;
        }
    }
}

fn log_path(root: &Path, plan: &Plan) -> std::path::PathBuf {
    dsh_persistence_jsonl::layout::log_path(root, Some("/srv/dsh-demo"), ID, plan.compression)
        .unwrap()
}

/// Whether the log ends inside a line (raw) or inside a frame (zstd).
fn torn_tail(root: &Path, plan: &Plan) -> bool {
    let Ok(bytes) = std::fs::read(log_path(root, plan)) else {
        return false;
    };
    match plan.compression {
        Compression::None => !bytes.ends_with(b"\n"),
        Compression::Zstd => dsh_persistence::log_file::zstd_frames::scan_frames(&bytes)
            .unwrap()
            .torn_start
            .is_some(),
    }
}

fn spawn_child(root: &Path, seed: u64, stderr: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::kill::child_writer",
            "--ignored",
            "--nocapture",
        ])
        .env(ROOT_VAR, root)
        .env(SEED_VAR, seed.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

fn header() -> SessionHeader {
    SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo")
}

/// The log one child writes, in batches: realistic turns with, now and then, a large
/// incompressible plugin event, so that an append may be cut in the middle.
struct Plan {
    compression: Compression,
    pack: bool,
    batches: Vec<Vec<SessionEvent>>,
}

impl Plan {
    fn new(seed: u64) -> Self {
        let mut rng = Rng(seed);
        let compression = if rng.below(2) == 0 {
            Compression::Zstd
        } else {
            Compression::None
        };
        let pack = rng.below(4) != 0;
        let mut builder = LogBuilder::default();
        builder.preamble();
        for turn in 1..=10 {
            if rng.below(3) == 0 {
                let size = 64_000 + rng.below(448_000) as usize;
                builder.push(
                    "hook/result",
                    json!({"turn": turn, "output": noise(size, rng.next())}),
                );
            }
            builder.turn(turn);
        }
        let mut events = builder.finish().into_iter().peekable();
        let mut batches = Vec::new();
        while events.peek().is_some() {
            let size = 1 + rng.below(40) as usize;
            batches.push(events.by_ref().take(size).collect());
        }
        Self {
            compression,
            pack,
            batches,
        }
    }

    fn events(&self) -> Vec<SessionEvent> {
        self.batches.concat()
    }

    /// The indices of the batches holding a large event.
    fn large_batches(&self) -> Vec<usize> {
        (0..self.batches.len())
            .filter(|&index| {
                self.batches[index]
                    .iter()
                    .any(|event| event.kind == "hook/result")
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.batches.iter().map(Vec::len).sum()
    }
}

/// Deterministic, poorly compressible printable text.
fn noise(len: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    (0..len)
        .map(|_| char::from(b'!' + rng.below(90) as u8))
        .collect()
}

/// splitmix64: a small deterministic generator, so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}
