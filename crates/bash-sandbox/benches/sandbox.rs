//! The cost of confinement: `run` of `true` through the sandbox executor (Landlock runner)
//! against the same `run` through bash-local. The target is under 3 ms of overhead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_bash_local::LocalBashExecutor;
use dsh_bash_sandbox::{Backend, FixedPolicy, SandboxBashExecutor, SandboxOptions, SandboxRunner};
use dsh_shell::{
    NetworkPolicy, SandboxExecutionPolicy, SandboxMode, ShellConfig, ShellExecRequest,
    ShellExecutor,
};

fn sandboxed(
    mode: SandboxMode,
    network: NetworkPolicy,
    root: &std::path::Path,
) -> SandboxBashExecutor {
    let policy = SandboxExecutionPolicy {
        mode,
        workspace_root: root.to_path_buf(),
        session_id: None,
        network,
    };
    let runner = SandboxRunner::new(env!("CARGO_BIN_EXE_dsh-sandbox-run"), Vec::new());
    let executor = SandboxBashExecutor::new(
        LocalBashExecutor::new(ShellConfig::default()).unwrap(),
        Arc::new(FixedPolicy(policy)),
        SandboxOptions {
            bwrap: None,
            ..SandboxOptions::new(runner)
        },
    );
    assert!(matches!(executor.backend(), Some(Backend::Landlock { .. })));
    executor
}

fn confinement_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    let local = LocalBashExecutor::new(ShellConfig::default()).unwrap();
    let executors: Vec<(&str, Box<dyn ShellExecutor>)> = vec![
        ("bash-local run(true)", Box::new(local)),
        (
            "sandbox read-only run(true)",
            Box::new(sandboxed(
                SandboxMode::ReadOnly,
                NetworkPolicy::Allow,
                &root,
            )),
        ),
        (
            "sandbox workspace-write run(true)",
            Box::new(sandboxed(
                SandboxMode::WorkspaceWrite,
                NetworkPolicy::Allow,
                &root,
            )),
        ),
        (
            "sandbox workspace-write network-deny run(true)",
            Box::new(sandboxed(
                SandboxMode::WorkspaceWrite,
                NetworkPolicy::Deny,
                &root,
            )),
        ),
    ];
    let mut group = c.benchmark_group("confinement");
    for (name, executor) in &executors {
        let spec = executor.resolve(ShellExecRequest::new("true")).unwrap();
        group.bench_function(*name, |b| {
            b.iter(|| {
                let result = runtime.block_on(executor.run(spec.clone())).unwrap();
                assert_eq!(result.exit_code, Some(0));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, confinement_overhead);
criterion_main!(benches);
