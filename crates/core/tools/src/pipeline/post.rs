//! The post-execute stage: `tools/post-execute` decides what the model reads.

use std::sync::Arc;

use super::Call;
use super::dispatch::success;
use crate::content::failure_message_from_content;
use crate::error::ToolError;
use crate::events::{PostExecute, PostToolDecision, ToolsPostExecute};
use crate::execution::{ToolExecutionResult, ToolFailure};
use crate::registry::ToolRegistry;

impl ToolRegistry {
    /// Runs `tools/post-execute` over `result` and applies the decision; a late
    /// cancellation then replaces a success.
    pub(super) async fn post_execute(
        &self,
        call: &Call,
        result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        let args = Arc::new(PostExecute {
            execution: call.exec.clone(),
            result,
        });
        let decision = self
            .ctx
            .waterfall::<ToolsPostExecute, _, _>(Arc::clone(&args), |_| async {
                Ok(PostToolDecision::accept())
            })
            .await;
        let result =
            Arc::try_unwrap(args).map_or_else(|args| args.result.clone(), |args| args.result);
        match decision.and_then(|decision| self.apply(call, result, decision)) {
            Ok(result) if call.caller_cancelled() && !result.is_error => call.cancellation(),
            Ok(result) => result,
            Err(error) => ToolExecutionResult::from_error(&error),
        }
    }

    fn apply(
        &self,
        call: &Call,
        result: ToolExecutionResult,
        decision: PostToolDecision,
    ) -> Result<ToolExecutionResult, ToolError> {
        match decision {
            PostToolDecision::Block { feedback } => {
                let message = failure_message_from_content(&feedback);
                Ok(ToolExecutionResult::failure(
                    ToolFailure {
                        message,
                        info: None,
                    },
                    feedback,
                ))
            }
            PostToolDecision::Accept {
                content: Some(_),
                value: Some(_),
            } => Err(ToolError::new(
                "tools/post-execute accept decision cannot replace both value and content",
            )),
            PostToolDecision::Accept {
                value: Some(value), ..
            } => {
                if result.is_error {
                    return Err(ToolError::new(
                        "tools/post-execute cannot replace the value of a failed result",
                    ));
                }
                let name = call.exec.name();
                let entry = self
                    .entry(name)
                    .ok_or_else(|| ToolError::unknown_tool(name))?;
                let output = entry.definition.render(call.exec.arguments(), value)?;
                success(&entry, name, output)
            }
            PostToolDecision::Accept {
                content: Some(content),
                ..
            } => Ok(ToolExecutionResult { content, ..result }),
            PostToolDecision::Accept {
                content: None,
                value: None,
            } => Ok(result),
        }
    }
}
