//! The cost of confinement: `run` of `true` through the sandbox executor against the same
//! `run` unconfined (dsh-shell's bash runner, the executor bash-local provides), with
//! Landlock held on a launch thread (the default), through the runner process, with a
//! protected path inside the workspace (a carve-out), and with a fenced port (as under
//! `dsh web`). The target is under 3 ms of overhead.

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to"
)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_bash_sandbox::{
    Backend, FixedPolicy, LaunchStrategy, SandboxBashExecutor, SandboxOptions, SandboxRunner,
};
use dsh_shell::{
    BashRunner, NetworkPolicy, ProtectedPath, SandboxExecutionPolicy, SandboxMode,
    SandboxProtection, ShellConfig, ShellExecRequest, ShellExecutor,
};

/// How one benchmarked executor confines.
struct Setup {
    mode: SandboxMode,
    network: NetworkPolicy,
    strategy: LaunchStrategy,
    carve_out: bool,
    fence: bool,
}

impl Setup {
    const fn new(mode: SandboxMode) -> Self {
        Self {
            mode,
            network: NetworkPolicy::Allow,
            strategy: LaunchStrategy::Thread,
            carve_out: false,
            fence: false,
        }
    }
}

fn sandboxed(
    setup: &Setup,
    root: &std::path::Path,
    fenced: &Arc<SandboxProtection>,
) -> SandboxBashExecutor {
    let protected_paths = if setup.carve_out {
        let home = root.join(".dsh");
        std::fs::create_dir_all(&home).unwrap();
        vec![ProtectedPath::new(home, "dsh's home")]
    } else {
        Vec::new()
    };
    let policy = SandboxExecutionPolicy {
        mode: setup.mode,
        workspace_root: root.to_path_buf(),
        session_id: None,
        network: setup.network,
        protected_paths,
    };
    let runner = SandboxRunner::new(env!("CARGO_BIN_EXE_dsh-sandbox-run"), Vec::new());
    let mut executor = SandboxBashExecutor::new(
        BashRunner::new(ShellConfig::default()).unwrap(),
        Arc::new(FixedPolicy(policy)),
        SandboxOptions {
            bwrap: None,
            strategy: setup.strategy,
            ..SandboxOptions::new(runner)
        },
    );
    if setup.fence {
        executor = executor.with_protection(Arc::clone(fenced));
    }
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
    let local = BashRunner::new(ShellConfig::default()).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fenced = SandboxProtection::new();
    let _fence = fenced.fence_port(listener.local_addr().unwrap().port());
    let write = SandboxMode::WorkspaceWrite;
    let setups = [
        (
            "sandbox read-only run(true)",
            Setup::new(SandboxMode::ReadOnly),
        ),
        ("sandbox workspace-write run(true)", Setup::new(write)),
        (
            "sandbox workspace-write network-deny run(true)",
            Setup {
                network: NetworkPolicy::Deny,
                ..Setup::new(write)
            },
        ),
        (
            "sandbox workspace-write carve-out run(true)",
            Setup {
                carve_out: true,
                ..Setup::new(write)
            },
        ),
        (
            "sandbox workspace-write fenced port run(true)",
            Setup {
                fence: true,
                ..Setup::new(write)
            },
        ),
        (
            "sandbox runner workspace-write run(true)",
            Setup {
                strategy: LaunchStrategy::Runner,
                ..Setup::new(write)
            },
        ),
        (
            "sandbox runner workspace-write carve-out run(true)",
            Setup {
                strategy: LaunchStrategy::Runner,
                carve_out: true,
                ..Setup::new(write)
            },
        ),
    ];
    let mut executors: Vec<(&str, Box<dyn ShellExecutor>)> =
        vec![("bash-local run(true)", Box::new(local))];
    for (name, setup) in &setups {
        executors.push((*name, Box::new(sandboxed(setup, &root, &fenced))));
    }
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
