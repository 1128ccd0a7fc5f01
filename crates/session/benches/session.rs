//! In-memory session benchmarks: append with validation (target: at least 2 million events
//! per second) and `derive_messages` after every step of a long session (target: linear).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dsh_session::{Session, SessionHeader, SurfaceIntent};
use serde_json::{Value, json};

fn chunk(index: u64) -> Value {
    json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": format!("token {index} ")}})
}

/// Appends `n` streamed chunks (the bulk of a real log) to a fresh session. The session is
/// returned so that freeing it (not part of appending) falls outside the measurement.
fn append_chunks(c: &mut Criterion) {
    let n = 100_000_u64;
    let payloads: Vec<Value> = (0..n).map(chunk).collect();
    let mut group = c.benchmark_group("session_append");
    group.throughput(Throughput::Elements(n));
    group.bench_function("chunks_100k", |b| {
        b.iter_batched(
            || payloads.clone(),
            |payloads| {
                let mut session = Session::new(SessionHeader::new("bench", 1)).unwrap();
                for data in payloads {
                    session
                        .append_at("assistant/chunk", data, SurfaceIntent::default(), 1)
                        .unwrap();
                }
                session
            },
            criterion::BatchSize::LargeInput,
        );
    });
    group.finish();
}

fn message(id: String, role: &str, text: &str) -> Value {
    let source = if role == "user" {
        json!({"kind": "user"})
    } else {
        json!({"kind": "model", "provider": "deepseek", "model": "deepseek-chat"})
    };
    json!({"id": id, "role": role, "content": [{"type": "text", "text": text}], "source": source})
}

/// Runs `steps` steps, deriving the messages before each model call, as the agent loop does.
fn derive_every_step(steps: u64) -> usize {
    let mut session = Session::new(SessionHeader::new("bench", 1)).unwrap();
    let mut total = 0;
    for step in 0..steps {
        let user = message(format!("u{step}"), "user", "next");
        session
            .append_at("user/message", user, SurfaceIntent::append(), 1)
            .unwrap();
        total += session.derive_messages().len();
        let reply = json!({"turn": 1, "step": step + 1, "message": message(format!("a{step}"), "assistant", "ok")});
        session
            .append_at("assistant/message", reply, SurfaceIntent::append(), 1)
            .unwrap();
    }
    total
}

/// `derive_messages` after each of 1,000 and 10,000 steps: time per step must stay flat.
fn derive_messages(c: &mut Criterion) {
    let mut group = c.benchmark_group("derive_messages_every_step");
    for steps in [1_000_u64, 10_000] {
        group.throughput(Throughput::Elements(steps));
        group.bench_with_input(BenchmarkId::from_parameter(steps), &steps, |b, &steps| {
            b.iter(|| black_box(derive_every_step(steps)));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = append_chunks, derive_messages
}
criterion_main!(benches);
