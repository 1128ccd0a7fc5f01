//! Helpers: a runner with a fixed parent environment and private spill directory.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use dsh_shell::{
    ParentEnv, ProcessRunner, RunLimits, RunnerOptions, ShellConfig, ShellExecRequest,
    ShellExecSpec, ShellProcess, resolve_request,
};
use tempfile::TempDir;

/// A grace short enough for fast tests.
pub const GRACE: Duration = Duration::from_millis(250);

/// A runner and the spill directory it writes to.
pub struct Fixture {
    pub runner: ProcessRunner,
    pub spill: TempDir,
}

/// The parent environment tests run children from: `PATH`, `HOME`, plus `extra`.
pub fn parent_env(extra: &[(&str, &str)]) -> ParentEnv {
    let mut vars: Vec<(OsString, OsString)> = ["PATH", "HOME"]
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (OsString::from(name), value)))
        .collect();
    vars.extend(
        extra
            .iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value))),
    );
    ParentEnv::Fixed(vars)
}

pub fn fixture_with(limits: RunLimits, parent: ParentEnv) -> Fixture {
    let spill = tempfile::tempdir().unwrap();
    let runner = ProcessRunner::new(
        limits,
        RunnerOptions {
            parent_env: parent,
            spill_dir: Some(spill.path().to_path_buf()),
        },
    );
    Fixture { runner, spill }
}

pub fn fixture() -> Fixture {
    fixture_with(limits(64_000), parent_env(&[]))
}

pub fn limits(max_output_bytes: usize) -> RunLimits {
    RunLimits {
        max_output_bytes,
        grace: GRACE,
        ..RunLimits::default()
    }
}

pub fn spec(command: &str) -> ShellExecSpec {
    resolve_request(&ShellConfig::default(), ShellExecRequest::new(command)).unwrap()
}

pub fn spec_with(request: ShellExecRequest) -> ShellExecSpec {
    resolve_request(&ShellConfig::default(), request).unwrap()
}

/// Whether process `pid` exists and is not a zombie.
pub fn pid_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .next()
                .unwrap();
            !matches!(state, "Z" | "X" | "x")
        }
        Err(_) => false,
    }
}

/// Pids printed one per line.
pub fn pids(text: &str) -> Vec<i32> {
    text.lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Reads a background process until its accumulated output contains `expected`.
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
