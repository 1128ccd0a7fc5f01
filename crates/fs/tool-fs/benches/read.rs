//! `read` of a 10 MB file with `offset`/`limit`, through the whole tool pipeline (argument
//! validation, the observation event, rendering). The file is real source text: the cargo
//! registry's Rust sources concatenated. Target: under 20 ms per call, with memory growth
//! bounded by the window rather than the file (printed as the peak-RSS growth of one call).

#![expect(
    clippy::expect_used,
    clippy::print_stderr,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to; the figures are printed for the reader"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_fs_local::FsLocalPlugin;
use dsh_fs_observation_policy::FsObservationPolicyPlugin;
use dsh_kernel::Kernel;
use dsh_tool_fs::ToolFsPlugin;
use dsh_tools::{CancellationToken, TOOLS, ToolExecutionInput, ToolRegistry, ToolsPlugin};
use serde_json::{Value, json};

const FILE_BYTES: usize = 10_000_000;

/// Rust sources from the cargo registry (else this crate's own), concatenated to 10 MB.
fn realistic_text() -> String {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".cargo")))
        .unwrap_or_default();
    let mut sources = Vec::new();
    collect(&home.join("registry/src"), &mut sources, 4000);
    if sources.is_empty() {
        collect(Path::new(env!("CARGO_MANIFEST_DIR")), &mut sources, 100);
    }
    let mut text = String::with_capacity(FILE_BYTES + 65536);
    'fill: loop {
        for path in &sources {
            if let Ok(source) = std::fs::read_to_string(path) {
                text.push_str(&source);
                if text.len() >= FILE_BYTES {
                    break 'fill;
                }
            }
        }
    }
    let mut end = FILE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, max: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries {
        if out.len() >= max {
            return;
        }
        if path.is_dir() {
            collect(&path, out, max);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

async fn call(tools: &ToolRegistry, args: &Value) -> usize {
    let result = tools
        .execute(ToolExecutionInput::new(
            "b",
            "read",
            args.clone(),
            CancellationToken::new(),
        ))
        .await;
    assert!(!result.is_error, "{:?}", result.error);
    result.content.len()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("big.rs");
    let text = realistic_text();
    let lines = text.lines().count();
    std::fs::write(&file, &text).expect("write");
    drop(text);
    let (kernel, tools): (Kernel, Arc<ToolRegistry>) = runtime.block_on(async {
        let kernel = Kernel::new().expect("kernel");
        let ctx = kernel.root();
        ctx.plugin(ToolsPlugin, json!({})).expect("tools");
        ctx.plugin(FsObservationPolicyPlugin, Value::Null)
            .expect("policy");
        ctx.plugin(FsLocalPlugin, json!({"cwd": dir.path()}))
            .expect("fs");
        ctx.plugin(ToolFsPlugin, json!({})).expect("tool-fs");
        kernel.settle().await;
        let tools = ctx.get(&TOOLS).expect("registry");
        (kernel, tools)
    });
    let args = json!({"file_path": file, "offset": lines / 2, "limit": 2000});
    // Reset the high-water mark (Linux: 5 > clear_refs) so the file's own text does not count.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = peak_rss_kib();
    runtime.block_on(call(&tools, &args));
    let growth = peak_rss_kib().saturating_sub(before);
    eprintln!("read: 10 MB file ({lines} lines), one call grew peak RSS by {growth} KiB");
    c.bench_function("read 10 MB offset/limit through the pipeline", |b| {
        b.iter(|| runtime.block_on(call(&tools, &args)));
    });
    runtime.block_on(kernel.shutdown());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
