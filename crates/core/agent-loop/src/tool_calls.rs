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
use dsh_protocol::kinds::{TOOL_CALL, TOOL_RESULT};
use dsh_session::SurfaceIntent;
use dsh_tools::{
    ExecutionMode, StagedToolCall, ToolCaller, ToolError, ToolExecutionInput, ToolExecutionResult,
};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;
use tracing::{Instrument, Span};

use crate::error::TurnError;
use crate::step_ctx::StepCtx;

/// A tool call of the assistant message.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The raw argument text.
    pub(crate) arguments: String,
}

impl PlannedCall {
    /// The tool calls of an assistant message, in model order.
    pub(crate) fn of(message: &Message) -> Vec<Self> {
        message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolCall {
                    id,
                    name,
                    arguments,
                } => Some(Self {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// dsh's argument parsing: empty text is `{}`, text that is not JSON is passed as a string.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

type Dispatch = JoinHandle<(usize, StagedToolCall)>;

/// Runs `calls` and logs their results. Returns once every started call committed; the
/// caller sees a cancellation through the activity's signal.
pub(crate) async fn execute(ctx: &StepCtx, calls: Vec<PlannedCall>) -> Result<(), TurnError> {
    let planned: Vec<Planned> = calls
        .into_iter()
        .map(|call| {
            let input = input(ctx, &call);
            Planned { call, input }
        })
        .collect();
    let tools = &ctx.runtime().tools;
    let mut rest: &[Planned] = &planned;
    while let Some(first) = rest.first() {
        let parallel = tools.execution_mode(&first.input) == ExecutionMode::Parallel;
        let (group, after) = rest.split_at(if parallel { rest.len() } else { 1 });
        let outcome = Group::new(ctx, group, parallel).run().await?;
        let (_, unstarted) = group.split_at(outcome.started.min(group.len()));
        if outcome.aborted {
            for skipped in unstarted.iter().chain(after) {
                log_skipped(ctx, &skipped.call)?;
            }
            return Ok(());
        }
        // A parallel run stops at the first call that is no longer parallel-safe; the
        // calls after it form the next groups.
        rest = if parallel { unstarted } else { after };
    }
    Ok(())
}

fn input(ctx: &StepCtx, call: &PlannedCall) -> ToolExecutionInput {
    ToolExecutionInput::new(
        call.id.clone(),
        call.name.clone(),
        parse_arguments(&call.arguments),
        ctx.signal().clone(),
    )
    .with_caller(ToolCaller {
        session_id: Some(ctx.agent.id().to_owned()),
        session_header: Some(ctx.session().header()),
        provider: ctx.agent.options().provider.clone(),
        model: ctx.agent.options().model.clone(),
    })
}

/// A call with its pipeline input.
struct Planned {
    call: PlannedCall,
    input: ToolExecutionInput,
}

/// One call's place in a group: its `tool/call` seq, its span, and, once finished, the
/// staged call waiting for its in-order commit.
#[derive(Default)]
struct Slot {
    call_seq: u64,
    span: Option<Span>,
    ready: Option<StagedToolCall>,
}

/// How far a group got.
struct GroupOutcome {
    /// Calls started (a prefix of the group).
    started: usize,
    aborted: bool,
}

/// One exclusive call, or a pool of parallel-safe calls, being run.
struct Group<'a> {
    ctx: &'a StepCtx,
    calls: &'a [Planned],
    parallel: bool,
    slots: Vec<Slot>,
    in_flight: FuturesUnordered<Dispatch>,
    started: usize,
    committed: usize,
    aborted: bool,
    failure: Option<TurnError>,
}

impl<'a> Group<'a> {
    fn new(ctx: &'a StepCtx, calls: &'a [Planned], parallel: bool) -> Self {
        Self {
            ctx,
            calls,
            parallel,
            slots: calls.iter().map(|_| Slot::default()).collect(),
            in_flight: FuturesUnordered::new(),
            started: 0,
            committed: 0,
            aborted: ctx.abort.is_aborted(),
            failure: None,
        }
    }

    /// Runs the group, committing results in model order. Started calls always drain, even
    /// after a failure or a cancellation.
    async fn run(mut self) -> Result<GroupOutcome, TurnError> {
        let limit = self.ctx.runtime().settings.max_parallel_tool_calls.max(1);
        loop {
            // Start calls while the pool has room, in model order.
            while self.failure.is_none() && !self.aborted && self.in_flight.len() < limit {
                if !self.start_next().await {
                    break;
                }
            }
            let Some(done) = self.in_flight.next().await else {
                break;
            };
            match done {
                Ok((index, staged)) => {
                    if let Some(slot) = self.slots.get_mut(index) {
                        slot.ready = Some(staged);
                    }
                }
                Err(join) => {
                    self.failure.get_or_insert_with(|| {
                        TurnError::unknown(format!("a tool call failed to run: {join}"))
                    });
                }
            }
            if self.failure.is_none()
                && let Err(error) = self.commit_ready().await
            {
                self.failure = Some(error);
            }
            self.aborted |= self.ctx.abort.is_aborted();
        }
        match self.failure {
            Some(error) => Err(error),
            None => Ok(GroupOutcome {
                started: self.started,
                aborted: self.aborted,
            }),
        }
    }

    /// Starts the next call: logs `tool/call`, runs its policy stage, and dispatches its
    /// body (or keeps the staged result when nothing is left to run). `false` when no call
    /// may start now.
    async fn start_next(&mut self) -> bool {
        let (ctx, calls) = (self.ctx, self.calls);
        let Some(next) = calls.get(self.started) else {
            return false;
        };
        let tools = &ctx.runtime().tools;
        if self.started > 0
            && self.parallel
            && tools.execution_mode(&next.input) != ExecutionMode::Parallel
        {
            return false;
        }
        let span = tracing::debug_span!(
            "tool_call",
            session_id = %ctx.agent.id(),
            call_id = %next.call.id,
            tool = %next.call.name,
        );
        let seq = match span.in_scope(|| log_call(ctx, &next.call)) {
            Ok(seq) => seq,
            Err(error) => {
                self.failure = Some(error);
                return false;
            }
        };
        let staged = async {
            ctx.runtime().checkpoint(ctx.agent.id()).await;
            tools.prepare_call(next.input.clone()).await
        }
        .instrument(span.clone())
        .await;
        let index = self.started;
        if let Some(slot) = self.slots.get_mut(index) {
            slot.call_seq = seq;
            if staged.needs_dispatch() {
                let tools = Arc::clone(tools);
                let body = async move { (index, tools.dispatch_call(staged).await) };
                self.in_flight
                    .push(tokio::spawn(body.instrument(span.clone())));
            } else {
                slot.ready = Some(staged);
            }
            slot.span = Some(span);
        }
        self.started += 1;
        if let Err(error) = self.commit_ready().await {
            self.failure = Some(error);
        }
        self.aborted |= ctx.abort.is_aborted();
        true
    }

    /// Commits the contiguous finished calls after the last committed one.
    async fn commit_ready(&mut self) -> Result<(), TurnError> {
        let (ctx, calls) = (self.ctx, self.calls);
        while let (Some(slot), Some(planned)) = (
            self.slots.get_mut(self.committed),
            calls.get(self.committed),
        ) {
            let Some(staged) = slot.ready.take() else {
                break;
            };
            let span = slot.span.take().unwrap_or_else(Span::none);
            let call_seq = slot.call_seq;
            async {
                let result = ctx.runtime().tools.finalize_call(staged).await;
                log_result(ctx, &planned.call, &result, call_seq)
            }
            .instrument(span)
            .await?;
            self.committed += 1;
        }
        Ok(())
    }
}

fn log_call(ctx: &StepCtx, call: &PlannedCall) -> Result<u64, TurnError> {
    let data = json!({
        "turn": ctx.turn,
        "step": ctx.step,
        "callId": call.id,
        "name": call.name,
        "arguments": call.arguments,
    });
    Ok(ctx
        .session()
        .append(TOOL_CALL, data, SurfaceIntent::default())?
        .seq)
}

fn log_result(
    ctx: &StepCtx,
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
    data.insert("turn".into(), json!(ctx.turn));
    data.insert("step".into(), json!(ctx.step));
    data.insert("message".into(), json!(message));
    if let Some(info) = result.error.as_ref().and_then(|error| error.info.as_ref()) {
        data.insert("error".into(), json!(info));
    }
    if let Some(meta) = &result.meta {
        data.insert("meta".into(), meta.clone());
    }
    ctx.session().append(
        TOOL_RESULT,
        Value::Object(data),
        SurfaceIntent::append_from(vec![call_seq]),
    )?;
    Ok(())
}

/// A call never started because the step was cancelled: its `tool/call` and a synthetic
/// result.
fn log_skipped(ctx: &StepCtx, call: &PlannedCall) -> Result<(), TurnError> {
    let seq = log_call(ctx, call)?;
    let result = ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
    log_result(ctx, call, &result, seq)
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
