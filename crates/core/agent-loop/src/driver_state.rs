//! The state of an agent's driver: idle, or running an activity (the turns one wake causes),
//! with the decisions that move it between the two. The agent keeps it under a lock and
//! takes each decision while holding it.

use crate::cause::{Abort, CancelCause};

/// The driver's state.
#[derive(Debug)]
pub(crate) struct DriverState {
    /// The last turn number logged.
    last_turn: u64,
    running: Option<Running>,
}

/// A running activity.
#[derive(Debug)]
struct Running {
    abort: Abort,
    /// The turn it is on (the last logged before its first `turn/start`).
    turn: u64,
    /// The last step its turn opened.
    step: u64,
    wake_requested: bool,
    /// The driver is going idle: a wake now is latched and replayed, never lost.
    finishing: bool,
    /// `turn/start` of `turn` was logged by the wake that started the activity.
    opened: bool,
}

impl Running {
    fn new(turn: u64) -> Self {
        Self {
            abort: Abort::default(),
            turn,
            step: 0,
            wake_requested: false,
            finishing: false,
            opened: false,
        }
    }

    /// A fresh activity continuing after `self`'s last turn.
    fn restart(&mut self) {
        *self = Self::new(self.turn);
    }
}

/// The turn the driver runs next.
#[derive(Debug)]
pub(crate) struct NextTurn {
    /// The activity's cancellation.
    pub(crate) abort: Abort,
    /// Whether its `turn/start` is already logged (by the waking call).
    pub(crate) opened: bool,
    /// Its number.
    pub(crate) turn: u64,
}

/// What the driver does after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterTurn {
    /// Another turn: messages wait (the activity restarts).
    Again,
    /// The activity is finishing: the driver announces that it goes idle.
    Finishing,
    /// No activity is left (the driver goes idle at once).
    Gone,
}

impl DriverState {
    /// An idle driver whose log ends after `last_turn`.
    pub(crate) fn new(last_turn: u64) -> Self {
        Self {
            last_turn,
            running: None,
        }
    }

    /// Whether an activity runs.
    pub(crate) fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Whether the running activity is cancelled.
    pub(crate) fn is_aborted(&self) -> bool {
        self.running
            .as_ref()
            .is_some_and(|running| running.abort.is_aborted())
    }

    /// Records `cause` on the running activity (see [`Abort::request`]) and returns its
    /// cancellation, to fire once the caller is done.
    pub(crate) fn request_abort(&self, cause: &CancelCause) -> Option<Abort> {
        self.running.as_ref().map(|running| {
            running.abort.request(cause.clone());
            running.abort.clone()
        })
    }

    /// Forgets a latched wake (the messages it was for were cleared).
    pub(crate) fn forget_wake(&mut self) {
        if let Some(running) = self.running.as_mut() {
            running.wake_requested = false;
        }
    }

    /// A waking message arrived (`after_abort`: while the activity was cancelled). Idle, it
    /// starts an activity when `pending` says a message waits and returns `true`. Running,
    /// it latches the wake when it must wait for a cancelled activity, or for a driver that
    /// is going idle (never for a disposal), so it is replayed rather than lost.
    pub(crate) fn wake(&mut self, after_abort: bool, pending: impl FnOnce() -> bool) -> bool {
        let last_turn = self.last_turn;
        match self.running.as_mut() {
            Some(running) => {
                if (after_abort || running.finishing)
                    && running.abort.cause() != Some(CancelCause::Disposed)
                {
                    running.wake_requested = true;
                }
                false
            }
            // A message the last turn already claimed leaves nothing to wake for.
            None if !pending() => false,
            None => {
                self.running = Some(Running::new(last_turn));
                true
            }
        }
    }

    /// The number of the turn a new activity opens.
    pub(crate) fn turn_to_open(&self) -> Option<u64> {
        self.running.as_ref().map(|running| running.turn + 1)
    }

    /// Notes that the waking call logged `turn/start` of `turn`.
    pub(crate) fn opened(&mut self, turn: u64) {
        if let Some(running) = self.running.as_mut() {
            running.turn = turn;
            running.opened = true;
        }
    }

    /// The turn the running activity runs next: the one its wake opened, else the one after
    /// its last. `None` when no activity runs.
    pub(crate) fn next_turn(&mut self) -> Option<NextTurn> {
        self.running.as_mut().map(|running| {
            let opened = std::mem::take(&mut running.opened);
            let turn = if opened {
                running.turn
            } else {
                running.turn + 1
            };
            NextTurn {
                abort: running.abort.clone(),
                opened,
                turn,
            }
        })
    }

    /// Notes that the running activity logged `turn/start` of `turn`.
    pub(crate) fn mark_turn(&mut self, turn: u64) {
        if let Some(running) = self.running.as_mut() {
            running.turn = turn;
        }
    }

    /// Notes that the running turn logged `step/start` of `step`.
    pub(crate) fn mark_step(&mut self, step: u64) {
        if let Some(running) = self.running.as_mut() {
            running.step = step;
        }
    }

    /// The running activity's turn and step (zeros when none runs).
    pub(crate) fn position(&self) -> (u64, u64) {
        self.running
            .as_ref()
            .map(|running| (running.turn, running.step))
            .unwrap_or_default()
    }

    /// A turn ended; `may_continue` when it ran to its natural end. It goes on when
    /// `more_work` says messages wait.
    pub(crate) fn after_turn(
        &mut self,
        may_continue: bool,
        more_work: impl FnOnce() -> bool,
    ) -> AfterTurn {
        let Some(running) = self.running.as_mut() else {
            return AfterTurn::Gone;
        };
        if may_continue && more_work() {
            running.restart();
            return AfterTurn::Again;
        }
        running.finishing = true;
        AfterTurn::Finishing
    }

    /// The driver announced that it goes idle: a wake latched meanwhile, with messages still
    /// waiting (`more_work`), restarts the activity (`true`); otherwise it ends.
    pub(crate) fn finish(&mut self, more_work: impl FnOnce() -> bool) -> bool {
        let latched = self
            .running
            .as_ref()
            .is_some_and(|running| running.wake_requested);
        if latched && more_work() {
            if let Some(running) = self.running.as_mut() {
                running.restart();
            }
            true
        } else {
            if let Some(running) = self.running.take() {
                self.last_turn = running.turn;
            }
            false
        }
    }
}
