//! Running one model turn's calls: parallel-safe runs overlap, exclusive calls run alone.

use futures_util::StreamExt;
use futures_util::stream;

use crate::execution::{ToolExecutionInput, ToolExecutionResult};
use crate::registry::{ExecutionMode, ToolRegistry};

/// dsh's default `maxParallelToolCalls`.
pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = 10;

impl ToolRegistry {
    /// Runs `inputs` in order with [`DEFAULT_MAX_PARALLEL_TOOL_CALLS`]; see
    /// [`ToolRegistry::execute_batch_with_limit`].
    pub async fn execute_batch(&self, inputs: Vec<ToolExecutionInput>) -> Vec<ToolExecutionResult> {
        self.execute_batch_with_limit(inputs, DEFAULT_MAX_PARALLEL_TOOL_CALLS)
            .await
    }

    /// Runs `inputs`, returning their results in call order. An exclusive call runs alone,
    /// after everything before it finished; a run of consecutive parallel calls overlaps, at
    /// most `max_parallel` at a time (at least one), a new one starting as one finishes.
    ///
    /// Each call goes through the whole pipeline on its own, so policy stages of overlapping
    /// calls may interleave. The agent loop schedules with the staged API instead
    /// ([`ToolRegistry::prepare_call`], [`ToolRegistry::dispatch_call`],
    /// [`ToolRegistry::finalize_call`]), keeping `tools/pre-execute` and
    /// `tools/post-execute` in model order and logging each call.
    pub async fn execute_batch_with_limit(
        &self,
        inputs: Vec<ToolExecutionInput>,
        max_parallel: usize,
    ) -> Vec<ToolExecutionResult> {
        let limit = max_parallel.max(1);
        let mut results = Vec::with_capacity(inputs.len());
        let mut pending = inputs.into_iter().peekable();
        while let Some(first) = pending.next() {
            if self.execution_mode(&first) == ExecutionMode::Exclusive {
                results.push(Box::pin(self.execute(first)).await);
                continue;
            }
            let mut group = vec![first];
            while let Some(next) =
                pending.next_if(|input| self.execution_mode(input) == ExecutionMode::Parallel)
            {
                group.push(next);
            }
            let finished: Vec<ToolExecutionResult> = stream::iter(group)
                .map(|input| Box::pin(self.execute(input)))
                .buffered(limit)
                .collect()
                .await;
            results.extend(finished);
        }
        results
    }
}
