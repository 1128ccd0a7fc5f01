//! The dispatch stage: `tools/execute` wrappers around the tool body.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::future::{Either, select};
use tokio_util::sync::CancellationToken;

use super::{Call, Dispatched};
use crate::definition::ToolOutput;
use crate::error::ToolError;
use crate::events::ToolsExecute;
use crate::execution::{ToolDispatch, ToolExecutionResult};
use crate::registry::{Lookup, Registered, ToolRegistry};
use crate::schema;

impl ToolRegistry {
    /// Runs `tools/execute` with the body at its end, then normalizes what the wrappers
    /// return. A failing wrapper is final; tool failures still go through post-execute.
    pub(super) async fn dispatch(&self, call: &Call) -> Dispatched {
        let lookup = self.lookup();
        let inner_lookup = lookup.clone();
        let inner_call = call.clone();
        let returned =
            self.ctx
                .waterfall::<ToolsExecute, _, _>(
                    ToolDispatch::new(call.exec.clone()),
                    move |dispatch| async move {
                        Ok(run_body(&inner_lookup, &inner_call, dispatch).await)
                    },
                )
                .await;
        let result = match returned.and_then(|result| normalize(&lookup, call, result)) {
            Ok(result) => result,
            Err(error) => return Dispatched::Final(ToolExecutionResult::from_error(&error)),
        };
        if call.caller_cancelled() && !result.is_error {
            Dispatched::Post(call.cancellation())
        } else {
            Dispatched::Post(result)
        }
    }
}

/// The body: the caller's signal fused with the wrapper's, the tool looked up, the
/// arguments validated, the tool run to completion, its value checked.
async fn run_body(lookup: &Lookup, call: &Call, dispatch: ToolDispatch) -> ToolExecutionResult {
    let caller = call.exec.signal().clone();
    let fused = dispatch.signal().child_token();
    if caller.is_cancelled() {
        fused.cancel();
    }
    if fused.is_cancelled() {
        return ToolExecutionResult::from_error(&ToolError::aborted_before_dispatch());
    }
    let exec = &call.exec;
    let Some(entry) = lookup.entry(exec.name()) else {
        return ToolExecutionResult::from_error(&ToolError::unknown_tool(exec.name()));
    };
    call.mark_body_invoked();
    let violations = schema::validate(&entry.parameters, exec.arguments());
    if !violations.is_empty() {
        return ToolExecutionResult::from_error(&ToolError::invalid_args(&violations));
    }
    let definition = Arc::clone(&entry.definition);
    let (arguments, run) = (exec.arguments().clone(), exec.run_context(fused.clone()));
    // A panicking body is an ordinary failure of its call: the call still gets a result
    // (and post-execute), rather than taking the caller's task down with it.
    let body =
        AssertUnwindSafe(async move { definition.execute(arguments, run).await }).catch_unwind();
    let outcome = match forwarding_cancellation(body, &caller, &fused).await {
        Ok(outcome) => outcome,
        Err(panic) => Err(ToolError::new(format!(
            "tool \"{}\" (call {}) {}",
            exec.name(),
            exec.call_id(),
            dsh_kernel::panic_message(panic.as_ref())
        ))),
    };
    match outcome.and_then(|output| success(&entry, exec.name(), output)) {
        Ok(_) if fused.is_cancelled() => ToolExecutionResult::from_error(&ToolError::aborted()),
        Ok(result) => result,
        Err(error) => ToolExecutionResult::from_error(&error),
    }
}

/// Awaits `body` to completion, cancelling `fused` if the caller cancels meanwhile. The body
/// is never dropped early: a started tool reaches quiescence before its outcome is replaced.
async fn forwarding_cancellation<F: Future>(
    body: F,
    caller: &CancellationToken,
    fused: &CancellationToken,
) -> F::Output {
    let body = std::pin::pin!(body);
    let forward = std::pin::pin!(caller.cancelled());
    match select(body, forward).await {
        Either::Left((output, _)) => output,
        Either::Right(((), body)) => {
            fused.cancel();
            body.await
        }
    }
}

/// A checked success: lossless value, matching the output schema, lossless metadata.
pub(super) fn success(
    entry: &Registered,
    name: &str,
    output: ToolOutput,
) -> Result<ToolExecutionResult, ToolError> {
    if !schema::js::is_lossless(&output.value) {
        return Err(ToolError::invalid_output(
            name,
            &["value is not lossless JSON".to_owned()],
        ));
    }
    if let Some(output_schema) = &entry.output_schema {
        let violations = schema::validate_at(output_schema, &output.value, "value");
        if !violations.is_empty() {
            return Err(ToolError::invalid_output(name, &violations));
        }
    }
    if output
        .meta
        .as_ref()
        .is_some_and(|meta| !schema::js::is_lossless(meta))
    {
        return Err(ToolError::invalid_output(
            name,
            &["output.presentationMeta returned non-lossless JSON".to_owned()],
        ));
    }
    Ok(ToolExecutionResult::success(output))
}

/// Brings a wrapper's answer into canonical shape: a failure has an error and no value; a
/// success passes the same checks as the body's value (a wrapper may have authored it).
fn normalize(
    lookup: &Lookup,
    call: &Call,
    result: ToolExecutionResult,
) -> Result<ToolExecutionResult, ToolError> {
    let name = call.exec.name();
    if result.is_error {
        let error = result.error.unwrap_or_else(|| crate::ToolFailure {
            message: crate::content::failure_message_from_content(&result.content),
            info: None,
        });
        let mut failure = ToolExecutionResult::failure(error, result.content);
        failure.meta = result.meta;
        return Ok(failure);
    }
    let Some(entry) = lookup.entry(name) else {
        return Err(ToolError::unknown_tool(name));
    };
    let Some(value) = result.value else {
        return Err(ToolError::invalid_output(
            name,
            &["value is missing".to_owned()],
        ));
    };
    success(
        &entry,
        name,
        ToolOutput {
            value,
            content: result.content,
            meta: result.meta,
        },
    )
}
