//! One call as it moves through the pipeline: the caller's input, the views listeners get,
//! and the outcome.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::content::ContentBlock;
use crate::definition::{ToolCaller, ToolRunContext};
use crate::error::{ErrorInfo, ToolError};

/// A call as the caller (the agent loop, a test, a composite tool) hands it to
/// [`crate::ToolRegistry::execute`].
#[derive(Debug, Clone)]
pub struct ToolExecutionInput {
    /// The model's id for this call.
    pub call_id: String,
    /// The root model-requested call, for a nested call; `None` for a root call.
    pub root_call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The parsed arguments (the agent loop passes `{}` for empty text and the raw string
    /// for text that is not JSON, as dsh does).
    pub arguments: Value,
    /// Who the call runs for; `None` for a call with no agent (approval is then refused).
    pub caller: Option<ToolCaller>,
    /// The caller's cancellation.
    pub signal: CancellationToken,
}

impl ToolExecutionInput {
    /// A root call with no caller.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        signal: CancellationToken,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            root_call_id: None,
            name: name.into(),
            arguments,
            caller: None,
            signal,
        }
    }

    /// The same call made on behalf of `caller`.
    #[must_use]
    pub fn with_caller(mut self, caller: ToolCaller) -> Self {
        self.caller = Some(caller);
        self
    }
}

/// A call as the pipeline's listeners and guards see it. Its identity (call id, name,
/// caller, caller signal) cannot change; only a `tools/pre-execute` listener may pass
/// different arguments down the chain ([`ToolExecution::with_arguments`]).
#[derive(Debug, Clone)]
pub struct ToolExecution {
    identity: Arc<Identity>,
    arguments: Arc<Value>,
}

#[derive(Debug)]
struct Identity {
    call_id: String,
    root_call_id: String,
    name: String,
    caller: Option<ToolCaller>,
    signal: CancellationToken,
}

impl ToolExecution {
    pub(crate) fn new(input: ToolExecutionInput) -> Self {
        let ToolExecutionInput {
            call_id,
            root_call_id,
            name,
            arguments,
            caller,
            signal,
        } = input;
        Self {
            identity: Arc::new(Identity {
                root_call_id: root_call_id.unwrap_or_else(|| call_id.clone()),
                call_id,
                name,
                caller,
                signal,
            }),
            arguments: Arc::new(arguments),
        }
    }

    /// The model's id for this call.
    pub fn call_id(&self) -> &str {
        &self.identity.call_id
    }

    /// The root model-requested call (the call itself for a root call).
    pub fn root_call_id(&self) -> &str {
        &self.identity.root_call_id
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.identity.name
    }

    /// The arguments.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// Who the call runs for.
    pub fn caller(&self) -> Option<&ToolCaller> {
        self.identity.caller.as_ref()
    }

    /// The caller's cancellation. Async gates must observe it.
    pub fn signal(&self) -> &CancellationToken {
        &self.identity.signal
    }

    /// The same call with other arguments. A `tools/pre-execute` listener passes it to
    /// `next`; the arguments that reach the end of the chain are the ones guards see and the
    /// tool receives.
    #[must_use]
    pub fn with_arguments(&self, arguments: Value) -> Self {
        Self {
            identity: Arc::clone(&self.identity),
            arguments: Arc::new(arguments),
        }
    }

    pub(crate) fn run_context(&self, signal: CancellationToken) -> ToolRunContext {
        ToolRunContext {
            call_id: self.identity.call_id.clone(),
            root_call_id: self.identity.root_call_id.clone(),
            name: self.identity.name.clone(),
            caller: self.identity.caller.clone(),
            signal,
        }
    }
}

/// A call as `tools/execute` wrappers see it: the execution plus the signal the body will
/// get, which a wrapper may replace (a timeout, say). The caller's own signal is fused back in
/// before the body runs, so a replacement cannot detach the caller's cancellation.
#[derive(Debug, Clone)]
pub struct ToolDispatch {
    execution: ToolExecution,
    signal: CancellationToken,
}

impl ToolDispatch {
    pub(crate) fn new(execution: ToolExecution) -> Self {
        let signal = execution.signal().clone();
        Self { execution, signal }
    }

    /// The call.
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// The signal the next wrapper (or the body) will get.
    pub fn signal(&self) -> &CancellationToken {
        &self.signal
    }

    /// Replaces the signal for the rest of the chain.
    pub fn set_signal(&mut self, signal: CancellationToken) {
        self.signal = signal;
    }
}

/// Why a call failed: the message without dsh's `Error: ` envelope, and for a
/// `HarnessError` its name and code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolFailure {
    /// The message.
    pub message: String,
    /// Name and code, for a `HarnessError`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<ErrorInfo>,
}

impl From<&ToolError> for ToolFailure {
    fn from(error: &ToolError) -> Self {
        Self {
            message: error.message().to_owned(),
            info: error.info().cloned(),
        }
    }
}

/// The outcome of one call. A success has a `value` and no `error`; a failure an `error`
/// and no `value`. Serializes with dsh's field names (`isError`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionResult {
    /// Whether the call failed.
    pub is_error: bool,
    /// The canonical value, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// Why the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolFailure>,
    /// Presentation metadata for UIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ToolExecutionResult {
    /// A success.
    pub fn success(output: crate::ToolOutput) -> Self {
        Self {
            is_error: false,
            value: Some(output.value),
            content: output.content,
            error: None,
            meta: output.meta,
        }
    }

    /// A failure whose content is `Error: <message>`, as dsh renders every thrown error.
    pub fn from_error(error: &ToolError) -> Self {
        Self {
            is_error: true,
            value: None,
            content: vec![ContentBlock::text(format!("Error: {}", error.message()))],
            error: Some(ToolFailure::from(error)),
            meta: None,
        }
    }

    /// A failure with its own content (a post-execute block's feedback).
    pub fn failure(failure: ToolFailure, content: Vec<ContentBlock>) -> Self {
        Self {
            is_error: true,
            value: None,
            content,
            error: Some(failure),
            meta: None,
        }
    }

    /// The text of the text blocks, joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The code of the failure, for a `HarnessError`.
    pub fn code(&self) -> Option<&str> {
        self.error
            .as_ref()
            .and_then(|failure| failure.info.as_ref())
            .map(|info| info.code.as_str())
    }
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use super::*;

    #[test]
    fn results_serialize_with_dsh_field_names() {
        let failed = ToolExecutionResult::from_error(&ToolError::unknown_tool("nope"));
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            json!({
                "isError": true,
                "content": [{"type": "text", "text": "Error: unknown tool \"nope\""}],
                "error": {"message": "unknown tool \"nope\"", "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}}
            })
        );
        let denied = ToolExecutionResult::from_error(&ToolError::new("denied"));
        assert_eq!(
            serde_json::to_value(&denied).unwrap()["error"],
            json!({"message": "denied"})
        );
    }

    #[test]
    fn rewritten_arguments_keep_the_identity() {
        let signal = CancellationToken::new();
        let exec = ToolExecution::new(ToolExecutionInput::new("c1", "echo", json!({}), signal));
        let rewritten = exec.with_arguments(json!({"text": "x"}));
        assert_eq!(rewritten.call_id(), "c1");
        assert_eq!(rewritten.root_call_id(), "c1");
        assert_eq!(rewritten.arguments(), &json!({"text": "x"}));
        assert_eq!(exec.arguments(), &json!({}));
    }
}
