//! Running one step's tool calls (dsh's scheduler).
//!
//! Calls run in groups: an exclusive call alone, a parallel-safe one with the parallel-safe
//! calls after it (re-checked before each start), at most `maxParallelToolCalls` at a time.
//! Each start logs `tool/call` and runs the policy stage (`tools/pre-execute`, approval,
//! guards) one call at a time in model order; only the bodies overlap. Results commit in
//! model order (`tools/post-execute`, then `tool/result`). On cancellation no call starts,
//! started ones drain and commit, and every call never started gets a `tool/call` and a
//! synthetic `ABORTED_BEFORE_DISPATCH` result, so the log stays balanced.

use std::sync::Arc;

use dsh_llm::{ContentBlock, Message};
use dsh_session::SurfaceIntent;
use dsh_tools::{
    ExecutionMode, StagedToolCall, ToolCaller, ToolError, ToolExecutionInput, ToolExecutionResult,
};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use crate::agent::Agent;
use crate::cause::Abort;
use crate::error::TurnError;

/// A tool call of the assistant message.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The raw argument text.
    pub(crate) arguments: String,
}

/// dsh's argument parsing: empty text is `{}`, text that is not JSON is passed as a string.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

type Dispatch = JoinHandle<(usize, StagedToolCall)>;

impl Agent {
    /// Runs `calls` and logs their results. Returns once every started call committed;
    /// the caller sees a cancellation through the activity's signal.
    pub(crate) async fn execute_tool_calls(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        calls: Vec<PlannedCall>,
        abort: &Abort,
    ) -> Result<(), TurnError> {
        let planned: Vec<Planned> = calls
            .into_iter()
            .map(|call| {
                let input = self.input(&call, abort);
                Planned { call, input }
            })
            .collect();
        let mut rest: &[Planned] = &planned;
        while let Some(first) = rest.first() {
            let parallel =
                self.runtime.tools.execution_mode(&first.input) == ExecutionMode::Parallel;
            let (group, after) = rest.split_at(if parallel { rest.len() } else { 1 });
            let outcome = self.run_group(turn, step, group, parallel, abort).await?;
            let (_, unstarted) = group.split_at(outcome.started.min(group.len()));
            if outcome.aborted {
                for skipped in unstarted.iter().chain(after) {
                    self.log_skipped(turn, step, &skipped.call)?;
                }
                return Ok(());
            }
            // A parallel run stops at the first call that is no longer parallel-safe; the
            // calls after it form the next groups.
            rest = if parallel { unstarted } else { after };
        }
        Ok(())
    }

    fn input(&self, call: &PlannedCall, abort: &Abort) -> ToolExecutionInput {
        ToolExecutionInput::new(
            call.id.clone(),
            call.name.clone(),
            parse_arguments(&call.arguments),
            abort.token().clone(),
        )
        .with_caller(ToolCaller {
            session_id: Some(self.id().to_owned()),
            session_header: Some(self.session().header()),
        })
    }

    /// Runs one exclusive call, or a pool of parallel-safe calls, committing results in
    /// model order. Started calls always drain, even after a failure or a cancellation.
    async fn run_group(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        group: &[Planned],
        parallel: bool,
        abort: &Abort,
    ) -> Result<GroupOutcome, TurnError> {
        let limit = self.runtime.settings.max_parallel_tool_calls.max(1);
        let mut slots: Vec<Slot> = group.iter().map(|_| Slot::default()).collect();
        let mut in_flight: FuturesUnordered<Dispatch> = FuturesUnordered::new();
        let mut started = 0;
        let mut committed = 0;
        let mut aborted = abort.is_aborted();
        let mut failure: Option<TurnError> = None;
        loop {
            // Start calls while the pool has room, in model order.
            while failure.is_none() && !aborted && in_flight.len() < limit {
                let Some(next) = group.get(started) else {
                    break;
                };
                if started > 0
                    && parallel
                    && self.runtime.tools.execution_mode(&next.input) != ExecutionMode::Parallel
                {
                    break;
                }
                let seq = match self.log_call(turn, step, &next.call) {
                    Ok(seq) => seq,
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                };
                self.runtime.checkpoint(self.id()).await;
                let staged = self.runtime.tools.prepare_call(next.input.clone()).await;
                if let Some(slot) = slots.get_mut(started) {
                    slot.call_seq = seq;
                    if staged.needs_dispatch() {
                        let tools = Arc::clone(&self.runtime.tools);
                        let index = started;
                        in_flight.push(tokio::spawn(async move {
                            (index, tools.dispatch_call(staged).await)
                        }));
                    } else {
                        slot.ready = Some(staged);
                    }
                }
                started += 1;
                if let Err(error) = self
                    .commit_ready(turn, step, group, &mut slots, &mut committed)
                    .await
                {
                    failure = Some(error);
                }
                aborted |= abort.is_aborted();
            }
            let Some(done) = in_flight.next().await else {
                break;
            };
            match done {
                Ok((index, staged)) => {
                    if let Some(slot) = slots.get_mut(index) {
                        slot.ready = Some(staged);
                    }
                }
                Err(join) => {
                    failure.get_or_insert_with(|| {
                        TurnError::unknown(format!("a tool call failed to run: {join}"))
                    });
                }
            }
            if failure.is_none()
                && let Err(error) = self
                    .commit_ready(turn, step, group, &mut slots, &mut committed)
                    .await
            {
                failure = Some(error);
            }
            aborted |= abort.is_aborted();
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(GroupOutcome { started, aborted }),
        }
    }

    /// Commits the contiguous finished calls after the last committed one.
    async fn commit_ready(
        &self,
        turn: u64,
        step: u64,
        group: &[Planned],
        slots: &mut [Slot],
        committed: &mut usize,
    ) -> Result<(), TurnError> {
        while let (Some(slot), Some(planned)) = (slots.get_mut(*committed), group.get(*committed)) {
            let Some(staged) = slot.ready.take() else {
                break;
            };
            let result = self.runtime.tools.finalize_call(staged).await;
            self.log_result(turn, step, &planned.call, &result, slot.call_seq)?;
            *committed += 1;
        }
        Ok(())
    }

    fn log_call(&self, turn: u64, step: u64, call: &PlannedCall) -> Result<u64, TurnError> {
        let data = json!({
            "turn": turn,
            "step": step,
            "callId": call.id,
            "name": call.name,
            "arguments": call.arguments,
        });
        Ok(self
            .session()
            .append("tool/call", data, SurfaceIntent::default())?
            .seq)
    }

    fn log_result(
        &self,
        turn: u64,
        step: u64,
        call: &PlannedCall,
        result: &ToolExecutionResult,
        call_seq: u64,
    ) -> Result<(), TurnError> {
        let content = result
            .content
            .iter()
            .cloned()
            .map(ContentBlock::from)
            .collect();
        let message = Message::tool_result(&call.id, content, result.is_error);
        let mut data = Map::new();
        data.insert("turn".into(), json!(turn));
        data.insert("step".into(), json!(step));
        data.insert("message".into(), json!(message));
        if let Some(info) = result.error.as_ref().and_then(|error| error.info.as_ref()) {
            data.insert("error".into(), json!(info));
        }
        if let Some(meta) = &result.meta {
            data.insert("meta".into(), meta.clone());
        }
        self.session().append(
            "tool/result",
            Value::Object(data),
            SurfaceIntent::append_from(vec![call_seq]),
        )?;
        Ok(())
    }

    /// A call never started because the step was cancelled: its `tool/call` and a synthetic
    /// result.
    fn log_skipped(&self, turn: u64, step: u64, call: &PlannedCall) -> Result<(), TurnError> {
        let seq = self.log_call(turn, step, call)?;
        let result = ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
        self.log_result(turn, step, call, &result, seq)
    }
}

/// A call with its pipeline input.
struct Planned {
    call: PlannedCall,
    input: ToolExecutionInput,
}

/// One call's place in a group: its `tool/call` seq and, once finished, the staged call
/// waiting for its in-order commit.
#[derive(Default)]
struct Slot {
    call_seq: u64,
    ready: Option<StagedToolCall>,
}

struct GroupOutcome {
    /// Calls started (a prefix of the group).
    started: usize,
    aborted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_dsh_parses_them() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(parse_arguments("{oops"), json!("{oops"));
    }
}
