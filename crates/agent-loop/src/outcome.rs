//! How a turn ended, as `turn/end` records it.

use dsh_llm::LlmFailure;
use serde_json::{Value, json};

use crate::cause::CancelCause;

/// The code of a turn ended by the loop's step limit (`maxSteps`; dsh has no such limit).
pub const STEP_LIMIT: &str = "STEP_LIMIT";

/// Why a turn ended (dsh's `TurnEndReason`, minus `interrupted`, which only crash repair
/// writes).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// The model stopped without asking for tools (or a tool concluded the turn).
    Completed,
    /// The turn was cancelled.
    Aborted(CancelCause),
    /// An `agent/pre-step` listener rejected the step.
    Blocked,
    /// The request failed (after any retries), or the loop itself failed.
    Error(LlmFailure),
    /// A reply hit the output limit.
    MaxTokens,
}

impl TurnEnd {
    /// The `kind` dsh logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Aborted(_) => "aborted",
            Self::Blocked => "blocked",
            Self::Error(_) => "error",
            Self::MaxTokens => "max-tokens",
        }
    }

    /// The `reason` object of `turn/end`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Aborted(cause) => json!({"kind": "aborted", "reason": cause.to_json()}),
            Self::Error(failure) => json!({"kind": "error", "error": failure}),
            other => json!({"kind": other.kind()}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_print_as_dsh_logs_them() {
        assert_eq!(
            TurnEnd::Completed.to_json().to_string(),
            r#"{"kind":"completed"}"#
        );
        assert_eq!(
            TurnEnd::MaxTokens.to_json().to_string(),
            r#"{"kind":"max-tokens"}"#
        );
        assert_eq!(
            TurnEnd::Aborted(CancelCause::User).to_json().to_string(),
            r#"{"kind":"aborted","reason":{"kind":"user"}}"#
        );
        let failure = LlmFailure::new("RATE_LIMIT", "slow down");
        assert_eq!(
            TurnEnd::Error(failure).to_json()["error"]["code"],
            json!("RATE_LIMIT")
        );
    }
}
