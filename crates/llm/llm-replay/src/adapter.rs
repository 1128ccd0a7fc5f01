//! The adapter: the n-th request of a session gets the n-th recorded model call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_kernel::sync::lock;
use dsh_llm::{
    AdapterStream, ContentBlock, GenerateOptions, LlmAdapter, LlmFailure, adapter_stream_of,
};

use crate::recording::Recording;

/// The code of a request made after the last recorded step.
pub const REPLAY_EXHAUSTED: &str = "REPLAY_EXHAUSTED";
/// The code of a request that does not follow the recording.
pub const REPLAY_DIVERGED: &str = "REPLAY_DIVERGED";

/// Where one session is in the recording.
#[derive(Debug, Default)]
struct Cursor {
    next: usize,
    /// Tool calls the last replayed step asked for.
    pending_calls: Vec<String>,
}

/// Replays a [`Recording`], one step per request, separately for each session id.
pub struct ReplayAdapter {
    recording: Arc<Recording>,
    cursors: Mutex<HashMap<Option<String>, Cursor>>,
}

impl ReplayAdapter {
    /// An adapter over `recording`.
    pub fn new(recording: Recording) -> Self {
        Self {
            recording: Arc::new(recording),
            cursors: Mutex::new(HashMap::new()),
        }
    }

    fn cursors(&self) -> MutexGuard<'_, HashMap<Option<String>, Cursor>> {
        lock(&self.cursors)
    }
}

/// The ids of the tool results `options` carries.
fn tool_results(options: &GenerateOptions) -> Vec<String> {
    options
        .messages
        .iter()
        .flat_map(|message| message.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

#[async_trait::async_trait]
impl LlmAdapter for ReplayAdapter {
    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        let mut cursors = self.cursors();
        let cursor = cursors.entry(options.session_id.clone()).or_default();
        let results = tool_results(&options);
        let missing: Vec<&String> = cursor
            .pending_calls
            .iter()
            .filter(|id| !results.contains(id))
            .collect();
        if !missing.is_empty() {
            return Err(LlmFailure::new(
                REPLAY_DIVERGED,
                format!(
                    "replay diverged at recorded step {}: the request carries no result for the \
                     recorded tool call(s) {}",
                    cursor.next + 1,
                    missing
                        .iter()
                        .map(|id| format!("\"{id}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let Some(step) = self.recording.steps.get(cursor.next) else {
            return Err(LlmFailure::new(
                REPLAY_EXHAUSTED,
                format!(
                    "the replay recording has no more model steps: all {} were replayed",
                    self.recording.steps.len()
                ),
            ));
        };
        cursor.next += 1;
        // A failed call's tool calls never ran: the retry (or the next turn) carries no result.
        cursor.pending_calls = if step.failed() {
            Vec::new()
        } else {
            step.tool_call_ids()
        };
        let chunks: Vec<_> = step.chunks.iter().cloned().map(Ok).collect();
        Ok(adapter_stream_of(chunks))
    }
}
