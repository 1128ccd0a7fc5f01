//! The retry recorder of the loop: `llm/retry` and `llm/retry-started` go into the agent's
//! session log, so the log explains every delay.

use std::sync::Arc;

use dsh_kernel::BoxError;
use dsh_llm::{RetryRecord, RetryRecorder};
use dsh_session::{LiveSession, SurfaceIntent};

/// A [`RetryRecorder`] that appends each record to a live session. Both kinds are known to
/// `dsh-session`; they are log-only, never surface events. The [`crate::LlmRetryPlugin`]
/// records through it, and so may an app that retries a request outside a turn with
/// [`dsh_llm::retry_stream`].
#[derive(Debug, Clone)]
pub struct SessionRetryRecorder {
    session: Arc<LiveSession>,
}

impl SessionRetryRecorder {
    /// Records into `session`.
    pub fn new(session: Arc<LiveSession>) -> Self {
        Self { session }
    }
}

impl RetryRecorder for SessionRetryRecorder {
    fn record(&self, record: &RetryRecord) -> Result<(), BoxError> {
        self.session
            .append(record.event_type(), record.data(), SurfaceIntent::default())
            .map(drop)
            .map_err(|error| Box::new(error) as BoxError)
    }
}
