//! The agent: one session, its inbox, and the driver that turns queued messages into turns.
//!
//! The driver is idle or running. A waking message ([`Agent::followup`], [`Agent::steer`])
//! starts it when idle; it then runs turns while messages wait, and goes idle again. A wake
//! that arrives while a cancelled turn is still winding down is latched and replayed when
//! it is over, so a follow-up sent right after a stop is never lost.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use dsh_llm::Message;
use dsh_session::LiveSession;
use futures_util::FutureExt;
use tokio::sync::watch;

use crate::cause::{Abort, CancelCause};
use crate::error::AgentError;
use crate::events::{
    AgentErrorEvent, AgentErrorNotice, AgentInboxClaimed, AgentInboxDiscarded, AgentInboxInserted,
    AgentStatusChanged, InboxClaim, InboxNotice, StatusChange,
};
use crate::inbox::{Inbox, Spliced};
use crate::options::{AgentOptions, AgentStatus, InboxTarget};
use crate::request::RequestState;
use crate::runtime::LoopRuntime;
use crate::runtime_context::Retained;

/// An agent: the model driver of one session. Its id is the session's id.
pub struct Agent {
    id: String,
    options: AgentOptions,
    session: Arc<LiveSession>,
    pub(crate) runtime: Arc<LoopRuntime>,
    inbox: Mutex<Inbox>,
    driver: Mutex<Driver>,
    idle: watch::Sender<bool>,
    disposed: AtomicBool,
    pub(crate) request: Mutex<RequestState>,
    pub(crate) runtime_context: Mutex<Retained>,
    me: Weak<Agent>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("id", &self.id)
            .field("options", &self.options)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

/// The driver's state.
#[derive(Debug)]
struct Driver {
    /// The last turn number logged.
    last_turn: u64,
    running: Option<Running>,
}

/// A running activity.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) abort: Abort,
    pub(crate) turn: u64,
    pub(crate) step: u64,
    wake_requested: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Agent {
    /// An agent over `session`, its inbox and caches restored from the log.
    pub(crate) fn new(
        runtime: Arc<LoopRuntime>,
        session: Arc<LiveSession>,
        options: AgentOptions,
    ) -> Result<Arc<Self>, AgentError> {
        options.check().map_err(AgentError::Invalid)?;
        let (header, events) = session.with(|s| (s.header().clone(), s.events().to_vec()));
        let inbox = Inbox::replay(&events, header.seed_length.unwrap_or(0))
            .map_err(|why| AgentError::Invalid(format!("session \"{}\": {why}", header.id)))?;
        let last_turn = events
            .iter()
            .rev()
            .find(|event| event.kind == "turn/start")
            .and_then(|event| event.data.get("turn").and_then(serde_json::Value::as_u64))
            .unwrap_or(0);
        let request = RequestState::restore(&events);
        let retained = Retained::restore(&events);
        let (idle, _) = watch::channel(true);
        Ok(Arc::new_cyclic(|me| Self {
            id: session.id().to_owned(),
            options,
            session,
            runtime,
            inbox: Mutex::new(inbox),
            driver: Mutex::new(Driver {
                last_turn,
                running: None,
            }),
            idle,
            disposed: AtomicBool::new(false),
            request: Mutex::new(request),
            runtime_context: Mutex::new(retained),
            me: me.clone(),
        }))
    }

    /// The agent's (and its session's) id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The options it was created with.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Its session.
    pub fn session(&self) -> &Arc<LiveSession> {
        &self.session
    }

    /// Whether a turn is running.
    pub fn status(&self) -> AgentStatus {
        if lock(&self.driver).running.is_some() {
            AgentStatus::Running
        } else {
            AgentStatus::Idle
        }
    }

    /// The messages waiting in `target`.
    pub fn pending(&self, target: InboxTarget) -> Vec<Message> {
        lock(&self.inbox).queue(target).to_vec()
    }

    /// Queues `message` in `target` and, with `wakeup`, starts the driver if it is idle. A
    /// waking message sent while the current activity is cancelled waits for the next turn.
    pub fn send(
        &self,
        message: Message,
        target: InboxTarget,
        wakeup: bool,
    ) -> Result<(), AgentError> {
        if self.disposed.load(Ordering::SeqCst) {
            return Err(AgentError::Invalid(format!(
                "agent \"{}\" was disposed and takes no more messages",
                self.id
            )));
        }
        let waking_after_abort = wakeup
            && lock(&self.driver)
                .running
                .as_ref()
                .is_some_and(|running| running.abort.is_aborted());
        let target = if waking_after_abort {
            InboxTarget::NextTurn
        } else {
            target
        };
        let spliced = lock(&self.inbox)
            .splice(&self.session, target, usize::MAX, 0, vec![message], true)
            .map_err(|error| AgentError::Invalid(error.to_string()))?;
        self.notify(spliced);
        if wakeup {
            self.wake(waking_after_abort);
        }
        Ok(())
    }

    /// A follow-up: the message starts the next turn.
    pub fn followup(&self, message: Message) -> Result<(), AgentError> {
        self.send(message, InboxTarget::NextTurn, true)
    }

    /// Steering: the message joins the next step of the running turn (or starts a turn).
    pub fn steer(&self, message: Message) -> Result<(), AgentError> {
        self.send(message, InboxTarget::NextStep, true)
    }

    /// Context for the next step, without waking the driver.
    pub fn inject(&self, message: Message) -> Result<(), AgentError> {
        self.send(message, InboxTarget::NextStep, false)
    }

    /// Cancels the running activity with `cause` (the first cause wins) and clears the
    /// inbox (each pending message is logged as cancelled). Idle: only the inbox is cleared.
    pub fn cancel(&self, cause: CancelCause) {
        self.cancel_with(cause, false);
    }

    /// Like [`Agent::cancel`] but keeps the pending messages.
    pub fn cancel_keep_inbox(&self, cause: CancelCause) {
        self.cancel_with(cause, true);
    }

    fn cancel_with(&self, cause: CancelCause, keep_inbox: bool) {
        if !keep_inbox {
            self.clear_inbox();
            if let Some(running) = lock(&self.driver).running.as_mut() {
                running.wake_requested = false;
            }
        }
        if let Some(running) = lock(&self.driver).running.as_ref() {
            running.abort.abort(cause);
        }
    }

    fn clear_inbox(&self) {
        for target in [InboxTarget::NextStep, InboxTarget::NextTurn] {
            let spliced =
                lock(&self.inbox).splice(&self.session, target, 0, usize::MAX, vec![], true);
            match spliced {
                Ok(spliced) => self.notify(spliced),
                Err(error) => {
                    tracing::error!(agent = %self.id, "clearing the inbox failed: {error}");
                }
            }
        }
    }

    /// Waits until the driver is idle (at once when it is).
    pub async fn when_idle(&self) {
        let mut idle = self.idle.subscribe();
        // The sender lives as long as the agent, which `&self` keeps alive.
        let _ = idle.wait_for(|idle| *idle).await;
    }

    /// Marks the agent disposed: no more messages, no new turns; the running turn is
    /// cancelled and awaited.
    pub(crate) async fn shut_down(&self) {
        self.disposed.store(true, Ordering::SeqCst);
        self.cancel_with(CancelCause::Disposed, true);
        self.when_idle().await;
    }

    /// Claims the messages of a step: all of `next-step`, plus the first of `next-turn`
    /// when the step opens a turn.
    pub(crate) fn claim(&self, target: InboxTarget, turn: u64) -> Result<Vec<Message>, AgentError> {
        let mut claimed = Vec::new();
        let mut inbox = lock(&self.inbox);
        let mut take = |queue: InboxTarget, count: usize| -> Result<(), AgentError> {
            let spliced = inbox
                .splice(&self.session, queue, 0, count, vec![], false)
                .map_err(|error| AgentError::Invalid(error.to_string()))?;
            claimed.extend(spliced.removed);
            Ok(())
        };
        take(InboxTarget::NextStep, usize::MAX)?;
        if target == InboxTarget::NextTurn {
            take(InboxTarget::NextTurn, 1)?;
        }
        drop(inbox);
        if let Some(agent) = self.me.upgrade() {
            for message in &claimed {
                let notice = InboxClaim {
                    agent: Arc::clone(&agent),
                    message: message.clone(),
                    turn,
                };
                if let Err(error) = self.runtime.ctx.emit::<AgentInboxClaimed>(&notice) {
                    tracing::warn!(agent = %self.id, "agent/inbox/claimed listener failed: {error}");
                }
            }
        }
        Ok(claimed)
    }

    pub(crate) fn next_step_empty(&self) -> bool {
        lock(&self.inbox).queue(InboxTarget::NextStep).is_empty()
    }

    fn notify(&self, spliced: Spliced) {
        let Some(agent) = self.me.upgrade() else {
            return;
        };
        for message in spliced.removed {
            let notice = InboxNotice {
                agent: Arc::clone(&agent),
                message,
            };
            if let Err(error) = self.runtime.ctx.emit::<AgentInboxDiscarded>(&notice) {
                tracing::warn!(agent = %self.id, "agent/inbox/discarded listener failed: {error}");
            }
        }
        for message in spliced.inserted {
            let notice = InboxNotice {
                agent: Arc::clone(&agent),
                message,
            };
            if let Err(error) = self.runtime.ctx.emit::<AgentInboxInserted>(&notice) {
                tracing::warn!(agent = %self.id, "agent/inbox/inserted listener failed: {error}");
            }
        }
    }

    /// Starts the driver when idle; otherwise latches the wake when it must wait for a
    /// cancelled activity to finish (never for a disposal).
    fn wake(&self, after_abort: bool) {
        if self.disposed.load(Ordering::SeqCst) {
            return;
        }
        let start = {
            let mut driver = lock(&self.driver);
            match driver.running.as_mut() {
                Some(running) => {
                    if after_abort && running.abort.cause() != Some(CancelCause::Disposed) {
                        running.wake_requested = true;
                    }
                    false
                }
                None => {
                    driver.running = Some(Running {
                        abort: Abort::default(),
                        turn: driver.last_turn,
                        step: 0,
                        wake_requested: false,
                    });
                    true
                }
            }
        };
        if !start {
            return;
        }
        let Some(agent) = self.me.upgrade() else {
            return;
        };
        self.idle.send_replace(false);
        self.emit_status(AgentStatus::Running);
        tokio::spawn(agent.drive());
    }

    /// Runs turns until nothing waits, then goes idle (replaying a latched wake).
    async fn drive(self: Arc<Self>) {
        loop {
            let more = AssertUnwindSafe(self.turn()).catch_unwind().await;
            let more = more.unwrap_or_else(|_| {
                tracing::error!(agent = %self.id, "the agent's turn panicked; the driver stops");
                false
            });
            if more {
                continue;
            }
            let replay = {
                let mut driver = lock(&self.driver);
                let replay = driver
                    .running
                    .as_ref()
                    .is_some_and(|running| running.wake_requested)
                    && lock(&self.inbox).has_pending()
                    && !self.disposed.load(Ordering::SeqCst);
                if replay {
                    if let Some(running) = driver.running.as_mut() {
                        running.abort = Abort::default();
                        running.step = 0;
                        running.wake_requested = false;
                    }
                } else if let Some(running) = driver.running.take() {
                    driver.last_turn = running.turn;
                }
                replay
            };
            if !replay {
                break;
            }
        }
        self.emit_status(AgentStatus::Idle);
        self.idle.send_replace(true);
    }

    /// Reads the running activity.
    pub(crate) fn with_running<R>(&self, read: impl FnOnce(&mut Running) -> R) -> Option<R> {
        lock(&self.driver).running.as_mut().map(read)
    }

    /// After a turn ended cleanly: continue with a fresh activity when messages wait.
    pub(crate) fn continue_if_pending(&self) -> bool {
        if !lock(&self.inbox).has_pending() || self.disposed.load(Ordering::SeqCst) {
            return false;
        }
        self.with_running(|running| {
            running.abort = Abort::default();
            running.wake_requested = false;
            running.step = 0;
        })
        .is_some()
    }

    fn emit_status(&self, status: AgentStatus) {
        let Some(agent) = self.me.upgrade() else {
            return;
        };
        let change = StatusChange { agent, status };
        if let Err(error) = self.runtime.ctx.emit::<AgentStatusChanged>(&change) {
            tracing::warn!(agent = %self.id, "agent/status listener failed: {error}");
        }
    }

    /// Reports a failure on `agent/error`.
    pub(crate) fn report_error(&self, turn: u64, step: u64, error: dsh_llm::LlmFailure) {
        let Some(agent) = self.me.upgrade() else {
            return;
        };
        let notice = AgentErrorNotice {
            agent,
            turn,
            step,
            error,
        };
        if let Err(failure) = self.runtime.ctx.emit::<AgentErrorEvent>(&notice) {
            tracing::warn!(agent = %self.id, "agent/error listener failed: {failure}");
        }
    }

    /// This agent as an `Arc` (for event payloads).
    pub(crate) fn arc(&self) -> Option<Arc<Self>> {
        self.me.upgrade()
    }
}
