//! In-memory session benchmarks: append with validation (target: at least 2 million events
//! per second) and `derive_messages` after every step of a long session (target: linear).

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to"
)]

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

/// The payloads of `steps` steps: a user message and a reply each.
fn step_payloads(steps: u64) -> Vec<(Value, Value)> {
    (0..steps)
        .map(|step| {
            let user = message(format!("u{step}"), "user", "next");
            let reply = json!({"turn": 1, "step": step + 1,
                "message": message(format!("a{step}"), "assistant", "ok")});
            (user, reply)
        })
        .collect()
}

/// Runs the steps, deriving the messages before each model call as the agent loop does.
fn derive_every_step(payloads: Vec<(Value, Value)>) -> Session {
    let mut session = Session::new(SessionHeader::new("bench", 1)).unwrap();
    for (user, reply) in payloads {
        session
            .append_at("user/message", user, SurfaceIntent::append(), 1)
            .unwrap();
        black_box(session.derive_messages().len());
        session
            .append_at("assistant/message", reply, SurfaceIntent::append(), 1)
            .unwrap();
    }
    session
}

/// `derive_messages` after each of 1,000 and 10,000 steps: time per step must stay flat.
fn derive_messages(c: &mut Criterion) {
    let mut group = c.benchmark_group("derive_messages_every_step");
    for steps in [1_000_u64, 10_000] {
        group.throughput(Throughput::Elements(steps));
        let payloads = step_payloads(steps);
        group.bench_with_input(
            BenchmarkId::from_parameter(steps),
            &payloads,
            |b, payloads| {
                b.iter_batched(
                    || payloads.clone(),
                    derive_every_step,
                    criterion::BatchSize::LargeInput,
                );
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = append_chunks, derive_messages
}
criterion_main!(benches);
