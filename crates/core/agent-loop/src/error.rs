//! Errors of the agent API.

use dsh_llm::LlmFailure;
use dsh_session::StoreError;

/// Why an agent operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The session refused an event.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored session could not be brought back.
    #[error("cannot resume session \"{id}\": {source}")]
    Resume {
        /// The session id.
        id: String,
        /// Why persistence refused it.
        #[source]
        source: dsh_persistence::PersistenceError,
    },
    /// The request breaks a rule (a message already pending, bad options, a disposed agent).
    #[error("{0}")]
    Invalid(String),
    /// A plugin refused or failed (a setup callback, an `agent/created` listener).
    #[error("{0}")]
    Plugin(String),
}

/// How a turn stops early, inside the driver.
#[derive(Debug)]
pub(crate) enum TurnError {
    /// The activity was cancelled.
    Aborted,
    /// The turn failed with this failure.
    Failed(LlmFailure),
}

impl TurnError {
    /// An `UNKNOWN` failure with `message`.
    pub(crate) fn unknown(message: impl Into<String>) -> Self {
        Self::Failed(LlmFailure::unknown(message))
    }
}

impl From<StoreError> for TurnError {
    fn from(error: StoreError) -> Self {
        Self::unknown(error.to_string())
    }
}
