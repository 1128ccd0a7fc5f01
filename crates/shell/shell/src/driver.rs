//! The task that supervises one process from spawn until its whole tree is gone.
//!
//! Phase one ends when the direct child settled: it exited and its pipes closed, or it
//! exited and the pipes stayed open (a descendant holds them) for the grace period, after
//! which reading stops. Meanwhile the timeout, the caller's cancellation and terminate
//! requests each start the termination once (SIGTERM to the group, SIGKILL after the grace
//! if anything of the group still lives); the first cause is kept.
//!
//! Phase two watches the tree until no process of the group can run, keeping the SIGKILL
//! escalation armed, so a TERM-trapping descendant cannot outlive it. Polls are 15 ms apart
//! while terminating; once SIGKILL is sent it is sent again at each poll, the polls backing off
//! to one second, as they do for a tree left running on purpose.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::task::JoinHandle;
use tokio::time::{Instant, Sleep, sleep, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::signals::signal_name;
use crate::spawn::read_status;
use crate::supervised::{Settlement, StopCause, Supervised};

/// Poll period of the tree while terminating it.
const TICK: Duration = Duration::from_millis(15);
/// Longest poll period of a tree left running after its direct child exited.
const MAX_IDLE_TICK: Duration = Duration::from_secs(1);
/// Read size per pipe.
const READ_CHUNK: usize = 64 * 1024;

/// Called once the child settled, before waiters see it: the settlement and the stderr tail.
pub(crate) type OnSettle = Box<dyn FnOnce(&Settlement, &str) + Send>;

/// Everything one supervising task owns.
pub(crate) struct Driver {
    pub(crate) child: Child,
    pub(crate) status_channel: Option<OwnedFd>,
    pub(crate) io: JoinHandle<()>,
    pub(crate) stdin: Option<JoinHandle<()>>,
    pub(crate) sup: Arc<Supervised>,
    pub(crate) grace: Duration,
    pub(crate) deadline: Option<Instant>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) on_settle: Option<OnSettle>,
    pub(crate) release: Box<dyn FnOnce() + Send>,
}

/// SIGKILLs the tree if the task is dropped before it saw the tree gone (runtime shutdown).
struct KillOnDrop(Arc<Supervised>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !self.0.tree.exited() {
            self.0.tree.signal(Signal::SIGKILL);
        }
    }
}

struct Termination {
    cause: Option<StopCause>,
    escalate_at: Option<Instant>,
    /// SIGKILL was sent: it is sent again on every tick while anything of the tree lives (a
    /// process outside the group may fork between the scan that finds it and its kill).
    killing: bool,
}

impl Termination {
    /// Starts terminating for `cause` (the caller checked that none was recorded yet).
    fn start(&mut self, cause: StopCause, sup: &Supervised, grace: Duration) {
        self.cause = Some(cause);
        if sup.tree.signal(Signal::SIGTERM) {
            self.escalate_at = Some(Instant::now() + grace);
        }
    }

    fn escalate(&mut self, sup: &Supervised) {
        self.escalate_at = None;
        self.killing = true;
        sup.tree.signal(Signal::SIGKILL);
    }
}

fn sleep_until_opt(at: Option<Instant>) -> Sleep {
    // A disabled branch still builds its future; it is never polled.
    sleep_until(at.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400)))
}

impl Driver {
    /// Supervises the process to the end.
    pub(crate) async fn run(self) {
        let Self {
            mut child,
            status_channel,
            mut io,
            stdin,
            sup,
            grace,
            deadline,
            cancel,
            on_settle,
            release,
        } = self;
        let _guard = KillOnDrop(Arc::clone(&sup));
        let cancelled = async move {
            match cancel {
                Some(token) => token.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        let mut term = Termination {
            cause: None,
            escalate_at: None,
            killing: false,
        };
        let mut status = None;
        let mut exited_at: Option<Instant> = None;
        let mut drained = false;
        while status.is_none() || !drained {
            tokio::select! {
                biased;
                result = child.wait(), if status.is_none() => {
                    sup.tree.mark_reaped();
                    status = Some(result.ok());
                    exited_at = Some(Instant::now());
                }
                _ = &mut io, if !drained => drained = true,
                () = &mut cancelled, if term.cause.is_none() => {
                    term.start(StopCause::Abort, &sup, grace);
                }
                () = sleep_until_opt(deadline), if term.cause.is_none() && deadline.is_some() => {
                    term.start(StopCause::Timeout, &sup, grace);
                }
                () = sup.wake.notified(), if term.cause.is_none() => {
                    if sup.terminate_requested() {
                        term.start(StopCause::Requested, &sup, grace);
                    }
                }
                () = sleep_until_opt(term.escalate_at), if term.escalate_at.is_some() => {
                    term.escalate(&sup);
                }
                () = sleep_until_opt(exited_at.map(|at| at + grace)),
                    if exited_at.is_some() && !drained => {
                    // A descendant holds the pipes: stop reading rather than wait for it.
                    io.abort();
                    drained = true;
                }
            }
        }
        if let Some(stdin) = stdin {
            stdin.abort();
        }
        let (exit_code, signal) = match status.flatten() {
            Some(status) => (status.code(), status.signal().map(signal_name)),
            None => (None, None),
        };
        let settlement = Settlement {
            exit_code,
            signal,
            cause: term.cause,
            launch_report: status_channel.and_then(read_status),
        };
        sup.stdout().seal();
        let stderr = {
            let mut stderr = sup.stderr();
            stderr.seal();
            on_settle.as_ref().map(|_| stderr.read_from(0).text)
        };
        if let Some(on_settle) = on_settle {
            on_settle(&settlement, stderr.as_deref().unwrap_or_default());
        }
        sup.publish_settlement(settlement);
        watch_tree(&sup, &mut term, grace).await;
        release();
        sup.publish_tree_exit();
    }
}

/// Phase two: until no process of the group can run.
async fn watch_tree(sup: &Supervised, term: &mut Termination, grace: Duration) {
    let mut idle_tick = TICK;
    let mut kill_tick = TICK;
    while sup.tree.alive() {
        let terminating = term.cause.is_some();
        let tick = if term.killing {
            kill_tick
        } else if terminating {
            TICK
        } else {
            idle_tick
        };
        tokio::select! {
            biased;
            () = sleep_until_opt(term.escalate_at), if term.escalate_at.is_some() => {
                term.escalate(sup);
            }
            () = sup.wake.notified(), if !terminating => {
                if sup.terminate_requested() {
                    term.start(StopCause::Requested, sup, grace);
                }
            }
            () = sleep(tick) => {
                if term.killing {
                    // Again for what forked since; less often the longer it takes, so a
                    // process stuck in the kernel does not cost a /proc scan every tick.
                    sup.tree.signal(Signal::SIGKILL);
                    kill_tick = (kill_tick * 2).min(MAX_IDLE_TICK);
                } else if !terminating {
                    idle_tick = (idle_tick * 2).min(MAX_IDLE_TICK);
                }
            }
        }
    }
}

/// Which collector a pipe feeds.
#[derive(Clone, Copy)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// Reads one pipe to its end into its collector.
pub(crate) async fn pump(mut pipe: impl AsyncRead + Unpin, sup: &Supervised, stream: Stream) {
    let mut buffer = vec![0_u8; READ_CHUNK];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) => break,
            Ok(read) => {
                let chunk = buffer.get(..read).unwrap_or_default();
                match stream {
                    Stream::Stdout => sup.stdout().push(chunk),
                    Stream::Stderr => sup.stderr().push(chunk),
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Writes `data` to the child's stdin and closes it; a child that does not read (EPIPE) is
/// not an error.
pub(crate) async fn feed_stdin(mut stdin: ChildStdin, data: String) {
    let _ = stdin.write_all(data.as_bytes()).await;
    let _ = stdin.shutdown().await;
}
