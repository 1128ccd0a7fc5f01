//! Decoding a 1 MB recorded DeepSeek SSE stream (built with the test-support SSE builders)
//! into stream chunks: SSE parsing plus translation.
#![expect(
    clippy::unwrap_used,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_llm::StreamChunk;
use dsh_llm_deepseek::sse::{SseItem, SseParser};
use dsh_llm_deepseek::translate::Translator;
use dsh_test_support::sse::{self, SseEvent};

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn recorded_stream() -> Vec<u8> {
    let mut events = vec![SseEvent::data(sse::chunk_role())];
    let mut reasoning = 0usize;
    while events.iter().map(|e| e.to_sse().len()).sum::<usize>() < 1 << 20 {
        reasoning += 1;
        if reasoning.is_multiple_of(3) {
            events.push(SseEvent::data(sse::chunk_text(
                "some visible answer text, ",
            )));
        } else {
            events.push(SseEvent::data(sse::chunk_reasoning("thinking about it ✓ ")));
        }
    }
    events.push(SseEvent::data(sse::chunk_finish(
        "stop",
        Some(sse::usage(10, 20, Some(5), Some(3))),
    )));
    events.push(SseEvent::done());
    sse::render(&events).into_bytes()
}

fn decode(bytes: &[u8], read: usize) -> Vec<StreamChunk> {
    let mut parser = SseParser::new();
    let mut translator = Some(Translator::new());
    let mut items = Vec::new();
    let mut out = Vec::new();
    for piece in bytes.chunks(read) {
        items.clear();
        parser.feed(piece, &mut items);
        for item in items.drain(..) {
            match item {
                SseItem::Data(payload) => {
                    if let Some(t) = translator.as_mut() {
                        t.push(&payload, &mut out).unwrap();
                    }
                }
                SseItem::Done => {
                    if let Some(t) = translator.take() {
                        t.done(&mut out);
                    }
                }
                SseItem::Comment => {}
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let bytes = recorded_stream();
    let chunks = decode(&bytes, 16 * 1024).len();
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(format!("decode_1mb_{chunks}_chunks"), |b| {
        b.iter(|| black_box(decode(black_box(&bytes), 16 * 1024)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
