//! The compaction service (`compaction`): the seam every backend implements.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use dsh_kernel::ServiceKey;
use dsh_protocol::errors::BoxError;
use dsh_session::LiveSession;
use tokio_util::sync::CancellationToken;

use crate::types::{CompactionResult, CompactionTrigger, ManualCompactionError};

/// The compaction service's key (`ctx.compaction` in dsh). One implementation per context.
pub const COMPACTION: ServiceKey<dyn CompactionEngine> = ServiceKey::new("compaction");

/// The agent a compaction works for: its session and its model options.
#[derive(Debug, Clone)]
pub struct CompactionAgentContext {
    /// The agent's session.
    pub session: Arc<LiveSession>,
    /// The agent's configured provider, if any.
    pub provider: Option<String>,
    /// The agent's configured model, if any.
    pub model: Option<String>,
}

/// What a maintenance task returns.
pub type MaintenanceOutcome = Result<Option<CompactionResult>, ManualCompactionError>;

/// The work run under an agent's maintenance phase, handed that phase's signal.
pub type MaintenanceTask = Box<
    dyn FnOnce(CancellationToken) -> Pin<Box<dyn Future<Output = MaintenanceOutcome> + Send>>
        + Send,
>;

/// An idle agent that can run manual compaction as maintenance work.
#[async_trait]
pub trait ManualCompactAgent: Send + Sync {
    /// The agent's session and model options.
    fn context(&self) -> &CompactionAgentContext;

    /// Runs `task` in the maintenance phase. Fails at once (`busy`) unless the agent is
    /// idle; waking input sent meanwhile is queued and starts the driver when it settles.
    async fn run_maintenance(&self, task: MaintenanceTask) -> MaintenanceOutcome;
}

/// A compaction backend.
#[async_trait]
pub trait CompactionEngine: Send + Sync {
    /// The automatic policy: `Pressure` applies the backend's threshold and retention to
    /// the latest routed request; `ContextOverflow` may force a balanced reduction below
    /// the threshold. `Ok(None)` = nothing safe to compact.
    async fn compact_if_needed(
        &self,
        agent: &CompactionAgentContext,
        trigger: CompactionTrigger,
        signal: &CancellationToken,
    ) -> Result<Option<CompactionResult>, BoxError>;

    /// Explicit compaction of an idle session below pressure: claims maintenance before
    /// any await, selects without writing (`Ok(None)` on a no-op), then writes a
    /// standalone bracket (`turn: null`) and flushes after it closes.
    async fn compact_now(
        &self,
        agent: &dyn ManualCompactAgent,
        signal: &CancellationToken,
        source_command_id: Option<&str>,
    ) -> MaintenanceOutcome;

    /// Summarizes the inclusive surface span `start..=end` (seqs, by surface position).
    /// Rejects an active lock and missing, reversed or unbalanced edges; the replacement's
    /// source is [`compact_checkpoint_source`](crate::compact_checkpoint_source).
    async fn compact_region(
        &self,
        start: u64,
        end: u64,
        agent: &CompactionAgentContext,
        signal: Option<&CancellationToken>,
    ) -> Result<CompactionResult, BoxError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_name() {
        assert_eq!(COMPACTION.name().as_str(), "compaction");
    }
}
