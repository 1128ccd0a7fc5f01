//! The agent: one session, its inbox, and the driver that turns queued messages into turns.
//!
//! The driver is idle or running. A waking message ([`Agent::followup`], [`Agent::steer`])
//! starts it when idle; it then runs turns while messages wait, and goes idle again. A wake
//! that arrives while a cancelled turn is still winding down is latched and replayed when
//! it is over, so a follow-up sent right after a stop is never lost.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use dsh_kernel::sync::lock;
use dsh_llm::Message;
use dsh_protocol::kinds::TURN_START;
use dsh_session::{LiveSession, SurfaceIntent};
use futures_util::FutureExt;
use tokio::sync::watch;

use crate::cause::CancelCause;
use crate::driver_state::{AfterTurn, DriverState, NextTurn};
use crate::error::AgentError;
use crate::events::{
    AgentErrorEvent, AgentErrorNotice, AgentInboxClaimed, AgentInboxDiscarded, AgentInboxInserted,
    AgentStatusChanged, InboxClaim, InboxNotice, StatusChange,
};
use crate::inbox::{Inbox, InboxError, Spliced};
use crate::options::{AgentOptions, AgentStatus, InboxTarget};
use crate::request_state::RequestState;
use crate::runtime::LoopRuntime;
use crate::runtime_context::Retained;
use crate::splicing::SplicingMark;
use crate::summary::TurnSummary;
use crate::turn::TurnRunner;
use crate::turn_recovery::close_panicked_turn;

/// An agent: the model driver of one session. Its id is the session's id.
pub struct Agent {
    id: String,
    options: AgentOptions,
    session: Arc<LiveSession>,
    runtime: Arc<LoopRuntime>,
    inbox: Mutex<Inbox>,
    driver: Mutex<DriverState>,
    idle: watch::Sender<bool>,
    disposed: AtomicBool,
    /// The runtime drivers are spawned on (so a message may be sent from any thread).
    handle: tokio::runtime::Handle,
    request: Mutex<RequestState>,
    runtime_context: Mutex<Retained>,
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
            .find(|event| event.kind == TURN_START)
            .and_then(|event| event.data.get("turn").and_then(serde_json::Value::as_u64))
            .unwrap_or(0);
        let request = RequestState::restore(&events);
        let retained = Retained::restore(&events);
        let (idle, _) = watch::channel(true);
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            AgentError::Invalid("an agent needs a tokio runtime to run its turns".to_owned())
        })?;
        Ok(Arc::new_cyclic(|me| Self {
            id: session.id().to_owned(),
            options,
            session,
            runtime,
            inbox: Mutex::new(inbox),
            driver: Mutex::new(DriverState::new(last_turn)),
            idle,
            disposed: AtomicBool::new(false),
            handle,
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
        if lock(&self.driver).is_running() {
            AgentStatus::Running
        } else {
            AgentStatus::Idle
        }
    }

    /// The messages waiting in `target`. Refused from a `session/event` listener of this
    /// agent's own inbox change (the change is half done there).
    pub fn pending(&self, target: InboxTarget) -> Result<Vec<Message>, AgentError> {
        self.check_not_splicing()?;
        Ok(lock(&self.inbox).queue(target).to_vec())
    }

    fn check_not_splicing(&self) -> Result<(), AgentError> {
        if SplicingMark::active(self) {
            return Err(AgentError::Invalid(format!(
                "agent \"{}\": its inbox cannot be used from a session/event listener of its own \
                 inbox change",
                self.id
            )));
        }
        Ok(())
    }

    /// One logged inbox change (see [`Inbox::splice`]).
    fn splice(
        &self,
        target: InboxTarget,
        start: usize,
        delete: usize,
        inserted: Vec<Message>,
        cancelling: bool,
    ) -> Result<Spliced, AgentError> {
        self.check_not_splicing()?;
        let mut inbox = lock(&self.inbox);
        let _mark = SplicingMark::enter(self);
        inbox
            .splice(&self.session, target, start, delete, inserted, cancelling)
            .map_err(|error| match error {
                InboxError::Store(error) => AgentError::Store(error),
                InboxError::Invalid(why) => {
                    AgentError::Invalid(format!("agent \"{}\": {why}", self.id))
                }
            })
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
        let waking_after_abort = wakeup && lock(&self.driver).is_aborted();
        let target = if waking_after_abort {
            InboxTarget::NextTurn
        } else {
            target
        };
        let spliced = self.splice(target, usize::MAX, 0, vec![message], true)?;
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
        // The activity reads as aborted from here on, so it starts no step on an inbox that
        // is being cleared; the token fires once the clearing is logged.
        let abort = lock(&self.driver).request_abort(&cause);
        if !keep_inbox {
            self.clear_inbox();
            lock(&self.driver).forget_wake();
        }
        if let Some(abort) = abort {
            abort.abort(cause);
        }
    }

    fn clear_inbox(&self) {
        for target in [InboxTarget::NextStep, InboxTarget::NextTurn] {
            match self.splice(target, 0, usize::MAX, vec![], true) {
                Ok(spliced) => self.notify(spliced),
                Err(error) => {
                    tracing::error!(agent = %self.id, "clearing the inbox failed: {error}");
                }
            }
        }
    }

    /// Makes everything the session logged so far durable; `Ok(false)` when no persistence
    /// listens.
    pub async fn flush(&self) -> Result<bool, AgentError> {
        Ok(self.runtime.sessions.flush(&self.id).await?)
    }

    /// Sends `message` as a follow-up once the agent is idle, waits for the turns it causes,
    /// flushes the session, and returns what they did.
    pub async fn run_turn(&self, message: Message) -> Result<TurnSummary, AgentError> {
        self.when_idle().await;
        let first_seq = self.session.with(dsh_session::Session::next_seq);
        self.followup(message)?;
        self.when_idle().await;
        self.flush().await?;
        Ok(TurnSummary::fold(&self.session.events(), first_seq))
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
        let mut claimed = self
            .splice(InboxTarget::NextStep, 0, usize::MAX, vec![], false)?
            .removed;
        if target == InboxTarget::NextTurn {
            claimed.extend(
                self.splice(InboxTarget::NextTurn, 0, 1, vec![], false)?
                    .removed,
            );
        }
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

    /// Starts the driver when idle and a message waits; otherwise latches the wake when it
    /// must wait for a cancelled activity, or for a driver that is going idle (never for a
    /// disposal), so it is replayed rather than lost.
    fn wake(&self, after_abort: bool) {
        if self.disposed.load(Ordering::SeqCst) {
            return;
        }
        let start = {
            let mut driver = lock(&self.driver);
            let start = driver.wake(after_abort, || lock(&self.inbox).has_pending());
            if start {
                self.idle.send_replace(false);
            }
            start
        };
        if !start {
            return;
        }
        let Some(agent) = self.me.upgrade() else {
            return;
        };
        self.open_turn();
        self.emit_status(AgentStatus::Running);
        drop(self.handle.spawn(agent.drive()));
    }

    /// Logs the new activity's `turn/start` right away, as dsh does in the call that wakes
    /// the agent, so a stop sent just after the message still ends a logged turn. If the
    /// session refuses it here (a `session/event` listener of this session woke the agent),
    /// the driver opens the turn instead.
    fn open_turn(&self) {
        let Some(turn) = lock(&self.driver).turn_to_open() else {
            return;
        };
        let data = serde_json::json!({"turn": turn});
        match self
            .session
            .append(TURN_START, data, SurfaceIntent::default())
        {
            Ok(_) => lock(&self.driver).opened(turn),
            Err(error) => tracing::debug!(agent = %self.id, "the driver opens the turn: {error}"),
        }
    }

    /// Runs turns while messages wait, then goes idle. Whether to go on and going idle are
    /// decided under the driver lock, and a wake arriving while the driver announces that it
    /// goes idle is latched and replayed, so no message is left waiting on an idle agent.
    async fn drive(self: Arc<Self>) {
        loop {
            let turn = TurnRunner::run_next(&self);
            let may_continue = match AssertUnwindSafe(turn).catch_unwind().await {
                Ok(may_continue) => may_continue,
                Err(panic) => {
                    close_panicked_turn(&self, panic.as_ref());
                    false
                }
            };
            {
                let mut driver = lock(&self.driver);
                match driver.after_turn(may_continue, || self.more_work()) {
                    AfterTurn::Again => continue,
                    AfterTurn::Finishing => {}
                    AfterTurn::Gone => {
                        self.idle.send_replace(true);
                        break;
                    }
                }
            }
            self.emit_status(AgentStatus::Idle);
            let replay = {
                let mut driver = lock(&self.driver);
                let replay = driver.finish(|| self.more_work());
                if !replay {
                    self.idle.send_replace(true);
                }
                replay
            };
            if !replay {
                break;
            }
            self.emit_status(AgentStatus::Running);
        }
    }

    /// Whether messages wait and the agent may still run turns.
    fn more_work(&self) -> bool {
        lock(&self.inbox).has_pending() && !self.disposed.load(Ordering::SeqCst)
    }

    /// The turn the running activity runs next (see [`DriverState::next_turn`]).
    pub(crate) fn next_turn(&self) -> Option<NextTurn> {
        lock(&self.driver).next_turn()
    }

    /// Notes that the running activity logged `turn/start` of `turn`.
    pub(crate) fn mark_turn(&self, turn: u64) {
        lock(&self.driver).mark_turn(turn);
    }

    /// Notes that the running turn logged `step/start` of `step`.
    pub(crate) fn mark_step(&self, step: u64) {
        lock(&self.driver).mark_step(step);
    }

    /// The running activity's turn and step (zeros when none runs).
    pub(crate) fn position(&self) -> (u64, u64) {
        lock(&self.driver).position()
    }

    /// The loop's services and settings.
    pub(crate) fn runtime(&self) -> &LoopRuntime {
        &self.runtime
    }

    /// What this agent last logged about requests.
    pub(crate) fn request_state(&self) -> MutexGuard<'_, RequestState> {
        lock(&self.request)
    }

    /// What the model last saw of the runtime context.
    pub(crate) fn retained(&self) -> MutexGuard<'_, Retained> {
        lock(&self.runtime_context)
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
}
