//! The process runner every shell provider shares, and the set of processes it owns.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use dsh_kernel::sync::lock;
use nix::sys::signal::Signal;
use tokio::runtime::Handle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::collector::OutputCollector;
use crate::config::ShellConfig;
use crate::driver::{Driver, OnSettle, Stream, feed_stdin, pump};
use crate::env::child_env;
use crate::error::ShellError;
use crate::process::{SettleHook, ShellProcess};
use crate::spawn::{LaunchOptions, SpawnRequest, spawn_child, split_argv};
use crate::supervised::{Settlement, StopCause, Supervised};
use crate::types::{ShellExecSpec, ShellRunResult};

/// The budgets and grace a runner applies to every process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// In-memory budget of stderr, and of stdout in the background (`maxOutputBytes`).
    pub max_output_bytes: usize,
    /// Spill-file cap per stream (`maxSpillBytes`).
    pub max_spill_bytes: u64,
    /// SIGTERM-to-SIGKILL grace, and the wait for inherited pipes after exit (`graceMs`).
    pub grace: Duration,
}

impl Default for RunLimits {
    fn default() -> Self {
        ShellConfig::default().limits()
    }
}

/// The environment children start from, before the scrub.
#[derive(Debug, Clone, Default)]
pub enum ParentEnv {
    /// This process's environment, read at each spawn.
    #[default]
    Inherit,
    /// A fixed environment (tests inject one instead of changing the process's).
    Fixed(Vec<(OsString, OsString)>),
}

impl ParentEnv {
    fn vars(&self) -> Vec<(OsString, OsString)> {
        match self {
            Self::Inherit => std::env::vars_os().collect(),
            Self::Fixed(vars) => vars.clone(),
        }
    }
}

/// Where a runner's children come from and where their spill files go.
#[derive(Debug, Clone, Default)]
pub struct RunnerOptions {
    /// The parent environment.
    pub parent_env: ParentEnv,
    /// The spill directory (default: a private directory made once per process).
    pub spill_dir: Option<PathBuf>,
}

/// The argv of a shell command: `["bash", "-c", command]`.
pub fn bash_argv(command: &str) -> Vec<String> {
    vec!["bash".to_owned(), "-c".to_owned(), command.to_owned()]
}

/// Runs commands as process groups and owns them until their whole tree is gone.
///
/// [`ProcessRunner::shutdown`] terminates every tree still alive (including what a finished
/// command left running) and waits for it; dropping the runner SIGKILLs them at once.
/// Processes are supervised by tasks of the tokio runtime the call is made on; it needs I/O
/// and timers enabled.
#[derive(Debug)]
pub struct ProcessRunner {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    limits: RunLimits,
    options: RunnerOptions,
    live: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    closed: bool,
    next_id: u64,
    entries: HashMap<u64, Arc<Supervised>>,
}

impl Inner {
    fn live(&self) -> MutexGuard<'_, Live> {
        lock(&self.live)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let live = self.live.get_mut().unwrap_or_else(PoisonError::into_inner);
        for sup in live.entries.values() {
            sup.tree.signal(Signal::SIGKILL);
        }
    }
}

/// Requests termination if a foreground `run` is dropped before its command settled.
struct TerminateUnlessSettled(Arc<Supervised>);

impl Drop for TerminateUnlessSettled {
    fn drop(&mut self) {
        if !self.0.is_settled() {
            self.0.request_terminate();
        }
    }
}

struct Start<'a> {
    argv: &'a [String],
    spec: &'a ShellExecSpec,
    launch: &'a LaunchOptions,
    stdout_max_bytes: usize,
    deadline: Option<Instant>,
    on_settle: Option<OnSettle>,
}

impl ProcessRunner {
    /// A runner with `limits`, spawning from `options`.
    pub fn new(limits: RunLimits, options: RunnerOptions) -> Self {
        crate::tree::become_subreaper();
        crate::orphans::start_guard();
        Self {
            inner: Arc::new(Inner {
                limits,
                options,
                live: Mutex::new(Live::default()),
            }),
        }
    }

    /// The limits every process gets.
    pub fn limits(&self) -> RunLimits {
        self.inner.limits
    }

    /// The directory spill files go to: the configured one, else the process's private
    /// directory, created now if it does not exist yet (so a sandbox can protect it before
    /// any command runs).
    pub fn spill_root(&self) -> std::io::Result<PathBuf> {
        match &self.inner.options.spill_dir {
            Some(dir) => Ok(dir.clone()),
            None => crate::spill::default_spill_dir(),
        }
    }

    /// Runs `argv` in the foreground as `spec` says (its command is not read: `argv` is what
    /// runs) and waits for the outcome. When the timeout, the cancellation or a shutdown
    /// terminated it, this also waits until no process of its group is left. Dropping the
    /// returned future before the command settles terminates it.
    pub async fn run(
        &self,
        argv: &[String],
        spec: &ShellExecSpec,
    ) -> Result<ShellRunResult, ShellError> {
        let (result, _report) = self.run_with(argv, spec, &LaunchOptions::default()).await?;
        Ok(result)
    }

    /// [`ProcessRunner::run`], forked where `launch` says; also returns what the child
    /// wrote on its status channel, if it had one.
    pub async fn run_with(
        &self,
        argv: &[String],
        spec: &ShellExecSpec,
        launch: &LaunchOptions,
    ) -> Result<(ShellRunResult, Option<String>), ShellError> {
        let deadline = Instant::now().checked_add(Duration::from_millis(spec.timeout_ms));
        let sup = self.launch(Start {
            argv,
            spec,
            launch,
            stdout_max_bytes: spec.stdout_max_bytes,
            deadline,
            on_settle: None,
        })?;
        let guard = TerminateUnlessSettled(Arc::clone(&sup));
        let settlement = sup.settled().await.unwrap_or(Settlement {
            exit_code: None,
            signal: None,
            cause: Some(StopCause::Requested),
            launch_report: None,
        });
        if settlement.cause.is_some() {
            // The group gets SIGKILL one grace period after SIGTERM; wait for it to be gone,
            // but not forever: a process stuck in uninterruptible sleep cannot be killed.
            let _ = tokio::time::timeout(self.exit_bound(), sup.tree_exited()).await;
        }
        drop(guard);
        let stdout = sup.stdout().finalize();
        let stderr = sup.stderr().finalize();
        let result = ShellRunResult {
            exit_code: settlement.exit_code,
            signal: settlement.signal,
            timed_out: settlement.cause == Some(StopCause::Timeout),
            aborted: settlement.cause == Some(StopCause::Abort),
            timeout_ms: spec.timeout_ms,
            stdout,
            stderr,
            sandbox: None,
        };
        Ok((result, settlement.launch_report))
    }

    /// Starts `argv` in the background and returns its handle at once. No timeout applies;
    /// stdout gets `max_output_bytes`. A spawn failure is not an error here: the handle
    /// settles as killed and its first read carries `spawn failed: <error>`. `hook` runs once
    /// at settlement, before `done` resolves, and may return sandbox facts to stamp.
    pub fn start(
        &self,
        argv: &[String],
        spec: &ShellExecSpec,
        hook: Option<SettleHook>,
    ) -> Result<ShellProcess, ShellError> {
        self.start_with(argv, spec, hook, &LaunchOptions::default())
    }

    /// [`ProcessRunner::start`], forked where `launch` says; the hook sees what the child
    /// wrote on its status channel.
    pub fn start_with(
        &self,
        argv: &[String],
        spec: &ShellExecSpec,
        hook: Option<SettleHook>,
        launch: &LaunchOptions,
    ) -> Result<ShellProcess, ShellError> {
        let process = ShellProcess::new(spec.signal.clone(), hook);
        let settle = process.settle_callback();
        let launched = self.launch(Start {
            argv,
            spec,
            launch,
            stdout_max_bytes: self.inner.limits.max_output_bytes,
            deadline: None,
            on_settle: Some(Box::new(move |settlement, stderr| {
                settle(settlement, stderr);
            })),
        });
        match launched {
            Ok(sup) => {
                process.attach(sup);
                Ok(process)
            }
            Err(error @ ShellError::Spawn { .. }) => {
                process.fail_spawn(&error);
                Ok(process)
            }
            Err(error) => Err(error),
        }
    }

    /// How many process trees the runner still owns.
    pub fn live_processes(&self) -> usize {
        self.inner.live().entries.len()
    }

    /// Stops starting processes, terminates every tree still alive (SIGTERM, then SIGKILL
    /// after the grace) and waits until each is gone.
    pub async fn shutdown(&self) {
        let entries: Vec<Arc<Supervised>> = {
            let mut live = self.inner.live();
            live.closed = true;
            live.entries.values().cloned().collect()
        };
        for sup in &entries {
            sup.request_terminate();
        }
        // Bounded, as a terminated run's wait is: a process stuck in uninterruptible sleep
        // must not keep the harness from exiting.
        let bound = self.exit_bound();
        let all_gone = async {
            for sup in entries {
                sup.tree_exited().await;
            }
        };
        let _ = tokio::time::timeout(bound, all_gone).await;
    }

    /// How long a terminated tree is waited for: SIGKILL comes one grace period after
    /// SIGTERM, and the kill is repeated until the tree is gone.
    fn exit_bound(&self) -> Duration {
        self.inner
            .limits
            .grace
            .saturating_mul(2)
            .saturating_add(Duration::from_secs(1))
    }

    fn launch(&self, start: Start<'_>) -> Result<Arc<Supervised>, ShellError> {
        let Start {
            argv,
            spec,
            launch,
            stdout_max_bytes,
            deadline,
            on_settle,
        } = start;
        if spec
            .signal
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            return Err(ShellError::AbortedBeforeSpawn {
                reason: "aborted".to_owned(),
            });
        }
        split_argv(argv)?;
        let handle = Handle::try_current().map_err(|_| ShellError::NoRuntime)?;
        if self.inner.live().closed {
            return Err(ShellError::Closed);
        }
        let env = child_env(
            self.inner.options.parent_env.vars(),
            &spec.env,
            &spec.dsh_env,
        );
        let request = SpawnRequest {
            argv: argv.to_vec(),
            cwd: spec.workdir.clone(),
            env,
            with_stdin: spec.stdin.is_some(),
            // Asked here, on the caller's thread: a guard started on a launch thread would
            // inherit its confinement.
            guard: crate::orphans::guard_input(),
        };
        let spawned = spawn_child(request, launch, &handle)?;
        let pgid = i32::try_from(spawned.pid).unwrap_or(-1);
        let limits = self.inner.limits;
        let spill_dir = &self.inner.options.spill_dir;
        let collector = |label, max| {
            OutputCollector::new(label, max, Some(limits.max_spill_bytes), spill_dir.clone())
        };
        let sup = Arc::new(Supervised::new(
            pgid,
            collector("stdout", stdout_max_bytes),
            collector("stderr", limits.max_output_bytes),
        ));
        let registered = {
            let mut live = self.inner.live();
            let closed = live.closed;
            let id = live.next_id;
            live.next_id += 1;
            if !closed {
                live.entries.insert(id, Arc::clone(&sup));
            }
            (!closed).then_some(id)
        };
        let io = {
            let sup = Arc::clone(&sup);
            let (stdout, stderr) = (spawned.stdout, spawned.stderr);
            handle.spawn(async move {
                tokio::join!(
                    pump(stdout, &sup, Stream::Stdout),
                    pump(stderr, &sup, Stream::Stderr)
                );
            })
        };
        let stdin = spawned
            .stdin
            .zip(spec.stdin.clone())
            .map(|(pipe, data)| handle.spawn(feed_stdin(pipe, data)));
        let weak = Arc::downgrade(&self.inner);
        let release = Box::new(move || {
            crate::orphans::withdraw(pgid);
            if let (Some(inner), Some(id)) = (weak.upgrade(), registered) {
                inner.live().entries.remove(&id);
            }
        });
        let driver = Driver {
            child: spawned.child,
            status_channel: spawned.status,
            io,
            stdin,
            sup: Arc::clone(&sup),
            grace: limits.grace,
            deadline,
            cancel: spec.signal.clone(),
            on_settle,
            release,
        };
        if registered.is_none() {
            // Shut down while spawning: the supervisor still reaps it.
            sup.request_terminate();
            handle.spawn(driver.run());
            return Err(ShellError::Closed);
        }
        handle.spawn(driver.run());
        Ok(sup)
    }
}
