//! The handle of a background process (dsh's `ShellProcess`).

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use dsh_kernel::sync::lock;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::collector::OutputRead;
use crate::error::ShellError;
use crate::supervised::{Settlement, Supervised};
use crate::types::{ShellProcessRead, ShellProcessStatus, ShellSandboxInfo};

/// What a background process settled as, shown to a [`SettleHook`].
#[derive(Debug)]
pub struct ProcessSettlement<'a> {
    /// The status it settled with.
    pub status: ShellProcessStatus,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<&'a str>,
    /// The kept stderr tail, or the `spawn failed: ...` note when it never started.
    pub stderr: &'a str,
    /// Why it never started, when it did not.
    pub spawn_error: Option<&'a ShellError>,
    /// What it wrote on its status channel, when it had one and wrote anything.
    pub launch_report: Option<&'a str>,
}

/// Runs once when a background process settles, before its `done` resolves; the facts it
/// returns are stamped as the process's sandbox facts (a sandboxing executor classifies the
/// outcome here).
pub type SettleHook = Box<dyn FnOnce(&ProcessSettlement<'_>) -> Option<ShellSandboxInfo> + Send>;

/// A background process. Cloning shares the handle; output stays readable after exit.
#[derive(Clone)]
pub struct ShellProcess {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    sup: OnceLock<Arc<Supervised>>,
    done: watch::Sender<bool>,
    cancel: Option<CancellationToken>,
    hook: Mutex<Option<SettleHook>>,
}

struct State {
    status: ShellProcessStatus,
    exit_code: Option<i32>,
    signal: Option<String>,
    sandbox: Option<ShellSandboxInfo>,
    spawn_note: Option<String>,
    stdout_offset: u64,
    stderr_offset: u64,
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn run_hook(&self, settlement: &ProcessSettlement<'_>) {
        let hook = lock(&self.hook).take();
        if let Some(sandbox) = hook.and_then(|hook| hook(settlement)) {
            self.state().sandbox = Some(sandbox);
        }
        self.done.send_replace(true);
    }

    fn settle(&self, settlement: &Settlement, stderr: &str) {
        let (status, exit_code, signal) = {
            let mut state = self.state();
            if state.status == ShellProcessStatus::Running {
                let cancelled = self
                    .cancel
                    .as_ref()
                    .is_some_and(CancellationToken::is_cancelled);
                state.status = if cancelled || settlement.signal.is_some() {
                    ShellProcessStatus::Killed
                } else {
                    ShellProcessStatus::Completed
                };
            }
            state.exit_code = settlement.exit_code;
            state.signal.clone_from(&settlement.signal);
            (state.status, state.exit_code, state.signal.clone())
        };
        self.run_hook(&ProcessSettlement {
            status,
            exit_code,
            signal: signal.as_deref(),
            stderr,
            spawn_error: None,
            launch_report: settlement.launch_report.as_deref(),
        });
    }
}

impl ShellProcess {
    pub(crate) fn new(cancel: Option<CancellationToken>, hook: Option<SettleHook>) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    status: ShellProcessStatus::Running,
                    exit_code: None,
                    signal: None,
                    sandbox: None,
                    spawn_note: None,
                    stdout_offset: 0,
                    stderr_offset: 0,
                }),
                sup: OnceLock::new(),
                done: watch::Sender::new(false),
                cancel,
                hook: Mutex::new(hook),
            }),
        }
    }

    /// The supervisor's settlement callback.
    pub(crate) fn settle_callback(&self) -> impl FnOnce(&Settlement, &str) + Send + 'static {
        let inner = Arc::clone(&self.inner);
        move |settlement, stderr| inner.settle(settlement, stderr)
    }

    pub(crate) fn attach(&self, sup: Arc<Supervised>) {
        let _ = self.inner.sup.set(sup);
    }

    /// Settles a process that never started: killed, the error readable once on stderr.
    pub(crate) fn fail_spawn(&self, error: &ShellError) {
        let note = format!("spawn failed: {error}");
        {
            let mut state = self.inner.state();
            state.status = ShellProcessStatus::Killed;
            state.spawn_note = Some(note.clone());
        }
        self.inner.run_hook(&ProcessSettlement {
            status: ShellProcessStatus::Killed,
            exit_code: None,
            signal: None,
            stderr: &note,
            spawn_error: Some(error),
            launch_report: None,
        });
    }

    /// Where the process is in its life.
    pub fn status(&self) -> ShellProcessStatus {
        self.inner.state().status
    }

    /// The exit code once it exited; `None` while running or when a signal ended it.
    pub fn exit_code(&self) -> Option<i32> {
        self.inner.state().exit_code
    }

    /// The signal that ended it (`SIGTERM`, `SIGKILL`, ...).
    pub fn signal(&self) -> Option<String> {
        self.inner.state().signal.clone()
    }

    /// Sandbox facts, stamped when a sandboxing executor's hook returned them.
    pub fn sandbox(&self) -> Option<ShellSandboxInfo> {
        self.inner.state().sandbox.clone()
    }

    /// The process id of the direct child, which leads the process group; `None` when it
    /// never started.
    pub fn pid(&self) -> Option<u32> {
        self.inner
            .sup
            .get()
            .and_then(|sup| u32::try_from(sup.tree.pgid()).ok())
    }

    /// Whether it settled.
    pub fn is_done(&self) -> bool {
        *self.inner.done.borrow()
    }

    /// Resolves once the process settled (its status, exit facts and sandbox facts are set by
    /// then). Never fails.
    pub fn done(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.inner.done.subscribe();
        async move {
            let _ = receiver.wait_for(|done| *done).await;
        }
    }

    /// The output since the previous read: stdout, then stderr after a `[stderr]` line (with
    /// a newline before it only when stdout is non-empty and does not end with one).
    pub fn read_output(&self) -> ShellProcessRead {
        let mut state = self.inner.state();
        let (out, err) = match self.inner.sup.get() {
            Some(sup) => (
                sup.stdout().read_from(state.stdout_offset),
                sup.stderr().read_from(state.stderr_offset),
            ),
            None => (empty_read(), empty_read()),
        };
        state.stdout_offset = out.next_offset;
        state.stderr_offset = err.next_offset;
        let err_text = if err.text.is_empty() {
            state.spawn_note.take().unwrap_or_default()
        } else {
            err.text
        };
        let mut delta = out.text;
        if !err_text.is_empty() {
            if !delta.is_empty() && !delta.ends_with('\n') {
                delta.push('\n');
            }
            delta.push_str("[stderr]\n");
            delta.push_str(&err_text);
        }
        ShellProcessRead {
            delta,
            lossy: out.lossy || err.lossy,
            stdout_spill_path: out.spill_path,
            stderr_spill_path: err.spill_path,
        }
    }

    /// Terminates the process group (SIGTERM, then SIGKILL after the grace). `false` when it
    /// had already settled or been killed.
    pub fn kill(&self) -> bool {
        {
            let mut state = self.inner.state();
            if state.status != ShellProcessStatus::Running {
                return false;
            }
            state.status = ShellProcessStatus::Killed;
        }
        if let Some(sup) = self.inner.sup.get() {
            sup.request_terminate();
        }
        true
    }
}

fn empty_read() -> OutputRead {
    OutputRead {
        text: String::new(),
        next_offset: 0,
        lossy: false,
        spill_path: None,
    }
}

impl fmt::Debug for ShellProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state();
        f.debug_struct("ShellProcess")
            .field("pid", &self.pid())
            .field("status", &state.status)
            .field("exit_code", &state.exit_code)
            .field("signal", &state.signal)
            .finish_non_exhaustive()
    }
}
