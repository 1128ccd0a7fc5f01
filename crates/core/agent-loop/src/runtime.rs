//! What every agent of one loop shares: the services it drives and the loop's settings.

use std::sync::Arc;

use dsh_kernel::Context;
use dsh_llm::LlmRuntime;
use dsh_session::SessionStore;
use dsh_system_prompt::SystemPrompt;
use dsh_tools::ToolRegistry;

/// The loop's settings, resolved from its row config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    /// Parallel-safe tool calls in flight per step (at least 1).
    pub max_parallel_tool_calls: usize,
    /// Steps per turn before the turn ends with `STEP_LIMIT`; `None` is dsh's behaviour
    /// (no limit).
    pub max_steps: Option<u64>,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            max_parallel_tool_calls: dsh_tools::DEFAULT_MAX_PARALLEL_TOOL_CALLS,
            max_steps: None,
        }
    }
}

/// The services and settings of one agent loop.
pub(crate) struct LoopRuntime {
    /// The loop plugin's context: agent events dispatch through it.
    pub(crate) ctx: Context,
    pub(crate) llm: Arc<LlmRuntime>,
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) prompt: Arc<SystemPrompt>,
    pub(crate) sessions: Arc<SessionStore>,
    pub(crate) settings: LoopSettings,
}

impl LoopRuntime {
    /// Makes everything the session logged so far durable (a checkpoint before a request
    /// or a tool call). A failure is logged: the write-behind keeps the events and retries
    /// with the next ones.
    pub(crate) async fn checkpoint(&self, session_id: &str) {
        if let Err(error) = self.sessions.flush(session_id).await {
            tracing::warn!(session = session_id, "checkpoint flush failed: {error}");
        }
    }
}
