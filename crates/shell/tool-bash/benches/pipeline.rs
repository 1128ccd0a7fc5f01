//! The round trip of one `bash` call through the whole tool pipeline (registry, argument
//! validation, `DSH_*` collection, the shell runner's spawn and collection, rendering), next
//! to a bare `bash -c true` spawned from Rust. Target: within 2 ms of the bare spawn.

#![expect(
    clippy::unwrap_used,
    clippy::print_stderr,
    clippy::indexing_slicing,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_bash_local::BashLocalPlugin;
use dsh_kernel::Kernel;
use dsh_shell_env::ShellEnvPlugin;
use dsh_tool_bash::ToolBashPlugin;
use dsh_tools::{CancellationToken, TOOLS, ToolExecutionInput, ToolsPlugin};
use serde_json::json;

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bare() {
    let output = Command::new("bash").args(["-c", "true"]).output().unwrap();
    assert!(output.status.success());
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let _entered = runtime.enter();
    let kernel = Kernel::new().unwrap();
    let tools = runtime.block_on(async {
        let ctx = kernel.root();
        ctx.plugin(ShellEnvPlugin, json!({"dshHome": home.path()}))
            .unwrap();
        ctx.plugin(BashLocalPlugin, json!({})).unwrap();
        ctx.plugin(ToolsPlugin, json!({})).unwrap();
        ctx.plugin(ToolBashPlugin, json!({})).unwrap();
        kernel.settle().await;
        ctx.get(&TOOLS).unwrap()
    });
    let call = || {
        let input = ToolExecutionInput::new(
            "bench",
            "bash",
            json!({"command": "true", "description": "Do nothing"}),
            CancellationToken::new(),
        );
        let result = runtime.block_on(tools.execute(input));
        assert!(!result.is_error);
        black_box(result);
    };

    // Alternating rounds, so machine noise hits both sides alike.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let started = Instant::now();
        call();
        ours.push(started.elapsed());
        let started = Instant::now();
        bare();
        theirs.push(started.elapsed());
    }
    let (ours, theirs) = (median(ours), median(theirs));
    eprintln!(
        "bash round trip, median of 200 alternating rounds: pipeline {ours:?}, bare bash -c true \
         {theirs:?}; difference {:?} (target: within 2 ms)",
        ours.saturating_sub(theirs)
    );

    let mut group = c.benchmark_group("bash_true");
    group.bench_function("tool_pipeline", |b| b.iter(call));
    group.bench_function("bare_bash_c", |b| b.iter(bare));
    group.finish();
    runtime.block_on(kernel.shutdown());
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
