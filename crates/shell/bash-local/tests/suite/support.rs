//! Helpers: an executor with a short grace, and a kernel with the plugin mounted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_bash_local::BashLocalPlugin;
use dsh_kernel::{FiberHandle, Kernel};
use dsh_shell::{
    BashRunner, ParentEnv, RunnerOptions, SHELL, ShellConfig, ShellExecutor, ShellProcess,
};
use serde_json::json;

/// An executor behind the trait, with `config` (grace 200 ms unless set).
pub fn executor(config: ShellConfig) -> (Arc<dyn ShellExecutor>, tempfile::TempDir) {
    let spill = tempfile::tempdir().unwrap();
    let executor = BashRunner::with_options(
        config,
        RunnerOptions {
            parent_env: ParentEnv::Inherit,
            spill_dir: Some(spill.path().to_path_buf()),
        },
    )
    .unwrap();
    (Arc::new(executor), spill)
}

pub fn quick() -> ShellConfig {
    ShellConfig {
        grace_ms: 200,
        ..ShellConfig::default()
    }
}

/// A kernel with `dsh-bash-local` mounted with `config`.
pub async fn boot(config: serde_json::Value) -> (Kernel, FiberHandle, Arc<dyn ShellExecutor>) {
    let kernel = Kernel::new().unwrap();
    let fiber = kernel.root().plugin(BashLocalPlugin, config).unwrap();
    kernel.settle().await;
    kernel.audit(&[fiber.id()]).unwrap();
    let shell = kernel.root().require(&SHELL).unwrap();
    (kernel, fiber, shell)
}

pub fn grace(ms: u64) -> serde_json::Value {
    json!({ "graceMs": ms })
}

pub async fn read_until(process: &ShellProcess, expected: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut all = String::new();
    while Instant::now() < deadline {
        all.push_str(&process.read_output().delta);
        if all.contains(expected) {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("output never contained {expected:?}; got {all:?}");
}

pub fn pid_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .next()
            .unwrap();
        !matches!(state, "Z" | "X" | "x")
    })
}
