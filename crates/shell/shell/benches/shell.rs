//! `run` of `true` through the runner against a bare `bash -c true` with std's and tokio's
//! `Command::output`.

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_shell::{
    ProcessRunner, RunLimits, RunnerOptions, ShellConfig, ShellExecRequest, bash_argv,
    resolve_request,
};

fn spawn_true(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let runner = ProcessRunner::new(RunLimits::default(), RunnerOptions::default());
    let spec = resolve_request(&ShellConfig::default(), ShellExecRequest::new("true")).unwrap();
    let argv = bash_argv("true");
    let mut group = c.benchmark_group("spawn");
    group.bench_function("runner run(bash -c true)", |b| {
        b.iter(|| {
            let result = runtime.block_on(runner.run(&argv, &spec)).unwrap();
            assert_eq!(result.exit_code, Some(0));
        });
    });
    group.bench_function("Command::output(bash -c true)", |b| {
        b.iter(|| {
            let output = std::process::Command::new("bash")
                .args(["-c", "true"])
                .output()
                .unwrap();
            assert!(output.status.success());
        });
    });
    group.bench_function("tokio Command::output(bash -c true)", |b| {
        b.iter(|| {
            let output = runtime
                .block_on(async {
                    tokio::process::Command::new("bash")
                        .args(["-c", "true"])
                        .output()
                        .await
                })
                .unwrap();
            assert!(output.status.success());
        });
    });
    group.finish();
}

criterion_group!(benches, spawn_true);
criterion_main!(benches);
