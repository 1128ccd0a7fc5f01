//! The meter's cost per step on a realistic 30,000-event session (909 turns of
//! dsh-test-support's 33-event turns plus the preamble): append one step's events to the
//! session (not timed), then fold them and measure (timed). Target: under 1 ms per step, and
//! no growth with the log's length (the fold reads only the new events).

#![expect(
    clippy::unwrap_used,
    clippy::print_stderr,
    clippy::indexing_slicing,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_session::{Session, SessionEvent, SessionHeader};
use dsh_test_support::turns::{LogBuilder, long_session};
use dsh_token_meter::SessionMeter;

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// 7 + 33 × 909 = 30,004 events.
const TURNS: u64 = 909;
/// Events of a turn's first step (turn/start .. step/end); the rest is the second step.
const FIRST_STEP_EVENTS: usize = 23;
/// Sessions are rebuilt once they pass this length, so the log stays between 30,000 and
/// 45,000 events.
const MAX_EVENTS: usize = 45_000;

/// One turn's two steps, with seqs (and cited seqs) starting at `base`.
fn turn_steps(turn: u64, base: u64) -> [Vec<SessionEvent>; 2] {
    let mut builder = LogBuilder::default();
    builder.turn(turn);
    let mut events = builder.finish();
    for event in &mut events {
        event.seq += base;
        if let Some(sources) = &mut event.source_event_seqs {
            sources.iter_mut().for_each(|seq| *seq += base);
        }
    }
    let second = events.split_off(FIRST_STEP_EVENTS);
    [events, second]
}

/// The session and a meter caught up with it.
struct Bench {
    session: Session,
    meter: SessionMeter,
    turn: u64,
}

impl Bench {
    fn new() -> Self {
        let session =
            Session::from_seed(SessionHeader::new("bench", 1), long_session(TURNS)).unwrap();
        let mut meter = SessionMeter::new();
        meter.sync(session.events()).unwrap();
        Self {
            session,
            meter,
            turn: TURNS,
        }
    }

    /// Appends the next turn step by step, timing each step's fold and measure.
    fn turn(&mut self, timings: &mut Vec<Duration>) {
        if self.session.events().len() > MAX_EVENTS {
            *self = Self::new();
        }
        self.turn += 1;
        for step in turn_steps(self.turn, self.session.next_seq()) {
            for event in step {
                self.session.append_event(event).unwrap();
            }
            let started = Instant::now();
            self.meter.sync(self.session.events()).unwrap();
            let measurement = self.meter.measure(None);
            timings.push(started.elapsed());
            black_box(measurement);
        }
    }
}

/// The median and the 99th percentile.
fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |share: f64| samples[((samples.len() - 1) as f64 * share) as usize];
    (at(0.5), at(0.99))
}

fn per_step(c: &mut Criterion) {
    let started = Instant::now();
    let mut bench = Bench::new();
    let setup = started.elapsed();
    let mut timings = Vec::new();
    for _ in 0..500 {
        bench.turn(&mut timings);
    }
    let (worst_step, worst) = timings
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|(_, time)| *time)
        .unwrap_or_default();
    let steps = timings.len();
    let (median, p99) = percentiles(timings);
    eprintln!(
        "token meter on a {}-event session (initial fold of the log: {setup:?}): one step's fold \
         and measure over {steps} steps: median {median:?}, p99 {p99:?}, worst {worst:?} (step {worst_step}) \
         (target: under 1 ms)",
        7 + 33 * TURNS,
    );

    let mut group = c.benchmark_group("token_meter_30004_events");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    group.bench_function("fold_and_measure_per_step", |b| {
        b.iter_custom(|iters| {
            let mut timings = Vec::new();
            for _ in 0..iters.div_ceil(2) {
                bench.turn(&mut timings);
            }
            let steps = timings.len().max(1) as f64;
            timings
                .iter()
                .sum::<Duration>()
                .mul_f64(iters as f64 / steps)
        });
    });
    group.finish();
}

criterion_group!(benches, per_step);
criterion_main!(benches);
