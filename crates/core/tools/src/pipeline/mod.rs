//! The execution pipeline (dsh's `ToolRuntime.execute`, runtime spec §2.6):
//!
//! 1. snapshot the arguments (lossless JSON), refuse an already-cancelled call
//!    (`ABORTED_BEFORE_DISPATCH`);
//! 2. `tools/pre-execute` (default allow), an `ask` through [`crate::APPROVAL`], then the
//!    guards; a denial is `Error: <reason>` and still goes through post-execute;
//! 3. `tools/execute` around the body: unknown tool, argument validation, the body, output
//!    validation ([`dispatch`]);
//! 4. `tools/post-execute` (default accept) ([`post`]);
//! 5. the `tools/result` notification.
//!
//! A listener or stage failure becomes `Error: <message>`. Cancellation replaces only a
//! successful outcome: with `ABORTED` once the body was invoked, else
//! `ABORTED_BEFORE_DISPATCH`.

mod dispatch;
mod post;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dsh_kernel::sync::lock;
use serde_json::Value;

use crate::approval::{APPROVAL, AskResolution, resolve_ask};
use crate::error::ToolError;
use crate::events::{PreToolDecision, ToolResultNotice, ToolsPreExecute, ToolsResult};
use crate::execution::{ToolExecution, ToolExecutionInput, ToolExecutionResult};
use crate::registry::ToolRegistry;
use crate::schema::js;

/// One call in flight: the execution and whether its body was invoked.
#[derive(Clone)]
pub(crate) struct Call {
    pub(crate) exec: ToolExecution,
    body_invoked: Arc<AtomicBool>,
}

impl Call {
    fn new(exec: ToolExecution) -> Self {
        Self {
            exec,
            body_invoked: Arc::new(AtomicBool::new(false)),
        }
    }

    pub(crate) fn mark_body_invoked(&self) {
        self.body_invoked.store(true, Ordering::SeqCst);
    }

    pub(crate) fn caller_cancelled(&self) -> bool {
        self.exec.signal().is_cancelled()
    }

    /// The outcome that replaces a success once the caller cancelled.
    pub(crate) fn cancellation(&self) -> ToolExecutionResult {
        if self.body_invoked.load(Ordering::SeqCst) {
            ToolExecutionResult::from_error(&ToolError::aborted())
        } else {
            ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch())
        }
    }
}

/// What the dispatch stage gives.
pub(crate) enum Dispatched {
    /// An outcome that goes through post-execute (tool failures included).
    Post(ToolExecutionResult),
    /// A final outcome (a failing wrapper or a result that cannot be normalized).
    Final(ToolExecutionResult),
}

/// Where a call goes after `prepare`.
pub(crate) enum Stage {
    /// Dispatch the body.
    Dispatch,
    /// An outcome that still goes through post-execute.
    Post(ToolExecutionResult),
    /// A final outcome (pipeline failures skip post-execute).
    Final(ToolExecutionResult),
}

/// A call between the pipeline's stages, for a scheduler that runs them apart (the agent
/// loop keeps `tools/pre-execute` and `tools/post-execute` in model order while bodies
/// overlap): [`ToolRegistry::prepare_call`], then [`ToolRegistry::dispatch_call`] (which may
/// run concurrently with other calls' dispatches), then [`ToolRegistry::finalize_call`].
pub struct StagedToolCall {
    call: Call,
    stage: Stage,
}

impl std::fmt::Debug for StagedToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedToolCall")
            .field("call_id", &self.call.exec.call_id())
            .field("name", &self.call.exec.name())
            .field("needs_dispatch", &self.needs_dispatch())
            .finish()
    }
}

impl StagedToolCall {
    /// Whether the body still has to run ([`ToolRegistry::dispatch_call`]); `false` when
    /// the call was refused or failed before dispatch.
    pub fn needs_dispatch(&self) -> bool {
        matches!(self.stage, Stage::Dispatch)
    }
}

impl ToolRegistry {
    /// Runs one call through the whole pipeline and returns its final result (the one
    /// `tools/result` observers saw). Never fails: every failure is an `isError` result.
    pub async fn execute(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        let staged = self.prepare_call(input).await;
        let staged = self.dispatch_call(staged).await;
        self.finalize_call(staged).await
    }

    /// The first stage: snapshot, cancellation, `tools/pre-execute`, approval and guards.
    pub async fn prepare_call(&self, input: ToolExecutionInput) -> StagedToolCall {
        let (call, stage) = self.prepare(input).await;
        StagedToolCall { call, stage }
    }

    /// The second stage: `tools/execute` around the body, when the call got that far;
    /// otherwise the call is returned as it was.
    pub async fn dispatch_call(&self, staged: StagedToolCall) -> StagedToolCall {
        let StagedToolCall { call, stage } = staged;
        let stage = match stage {
            Stage::Dispatch => match Box::pin(self.dispatch(&call)).await {
                Dispatched::Post(result) => Stage::Post(result),
                Dispatched::Final(result) => Stage::Final(result),
            },
            other => other,
        };
        StagedToolCall { call, stage }
    }

    /// The last stage: `tools/post-execute` and the `tools/result` notification. A call
    /// that was never dispatched although it needed to be is `ABORTED_BEFORE_DISPATCH`.
    pub async fn finalize_call(&self, staged: StagedToolCall) -> ToolExecutionResult {
        let StagedToolCall { call, stage } = staged;
        let result = match stage {
            Stage::Dispatch => {
                let result = ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
                Box::pin(self.post_execute(&call, result)).await
            }
            Stage::Post(result) => Box::pin(self.post_execute(&call, result)).await,
            Stage::Final(result) => result,
        };
        self.finish(call.exec, result)
    }

    /// Snapshot, cancellation, `tools/pre-execute`, approval and guards.
    async fn prepare(&self, mut input: ToolExecutionInput) -> (Call, Stage) {
        if !js::is_lossless(&input.arguments) {
            input.arguments = Value::Null;
            let error =
                ToolError::new("tool execution arguments must be losslessly JSON-serializable");
            return final_error(ToolExecution::new(input), &error);
        }
        let exec = ToolExecution::new(input);
        if exec.signal().is_cancelled() {
            return final_error(exec, &ToolError::aborted_before_dispatch());
        }
        let reached: Arc<Mutex<Option<ToolExecution>>> = Arc::default();
        let slot = Arc::clone(&reached);
        let gate = self
            .ctx
            .waterfall::<ToolsPreExecute, _, _>(exec.clone(), move |exec| {
                *lock(&slot) = Some(exec);
                async { Ok(PreToolDecision::Allow) }
            })
            .await;
        // Arguments a listener passed down to the end of the chain are the ones that run.
        let rewritten = lock(&reached).take();
        let exec = match rewritten {
            Some(rewritten) if !js::is_lossless(rewritten.arguments()) => {
                let error =
                    ToolError::new("tool execution arguments must be losslessly JSON-serializable");
                return final_error(exec, &error);
            }
            Some(rewritten) => rewritten,
            None => exec,
        };
        let call = Call::new(exec);
        let resolution = match gate {
            Err(error) => return final_call_error(call, &error),
            Ok(PreToolDecision::Allow) => AskResolution {
                denial: None,
                approval_cancelled: false,
            },
            Ok(PreToolDecision::Deny { reason }) => AskResolution {
                denial: Some(reason),
                approval_cancelled: false,
            },
            Ok(PreToolDecision::Ask { reason }) => {
                match resolve_ask(self.ctx.get(&APPROVAL), &call.exec, reason).await {
                    Ok(resolution) => resolution,
                    Err(error) => return final_call_error(call, &error),
                }
            }
        };
        if call.caller_cancelled() && resolution.approval_cancelled {
            let result = ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
            return (call, Stage::Post(result));
        }
        let denial = match resolution.denial {
            Some(reason) => Some(reason),
            None => self.guard_reason(&call.exec),
        };
        if let Some(reason) = denial {
            let result = ToolExecutionResult::from_error(&ToolError::new(reason));
            return (call, Stage::Post(result));
        }
        if call.caller_cancelled() {
            let result = ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
            return (call, Stage::Post(result));
        }
        (call, Stage::Dispatch)
    }

    /// Checks what gets published, then notifies `tools/result` observers (their failures
    /// are logged, never returned).
    fn finish(&self, execution: ToolExecution, result: ToolExecutionResult) -> ToolExecutionResult {
        let result = if result
            .meta
            .as_ref()
            .is_some_and(|meta| !js::is_lossless(meta))
        {
            ToolExecutionResult::from_error(&ToolError::new(
                "tool result must be losslessly JSON-serializable",
            ))
        } else {
            result
        };
        let notice = ToolResultNotice { execution, result };
        if let Err(error) = self.ctx.emit::<ToolsResult>(&notice) {
            tracing::warn!(
                tool = notice.execution.name(),
                call = notice.execution.call_id(),
                "tools/result observer failed: {error}"
            );
        }
        notice.result
    }
}

fn final_error(exec: ToolExecution, error: &ToolError) -> (Call, Stage) {
    final_call_error(Call::new(exec), error)
}

fn final_call_error(call: Call, error: &ToolError) -> (Call, Stage) {
    (call, Stage::Final(ToolExecutionResult::from_error(error)))
}
