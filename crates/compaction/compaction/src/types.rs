//! The seam's vocabulary: triggers, surface spans, results and the manual-compaction error.

use dsh_protocol::ContentBlock;

/// Why an automatic compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactionTrigger {
    /// The latest routed request is near its context window (`pressure`).
    Pressure,
    /// The provider rejected a request as too long (`context-overflow`).
    ContextOverflow,
}

impl CompactionTrigger {
    /// The trigger as upstream spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pressure => "pressure",
            Self::ContextOverflow => "context-overflow",
        }
    }
}

/// An inclusive surface span named by the seqs of its first and last node. Compared by
/// surface position: after earlier replacements `start` may be numerically above `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurfaceSpan {
    /// Seq of the first node in the span.
    pub start: u64,
    /// Seq of the last node in the span.
    pub end: u64,
}

/// What one successful compaction wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// The backend-minted compaction id.
    pub compaction_id: String,
    /// The command that asked for it (manual `/compact`), when there was one.
    pub source_command_id: Option<String>,
    /// Seq of `compaction/start`.
    pub start_seq: u64,
    /// Seq of `compaction/summary`.
    pub summary_seq: u64,
    /// Seq of `compaction/end`.
    pub end_seq: u64,
    /// The summary blocks.
    pub summary: Vec<ContentBlock>,
    /// The shadowed surface span.
    pub shadowed_range: SurfaceSpan,
    /// Every shadowed seq in surface order (authoritative).
    pub shadowed_seqs: Vec<u64>,
    /// The estimated tokens of the shadowed nodes.
    pub shadowed_token_count: u64,
}

/// The expected failure kinds of a manual compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManualCompactionErrorCode {
    /// The compaction lock (an unmatched `compaction/start`) is active, or the agent is busy.
    Busy,
    /// The request was cancelled.
    Cancelled,
    /// The surface changed while the summary was being written.
    Changed,
    /// The summary could not be produced.
    Summary,
    /// The replacement could not be committed.
    Commit,
    /// The log could not be flushed.
    Persistence,
}

impl ManualCompactionErrorCode {
    /// The code as upstream spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Busy => "busy",
            Self::Cancelled => "cancelled",
            Self::Changed => "changed",
            Self::Summary => "summary",
            Self::Commit => "commit",
            Self::Persistence => "persistence",
        }
    }
}

/// A boxed cause, as errors carry them across the seam.
pub type BoxedCause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An expected failure of `compact_now` (upstream `ManualCompactionError`).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ManualCompactionError {
    /// What kind of failure.
    pub code: ManualCompactionErrorCode,
    /// The message shown to the user.
    pub message: String,
    /// The underlying failure, when there is one.
    #[source]
    pub cause: Option<BoxedCause>,
}

impl ManualCompactionError {
    /// An error with a code and message and no cause.
    pub fn new(code: ManualCompactionErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            cause: None,
        }
    }

    /// The same error carrying `cause`.
    #[must_use]
    pub fn with_cause(mut self, cause: impl Into<BoxedCause>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    /// The busy error: `<stage>: compaction already in progress; the session compaction
    /// lock is already active`.
    pub fn busy(stage: &str) -> Self {
        Self::new(
            ManualCompactionErrorCode::Busy,
            format!(
                "{stage}: compaction already in progress; the session compaction lock is already active"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(CompactionTrigger::Pressure.as_str(), "pressure");
        assert_eq!(
            CompactionTrigger::ContextOverflow.as_str(),
            "context-overflow"
        );
        assert_eq!(
            ManualCompactionErrorCode::Persistence.as_str(),
            "persistence"
        );
    }

    #[test]
    fn busy_message_and_cause() {
        let error = ManualCompactionError::busy("compaction").with_cause("inner");
        assert_eq!(error.code, ManualCompactionErrorCode::Busy);
        assert_eq!(
            error.to_string(),
            "compaction: compaction already in progress; the session compaction lock is already active"
        );
        assert!(std::error::Error::source(&error).is_some());
    }
}
