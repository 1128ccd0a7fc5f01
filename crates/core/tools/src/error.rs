//! Tool failures: a message, and for dsh's `HarnessError`s a class name and a code.

use serde::{Deserialize, Serialize};

/// dsh's canonical error codes.
pub mod codes {
    /// Cancellation after the tool body was invoked.
    pub const ABORTED: &str = "ABORTED";
    /// Cancellation before the tool body was invoked.
    pub const ABORTED_BEFORE_DISPATCH: &str = "ABORTED_BEFORE_DISPATCH";
    /// Arguments that do not match the tool's `parameters` schema.
    pub const INVALID_ARGS: &str = "INVALID_ARGS";
    /// A value that does not match the tool's output schema.
    pub const INVALID_TOOL_OUTPUT: &str = "INVALID_TOOL_OUTPUT";
    /// A call naming a tool that is not registered.
    pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
    /// A schema outside the enforced JSON Schema subset.
    pub const UNSUPPORTED_SCHEMA: &str = "UNSUPPORTED_SCHEMA";
}

/// The structured part of a `HarnessError`: its class name and code (dsh's `ToolErrorInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The error class, as dsh names it (`ToolArgsError`, `AbortError`, ...).
    pub name: String,
    /// The routable code (`INVALID_ARGS`, `ABORTED`, ...).
    pub code: String,
}

impl ErrorInfo {
    /// Info with `name` and `code`.
    pub fn new(name: impl Into<String>, code: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            code: code.into(),
        }
    }
}

/// A failed tool call, listener or registration.
///
/// An error with [`ErrorInfo`] is what dsh calls a `HarnessError`; the pipeline copies the info
/// into the result's `error.info`. A plain error (from [`ToolError::new`]) carries only its
/// message, as a JavaScript `Error` does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
    info: Option<ErrorInfo>,
}

impl ToolError {
    /// A plain error: a message and no info.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            info: None,
        }
    }

    /// A `HarnessError` of class `name` with `code`.
    pub fn harness(
        name: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            message: message.into(),
            info: Some(ErrorInfo::new(name, code)),
        }
    }

    /// A plain error from any error, its sources joined with `: `.
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Self {
        Self::new(dsh_kernel::error_chain(error))
    }

    /// `tool call aborted` (`AbortError`, `ABORTED`): what a body returns when it stopped
    /// because its signal was cancelled.
    pub fn aborted() -> Self {
        Self::harness("AbortError", codes::ABORTED, "tool call aborted")
    }

    /// `tool call aborted before dispatch` (`AbortError`, `ABORTED_BEFORE_DISPATCH`).
    pub fn aborted_before_dispatch() -> Self {
        Self::harness(
            "AbortError",
            codes::ABORTED_BEFORE_DISPATCH,
            "tool call aborted before dispatch",
        )
    }

    /// `unknown tool "<name>"` (`ToolNotFoundError`, `UNKNOWN_TOOL`).
    pub fn unknown_tool(name: &str) -> Self {
        Self::harness(
            "ToolNotFoundError",
            codes::UNKNOWN_TOOL,
            format!("unknown tool \"{name}\""),
        )
    }

    /// `invalid arguments: <violations joined by "; ">` (`ToolArgsError`, `INVALID_ARGS`).
    pub fn invalid_args(violations: &[String]) -> Self {
        Self::harness(
            "ToolArgsError",
            codes::INVALID_ARGS,
            format!("invalid arguments: {}", violations.join("; ")),
        )
    }

    /// `tool "<name>" returned invalid output: <violations>` (`ToolOutputError`,
    /// `INVALID_TOOL_OUTPUT`).
    pub fn invalid_output(tool: &str, violations: &[String]) -> Self {
        Self::harness(
            "ToolOutputError",
            codes::INVALID_TOOL_OUTPUT,
            format!(
                "tool \"{tool}\" returned invalid output: {}",
                violations.join("; ")
            ),
        )
    }

    /// `unsupported JSON schema: <violations>` (`JsonSchemaError`, `UNSUPPORTED_SCHEMA`).
    pub fn unsupported_schema(violations: &[String]) -> Self {
        Self::harness(
            "JsonSchemaError",
            codes::UNSUPPORTED_SCHEMA,
            format!("unsupported JSON schema: {}", violations.join("; ")),
        )
    }

    /// The message, without dsh's `Error: ` envelope.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The class name and code, for a `HarnessError`.
    pub fn info(&self) -> Option<&ErrorInfo> {
        self.info.as_ref()
    }

    /// The code, for a `HarnessError`.
    pub fn code(&self) -> Option<&str> {
        self.info.as_ref().map(|info| info.code.as_str())
    }
}

impl From<dsh_kernel::BoxError> for ToolError {
    fn from(error: dsh_kernel::BoxError) -> Self {
        match error.downcast::<ToolError>() {
            Ok(tool_error) => *tool_error,
            Err(other) => Self::from_error(other.as_ref()),
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_error_joins_violations_as_dsh_does() {
        let error = ToolError::invalid_args(&[
            "missing required property \"a\"".to_owned(),
            "\"b\" must be a number".to_owned(),
        ]);
        assert_eq!(
            error.message(),
            "invalid arguments: missing required property \"a\"; \"b\" must be a number"
        );
        assert_eq!(
            error.info(),
            Some(&ErrorInfo::new("ToolArgsError", "INVALID_ARGS"))
        );
    }

    #[test]
    fn unknown_tool_text_and_code() {
        let error = ToolError::unknown_tool("ghost");
        assert_eq!(error.to_string(), "unknown tool \"ghost\"");
        assert_eq!(error.code(), Some("UNKNOWN_TOOL"));
    }

    #[test]
    fn boxed_tool_errors_keep_their_info() {
        let boxed: dsh_kernel::BoxError = Box::new(ToolError::aborted());
        assert_eq!(ToolError::from(boxed), ToolError::aborted());
        let plain: dsh_kernel::BoxError = "nope".into();
        assert_eq!(ToolError::from(plain), ToolError::new("nope"));
    }
}
