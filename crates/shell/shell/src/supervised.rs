//! What the supervising task shares with the handles of one process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use dsh_kernel::sync::lock;
use tokio::sync::{Notify, watch};

use crate::collector::OutputCollector;
use crate::tree::ProcessTree;

/// Why the process was told to stop (the first cause wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopCause {
    /// The foreground timeout fired.
    Timeout,
    /// The caller's cancellation token fired.
    Abort,
    /// `kill()`, the runner's shutdown, or a dropped `run` future asked.
    Requested,
}

/// How the direct child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settlement {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<String>,
    pub(crate) cause: Option<StopCause>,
    /// What the child wrote on its status channel, when it had one.
    pub(crate) launch_report: Option<String>,
}

/// One supervised process.
#[derive(Debug)]
pub(crate) struct Supervised {
    pub(crate) tree: ProcessTree,
    stdout: Mutex<OutputCollector>,
    stderr: Mutex<OutputCollector>,
    terminate: AtomicBool,
    pub(crate) wake: Notify,
    settled: watch::Sender<Option<Settlement>>,
    tree_exited: watch::Sender<bool>,
}

impl Supervised {
    pub(crate) fn new(pgid: i32, stdout: OutputCollector, stderr: OutputCollector) -> Self {
        Self {
            tree: ProcessTree::new(pgid),
            stdout: Mutex::new(stdout),
            stderr: Mutex::new(stderr),
            terminate: AtomicBool::new(false),
            wake: Notify::new(),
            settled: watch::Sender::new(None),
            tree_exited: watch::Sender::new(false),
        }
    }

    pub(crate) fn stdout(&self) -> MutexGuard<'_, OutputCollector> {
        lock(&self.stdout)
    }

    pub(crate) fn stderr(&self) -> MutexGuard<'_, OutputCollector> {
        lock(&self.stderr)
    }

    /// Asks the supervisor to terminate the tree (SIGTERM, then SIGKILL after the grace).
    pub(crate) fn request_terminate(&self) {
        self.terminate.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    pub(crate) fn terminate_requested(&self) -> bool {
        self.terminate.load(Ordering::SeqCst)
    }

    pub(crate) fn publish_settlement(&self, settlement: Settlement) {
        self.settled.send_replace(Some(settlement));
    }

    pub(crate) fn is_settled(&self) -> bool {
        self.settled.borrow().is_some()
    }

    /// Waits until the direct child settled.
    pub(crate) async fn settled(&self) -> Option<Settlement> {
        let mut receiver = self.settled.subscribe();
        let settled = receiver.wait_for(Option::is_some).await.ok()?;
        settled.clone()
    }

    pub(crate) fn publish_tree_exit(&self) {
        self.tree.mark_exited();
        self.tree_exited.send_replace(true);
    }

    /// Waits until the whole tree was seen gone.
    pub(crate) async fn tree_exited(&self) {
        let mut receiver = self.tree_exited.subscribe();
        let _ = receiver.wait_for(|exited| *exited).await;
    }
}
