//! One turn: `turn/start`, steps while the model works or messages steer it, `turn/end`
//! with the reason.

use std::any::Any;
use std::sync::Arc;

use dsh_kernel::{error_chain, panic_message};
use dsh_llm::{LlmFailure, Message};
use dsh_session::SurfaceIntent;
use dsh_session::repair::interrupted_turn_closers;
use dsh_system_prompt::{AssembleContext, PromptAssembly, render_context_sections};
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::cause::Abort;
use crate::error::TurnError;
use crate::events::{AgentPreStep, AgentTurnStopping, PreStep, PreStepDecision, TurnStopping};
use crate::options::InboxTarget;
use crate::outcome::{STEP_LIMIT, TurnEndReason};

impl Agent {
    /// Runs the next turn of the running activity. Returns whether the driver may go on to
    /// another turn (this one ran to its natural end); the driver decides whether one waits.
    pub(crate) async fn turn(self: &Arc<Self>) -> bool {
        let Some((abort, opened, turn)) = self.with_running(|running| {
            let opened = std::mem::take(&mut running.opened);
            let turn = if opened {
                running.turn
            } else {
                running.turn + 1
            };
            (running.abort.clone(), opened, turn)
        }) else {
            return false;
        };
        if !opened {
            if abort.is_aborted() {
                return false;
            }
            if let Err(error) = self.session().append(
                "turn/start",
                json!({"turn": turn}),
                SurfaceIntent::default(),
            ) {
                self.report_error(turn - 1, 0, LlmFailure::unknown(error.to_string()));
                return false;
            }
            self.with_running(|running| running.turn = turn);
        }
        let mut ends: Option<TurnEndReason> = None;
        let outcome = self.run_steps(turn, &abort, &mut ends).await;
        let may_continue = matches!(outcome, Ok(true));
        let reason = match outcome {
            Ok(_) => ends.unwrap_or(TurnEndReason::Completed),
            Err(_) if abort.is_aborted() => TurnEndReason::Aborted {
                reason: abort.cause().unwrap_or(crate::CancelCause::Parent).into(),
            },
            Err(TurnError::Aborted) => TurnEndReason::Aborted {
                reason: crate::CancelCause::Parent.into(),
            },
            Err(TurnError::Failed(failure)) => {
                let step = self.with_running(|running| running.step).unwrap_or(0);
                self.report_error(turn, step, failure.clone());
                TurnEndReason::Error { error: failure }
            }
        };
        let data = json!({"turn": turn, "reason": reason});
        if let Err(error) = self
            .session()
            .append("turn/end", data, SurfaceIntent::default())
        {
            self.report_error(turn, 0, LlmFailure::unknown(error.to_string()));
            return false;
        }
        may_continue
    }

    /// After a panic inside a turn: closes the turn it left open as crash recovery would (an
    /// error `tool/result` for each unanswered call, `step/end` for an open step), then logs
    /// `turn/end` with an `UNKNOWN` error naming the panic instead of `interrupted`, and
    /// reports it on `agent/error`, so the log stays well formed and says what happened.
    pub(crate) fn end_panicked_turn(&self, panic: &(dyn Any + Send)) {
        let what = panic_message(panic);
        let (running_turn, step) = self
            .with_running(|running| (running.turn, running.step))
            .unwrap_or_default();
        let closers = self
            .session()
            .with(|session| interrupted_turn_closers(session.events()));
        let Some((end, open)) = closers.split_last() else {
            // No turn is open: it never started, or its turn/end is logged.
            tracing::error!(
                agent = %self.id(),
                turn = running_turn,
                "the agent's turn {what}; the driver stops"
            );
            return;
        };
        let turn = end
            .data
            .get("turn")
            .and_then(Value::as_u64)
            .unwrap_or(running_turn);
        let failure = LlmFailure::unknown(format!("turn {turn} {what}"));
        tracing::error!(agent = %self.id(), turn, "{}; the driver stops", failure.message);
        for closer in open {
            let intent = SurfaceIntent {
                op: closer.surface_op,
                source_event_seqs: closer.source_event_seqs.clone(),
            };
            let data = closer.data.clone().into_value();
            if let Err(error) = self.session().append(&closer.kind, data, intent) {
                tracing::error!(
                    agent = %self.id(),
                    turn,
                    "closing the panicked turn failed at {}: {error}",
                    closer.kind
                );
                return;
            }
        }
        self.report_error(turn, step, failure.clone());
        let reason = TurnEndReason::Error { error: failure };
        let data = json!({"turn": turn, "reason": reason});
        if let Err(error) = self
            .session()
            .append("turn/end", data, SurfaceIntent::default())
        {
            tracing::error!(agent = %self.id(), turn, "logging the panicked turn's end failed: {error}");
        }
    }

    /// The steps of one turn. `Ok(true)`: the turn ran to its natural end, and queued
    /// messages may start the next one; `Ok(false)`: it stopped early (rejected, nothing to
    /// do, the step limit), and the driver goes idle.
    async fn run_steps(
        self: &Arc<Self>,
        turn: u64,
        abort: &Abort,
        ends: &mut Option<TurnEndReason>,
    ) -> Result<bool, TurnError> {
        let mut target = InboxTarget::NextTurn;
        loop {
            check(abort)?;
            let current = self.with_running(|running| running.step).unwrap_or(0);
            let step = current + 1;
            // Checked before the inbox is claimed, so steering waits for the next turn.
            if let Some(limit) = self.runtime.settings.max_steps
                && step > limit
            {
                let failure = LlmFailure::new(
                    STEP_LIMIT,
                    format!(
                        "turn {turn} reached the step limit of {limit} steps (agent-loop \
                         config maxSteps); send a follow-up to continue, or raise the limit"
                    ),
                );
                self.report_error(turn, current, failure.clone());
                *ends = Some(TurnEndReason::Error { error: failure });
                return Ok(false);
            }
            let (decision, assembly) = self.pre_step(target, turn, step, abort).await?;
            let messages = match decision {
                PreStepDecision::Reject => {
                    *ends = Some(TurnEndReason::Blocked);
                    return Ok(false);
                }
                PreStepDecision::Enter(messages) => messages,
            };
            if ends.is_some() && messages.is_empty() {
                return Ok(true);
            }
            if current == 0 && messages.is_empty() {
                *ends = Some(TurnEndReason::Completed);
                return Ok(false);
            }
            check(abort)?;
            self.session().append(
                "step/start",
                json!({"turn": turn, "step": step}),
                SurfaceIntent::default(),
            )?;
            self.with_running(|running| running.step = step);
            let result = self
                .enter_step(turn, step, messages, &assembly, abort)
                .await;
            let closed = self.session().append(
                "step/end",
                json!({"turn": turn, "step": step}),
                SurfaceIntent::default(),
            );
            let step_end = result?;
            closed?;
            if !matches!(ends, Some(TurnEndReason::MaxTokens)) {
                *ends = step_end;
            }
            check(abort)?;
            if ends.is_some() && self.next_step_empty() {
                self.turn_stopping(turn, abort).await?;
                check(abort)?;
            }
            if ends.is_some() && self.next_step_empty() {
                return Ok(true);
            }
            target = InboxTarget::NextStep;
        }
    }

    /// Logs the step's messages, then runs it.
    async fn enter_step(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        messages: Vec<Message>,
        assembly: &PromptAssembly,
        abort: &Abort,
    ) -> Result<Option<TurnEndReason>, TurnError> {
        for message in messages {
            let data = serde_json::to_value(&message).map_err(|error| {
                TurnError::unknown(format!("a step message is not JSON: {error}"))
            })?;
            self.session()
                .append("user/message", data, SurfaceIntent::append())?;
            lock_retained(self).observe(&message);
        }
        self.step(turn, step, assembly, abort).await
    }

    /// Claims the step's messages, assembles the prompt, projects the runtime context and
    /// asks `agent/pre-step`.
    async fn pre_step(
        self: &Arc<Self>,
        target: InboxTarget,
        turn: u64,
        step: u64,
        abort: &Abort,
    ) -> Result<(PreStepDecision, PromptAssembly), TurnError> {
        let claimed = self
            .claim(target, turn)
            .map_err(|error| TurnError::unknown(error.to_string()))?;
        let context = AssembleContext {
            session_id: Some(self.id().to_owned()),
            provider: self.options().provider.clone(),
            model: self.options().model.clone(),
            cwd: self.session().header().cwd,
            signal: Some(abort.token().clone()),
        };
        let assembly = self
            .runtime
            .prompt
            .assemble(&context)
            .await
            .map_err(|error| TurnError::unknown(error.to_string()))?;
        check(abort)?;
        let sections = render_context_sections(&assembly)
            .map_err(|error| TurnError::unknown(error.to_string()))?;
        let snapshot = lock_retained(self).project(&sections);
        let Some(agent) = self.arc() else {
            return Err(TurnError::Aborted);
        };
        let args = PreStep {
            agent,
            messages: claimed,
            turn,
            step,
            signal: abort.token().clone(),
        };
        let decision = self
            .runtime
            .ctx
            .waterfall::<AgentPreStep, _, _>(args, move |args| async move {
                let mut messages = args.messages;
                messages.extend(snapshot);
                Ok(PreStepDecision::Enter(messages))
            })
            .await
            .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))?;
        check(abort)?;
        Ok((decision, assembly))
    }

    async fn turn_stopping(self: &Arc<Self>, turn: u64, abort: &Abort) -> Result<(), TurnError> {
        let Some(agent) = self.arc() else {
            return Err(TurnError::Aborted);
        };
        let args = TurnStopping {
            agent,
            turn,
            signal: abort.token().clone(),
        };
        self.runtime
            .ctx
            .serial::<AgentTurnStopping>(args)
            .await
            .map(drop)
            .map_err(|error| TurnError::unknown(error.to_string()))
    }
}

fn lock_retained(agent: &Agent) -> std::sync::MutexGuard<'_, crate::runtime_context::Retained> {
    agent
        .runtime_context
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `Err(Aborted)` once the activity is cancelled.
pub(crate) fn check(abort: &Abort) -> Result<(), TurnError> {
    if abort.is_aborted() {
        Err(TurnError::Aborted)
    } else {
        Ok(())
    }
}
