//! Closing the turn a panic left open, so the log stays well formed and says what happened.

use std::any::Any;

use dsh_kernel::panic_message;
use dsh_llm::LlmFailure;
use dsh_protocol::kinds::TURN_END;
use dsh_session::SurfaceIntent;
use dsh_session::repair::interrupted_turn_closers;
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::outcome::TurnEndReason;

/// After a panic inside a turn: closes the turn it left open as crash recovery would (an
/// error `tool/result` for each unanswered call, `step/end` for an open step), then logs
/// `turn/end` with an `UNKNOWN` error naming the panic instead of `interrupted`, and reports
/// it on `agent/error`.
pub(crate) fn close_panicked_turn(agent: &Agent, panic: &(dyn Any + Send)) {
    let what = panic_message(panic);
    let (running_turn, step) = agent.position();
    let closers = agent
        .session()
        .with(|session| interrupted_turn_closers(session.events()));
    let Some((end, open)) = closers.split_last() else {
        // No turn is open: it never started, or its turn/end is logged.
        tracing::error!(
            agent = %agent.id(),
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
    tracing::error!(agent = %agent.id(), turn, "{}; the driver stops", failure.message);
    for closer in open {
        let intent = SurfaceIntent {
            op: closer.surface_op,
            source_event_seqs: closer.source_event_seqs.clone(),
        };
        let data = closer.data.clone().into_value();
        if let Err(error) = agent.session().append(&closer.kind, data, intent) {
            tracing::error!(
                agent = %agent.id(),
                turn,
                "closing the panicked turn failed at {}: {error}",
                closer.kind
            );
            return;
        }
    }
    agent.report_error(turn, step, failure.clone());
    let reason = TurnEndReason::Error { error: failure };
    let data = json!({"turn": turn, "reason": reason});
    if let Err(error) = agent
        .session()
        .append(TURN_END, data, SurfaceIntent::default())
    {
        tracing::error!(agent = %agent.id(), turn, "logging the panicked turn's end failed: {error}");
    }
}
