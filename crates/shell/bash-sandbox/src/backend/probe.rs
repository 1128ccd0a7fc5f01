//! Which backend works here: the functional probes and the chain they are walked in.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dsh_shell::{NetworkPolicy, SandboxExecutionPolicy, SandboxMode, WritePlan};

use super::{
    Backend, Enforcement, LaunchStrategy, SandboxOptions, SandboxRunner, bwrap_profile_args,
};
use crate::confine::probe;
use crate::sandbox_run::PROBE_PARTIAL_LINE;

/// The runner's functional probe: `<runner> --probe` must exit 0 within `timeout`; its
/// stdout tells full from partial enforcement. `None`: unusable.
pub fn probe_runner(runner: &SandboxRunner, timeout: Duration) -> Option<Enforcement> {
    let mut command = Command::new(&runner.program);
    command.args(&runner.prefix_args).arg("--probe");
    let (status, stdout) = run_probe(command, timeout)?;
    if !status.success() {
        return None;
    }
    Some(if stdout.contains(PROBE_PARTIAL_LINE) {
        Enforcement::Partial
    } else {
        Enforcement::Full
    })
}

/// bubblewrap's functional probe: `bwrap <read-only profile> -- true` must exit 0 within
/// `timeout`.
pub fn probe_bwrap(bwrap: &SandboxRunner, timeout: Duration) -> bool {
    let probe_policy = SandboxExecutionPolicy {
        mode: SandboxMode::ReadOnly,
        workspace_root: PathBuf::from("/"),
        session_id: None,
        network: NetworkPolicy::Allow,
        protected_paths: Vec::new(),
    };
    let plan = WritePlan {
        roots: Vec::new(),
        carve_outs: Vec::new(),
    };
    let Ok(profile) = bwrap_profile_args(&probe_policy, &plan, false) else {
        return false;
    };
    let mut command = Command::new(&bwrap.program);
    command
        .args(&bwrap.prefix_args)
        .args(profile)
        .args(["--", "true"]);
    run_probe(command, timeout).is_some_and(|(status, _)| status.success())
}

/// Walks the chain: Landlock (probed in this process; with [`LaunchStrategy::Runner`] the
/// runner's own probe must pass too), then bubblewrap when installed and working.
/// `None`: no backend is usable.
pub fn select_backend(options: &SandboxOptions) -> Option<Backend> {
    if let Ok(support) = probe() {
        let enforcement = match options.strategy {
            LaunchStrategy::Thread => Some(Enforcement::of(support.enforced)),
            LaunchStrategy::Runner => probe_runner(&options.runner, options.probe_timeout),
        };
        if let Some(enforcement) = enforcement {
            return Some(Backend::Landlock {
                enforcement,
                abi: support.abi,
            });
        }
    }
    let bwrap = options.bwrap.as_ref()?;
    probe_bwrap(bwrap, options.probe_timeout).then_some(Backend::Bwrap)
}

/// Runs one probe child, stdout captured, bounded by `timeout` (killed past it).
fn run_probe(mut command: Command, timeout: Duration) -> Option<(ExitStatus, String)> {
    let deadline = Instant::now().checked_add(timeout)?;
    // A probe gets none of this process's environment (its secrets included) but PATH.
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let mut child = command
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let (sender, receiver) = mpsc::channel();
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            let _ = sender.send(text);
        });
    }
    let mut step = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(step);
                step = (step * 2).min(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    let stdout = receiver.recv_timeout(wait).unwrap_or_default();
    Some((status, stdout))
}
