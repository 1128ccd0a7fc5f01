//! `grep` over the cargo registry's sources (tens of thousands of files) through the whole tool
//! pipeline (registry, argument checks, the in-process parallel search, value, text and card),
//! next to spawning `rg --json` with the same pattern on the same tree. Target: within 1.5x of
//! ripgrep.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::indexing_slicing,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_kernel::Kernel;
use dsh_system_prompt::SystemPromptPlugin;
use dsh_tool_fs_search::ToolFsSearchPlugin;
use dsh_tools::{CancellationToken, TOOLS, ToolExecutionInput, ToolsPlugin};
use serde_json::json;

/// The allocator the `dsh` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A regex with a couple of thousand matches in a typical registry.
const PATTERN: &str = r"fn [a-z_]+_mut\(";

/// The registry's unpacked sources (`$CARGO_HOME/registry/src`, else `~/.cargo/registry/src`).
fn registry() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .expect("CARGO_HOME or HOME is set");
    let src = home.join("registry").join("src");
    assert!(
        src.is_dir(),
        "no cargo registry sources at {}",
        src.display()
    );
    src
}

fn rg() -> PathBuf {
    ["/usr/bin/rg", "/usr/local/bin/rg"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .expect("ripgrep (`rg`) is installed: the benchmark compares against it")
}

/// `rg --json` over the tree; returns its match count.
fn ripgrep(rg: &Path, tree: &Path) -> usize {
    let output = Command::new(rg)
        .args([
            "--no-config",
            "--json",
            &format!("--regexp={PATTERN}"),
            "--",
        ])
        .arg(tree)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.code().is_some_and(|code| code <= 1));
    output
        .stdout
        .split(|&byte| byte == b'\n')
        .filter(|line| line.starts_with(br#"{"type":"match""#))
        .count()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn grep_registry(c: &mut Criterion) {
    let tree = registry();
    let rg = rg();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let kernel = Kernel::new().unwrap();
    let tools = runtime.block_on(async {
        let ctx = kernel.root();
        ctx.plugin(SystemPromptPlugin, json!({})).unwrap();
        ctx.plugin(ToolsPlugin, json!({})).unwrap();
        ctx.plugin(
            ToolFsSearchPlugin,
            json!({"sampleOverCapGlobResults": false, "timeoutMs": 600_000}),
        )
        .unwrap();
        kernel.settle().await;
        ctx.get(&TOOLS).unwrap()
    });
    let ours = || {
        let input = ToolExecutionInput::new(
            "bench",
            "grep",
            json!({"pattern": PATTERN, "path": tree.to_str().unwrap()}),
            CancellationToken::new(),
        );
        let result = runtime.block_on(tools.execute(input));
        assert!(!result.is_error, "{}", result.text());
        let value = result.value.unwrap();
        black_box(value["matches"].as_array().unwrap().len())
    };

    // Warm the page cache, and check that both find the same matches.
    let (found, expected) = (ours(), ripgrep(&rg, &tree));
    assert_eq!(
        found, expected,
        "the tool and ripgrep agree on the match count"
    );

    // Alternating rounds, so machine noise hits both sides alike.
    let (mut our_times, mut rg_times) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let started = Instant::now();
        ours();
        our_times.push(started.elapsed());
        let started = Instant::now();
        black_box(ripgrep(&rg, &tree));
        rg_times.push(started.elapsed());
    }
    let (ours_median, rg_median) = (median(our_times), median(rg_times));
    eprintln!(
        "grep {PATTERN:?} over {} ({found} matches), median of 15 alternating rounds: tool \
         pipeline {ours_median:?}, rg --json {rg_median:?}; ratio {:.2} (target: at most 1.50)",
        tree.display(),
        ours_median.as_secs_f64() / rg_median.as_secs_f64()
    );

    let mut group = c.benchmark_group("grep_registry");
    group.sample_size(10);
    group.bench_function("tool_pipeline", |b| b.iter(ours));
    group.bench_function("rg_json", |b| b.iter(|| ripgrep(&rg, &tree)));
    group.finish();
    runtime.block_on(kernel.shutdown());
}

criterion_group!(benches, grep_registry);
criterion_main!(benches);
