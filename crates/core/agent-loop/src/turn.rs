//! One turn: `turn/start`, steps while the model works or messages steer it, `turn/end`
//! with the reason.

use std::sync::Arc;

use dsh_llm::LlmFailure;
use dsh_protocol::kinds::{STEP_END, STEP_START, TURN_END, TURN_START};
use dsh_session::SurfaceIntent;
use serde_json::json;
use tracing::Instrument;

use crate::agent::Agent;
use crate::cause::{Abort, CancelCause};
use crate::driver_state::NextTurn;
use crate::error::TurnError;
use crate::events::{AgentTurnStopping, PreStepDecision, TurnStopping};
use crate::options::InboxTarget;
use crate::outcome::{STEP_LIMIT, TurnEndReason};
use crate::pre_step;
use crate::step;
use crate::step_ctx::StepCtx;

/// Runs the turn the driver is on.
pub(crate) struct TurnRunner {
    agent: Arc<Agent>,
    abort: Abort,
    turn: u64,
    /// The last step opened (0 before the first).
    step: u64,
}

/// How a turn's steps ended.
struct Ending {
    reason: TurnEndReason,
    /// The turn ran to its natural end, so queued messages may start the next one (an early
    /// stop, such as a rejected step or the step limit, sends the driver idle).
    may_continue: bool,
}

impl Ending {
    fn natural(reason: TurnEndReason) -> Self {
        Self {
            reason,
            may_continue: true,
        }
    }

    fn early(reason: TurnEndReason) -> Self {
        Self {
            reason,
            may_continue: false,
        }
    }
}

/// What a step leaves the turn with.
enum AfterStep {
    /// The turn is over.
    End(Ending),
    /// Another step follows; the turn ends like this unless a later step says otherwise.
    Next(Option<TurnEndReason>),
}

impl TurnRunner {
    /// Runs the next turn of `agent`'s running activity. Returns whether the driver may go on
    /// to another turn (this one ran to its natural end); the driver decides whether one
    /// waits.
    pub(crate) async fn run_next(agent: &Arc<Agent>) -> bool {
        let Some(next) = agent.next_turn() else {
            return false;
        };
        let span = tracing::debug_span!("turn", session_id = %agent.id(), turn = next.turn);
        async {
            match Self::open(agent, next) {
                Some(runner) => runner.run().await,
                None => false,
            }
        }
        .instrument(span)
        .await
    }

    /// Logs `turn/start` unless the wake that started the activity did. `None` when the
    /// activity was cancelled first or the session refused the event.
    fn open(agent: &Arc<Agent>, next: NextTurn) -> Option<Self> {
        let NextTurn {
            abort,
            opened,
            turn,
        } = next;
        if !opened {
            if abort.is_aborted() {
                return None;
            }
            if let Err(error) =
                agent
                    .session()
                    .append(TURN_START, json!({"turn": turn}), SurfaceIntent::default())
            {
                agent.report_error(turn - 1, 0, LlmFailure::unknown(error.to_string()));
                return None;
            }
            agent.mark_turn(turn);
        }
        Some(Self {
            agent: Arc::clone(agent),
            abort,
            turn,
            step: 0,
        })
    }

    /// Runs the steps and logs `turn/end` with the reason.
    async fn run(mut self) -> bool {
        let outcome = self.run_steps().await;
        let may_continue = matches!(&outcome, Ok(ending) if ending.may_continue);
        let reason = match outcome {
            Ok(ending) => ending.reason,
            Err(_) if self.abort.is_aborted() => TurnEndReason::Aborted {
                reason: self.abort.cause().unwrap_or(CancelCause::Parent).into(),
            },
            Err(TurnError::Aborted) => TurnEndReason::Aborted {
                reason: CancelCause::Parent.into(),
            },
            Err(TurnError::Failed(failure)) => {
                self.agent
                    .report_error(self.turn, self.step, failure.clone());
                TurnEndReason::Error { error: failure }
            }
        };
        let data = json!({"turn": self.turn, "reason": reason});
        if let Err(error) = self
            .agent
            .session()
            .append(TURN_END, data, SurfaceIntent::default())
        {
            self.agent
                .report_error(self.turn, 0, LlmFailure::unknown(error.to_string()));
            return false;
        }
        may_continue
    }

    /// The steps of the turn, until one ends it.
    async fn run_steps(&mut self) -> Result<Ending, TurnError> {
        let mut target = InboxTarget::NextTurn;
        let mut ends: Option<TurnEndReason> = None;
        loop {
            self.abort.check()?;
            let step = self.step + 1;
            // Checked before the inbox is claimed, so steering waits for the next turn.
            if let Some(limit) = self.agent.runtime().settings.max_steps
                && step > limit
            {
                return Ok(self.step_limit(limit));
            }
            let span = tracing::debug_span!("step", session_id = %self.agent.id(), step);
            match self.step(step, target, ends).instrument(span).await? {
                AfterStep::End(ending) => return Ok(ending),
                AfterStep::Next(reason) => ends = reason,
            }
            target = InboxTarget::NextStep;
        }
    }

    /// The turn reached the loop's `maxSteps`: reported, and it ends `error` with
    /// [`STEP_LIMIT`].
    fn step_limit(&self, limit: u64) -> Ending {
        let failure = LlmFailure::new(
            STEP_LIMIT,
            format!(
                "turn {} reached the step limit of {limit} steps (agent-loop config maxSteps); \
                 send a follow-up to continue, or raise the limit",
                self.turn
            ),
        );
        self.agent
            .report_error(self.turn, self.step, failure.clone());
        Ending::early(TurnEndReason::Error { error: failure })
    }

    /// Prepares and runs step `step` from the inbox queue `target`; `ends` is how the turn
    /// ends if no step changes it.
    async fn step(
        &mut self,
        step: u64,
        target: InboxTarget,
        ends: Option<TurnEndReason>,
    ) -> Result<AfterStep, TurnError> {
        let ctx = StepCtx {
            agent: Arc::clone(&self.agent),
            turn: self.turn,
            step,
            abort: self.abort.clone(),
        };
        let prepared = pre_step::prepare(&ctx, target).await?;
        let messages = match prepared.decision {
            PreStepDecision::Reject => {
                return Ok(AfterStep::End(Ending::early(TurnEndReason::Blocked)));
            }
            PreStepDecision::Enter(messages) => messages,
        };
        if messages.is_empty() {
            if let Some(reason) = ends {
                return Ok(AfterStep::End(Ending::natural(reason)));
            }
            if self.step == 0 {
                return Ok(AfterStep::End(Ending::early(TurnEndReason::Completed)));
            }
        }
        self.abort.check()?;
        let numbers = json!({"turn": self.turn, "step": step});
        self.agent
            .session()
            .append(STEP_START, numbers.clone(), SurfaceIntent::default())?;
        self.step = step;
        self.agent.mark_step(step);
        let result = step::run(&ctx, messages, &prepared.assembly).await;
        let closed = self
            .agent
            .session()
            .append(STEP_END, numbers, SurfaceIntent::default());
        let step_end = result?;
        closed?;
        let ends = match ends {
            Some(TurnEndReason::MaxTokens) => Some(TurnEndReason::MaxTokens),
            _ => step_end,
        };
        self.abort.check()?;
        if ends.is_some() && self.agent.next_step_empty() {
            self.turn_stopping().await?;
            self.abort.check()?;
        }
        match ends {
            Some(reason) if self.agent.next_step_empty() => {
                Ok(AfterStep::End(Ending::natural(reason)))
            }
            ends => Ok(AfterStep::Next(ends)),
        }
    }

    /// Asks `agent/turn-stopping` (a listener may steer to keep the turn going).
    async fn turn_stopping(&self) -> Result<(), TurnError> {
        let args = TurnStopping {
            agent: Arc::clone(&self.agent),
            turn: self.turn,
            signal: self.abort.token().clone(),
        };
        self.agent
            .runtime()
            .ctx
            .serial::<AgentTurnStopping>(args)
            .await
            .map(drop)
            .map_err(|error| TurnError::unknown(error.to_string()))
    }
}
