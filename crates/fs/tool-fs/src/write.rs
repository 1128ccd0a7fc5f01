//! The `write` tool: create a file, or replace all of it, under the observation policy.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsObservation, events};
use dsh_kernel::Context;
use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Value, json};

use crate::blocking::{on_disk, required_path};
use crate::context::{FsSandbox, actor};
use crate::diff::hunk_diffs;
use crate::error::{map_denial, remediate, tool_error};
use crate::render::format_write_output;
use crate::schema::{WRITE_DESCRIPTION, write_parameters};

/// The `write` tool.
pub struct WriteTool {
    ctx: Context,
    fs: Arc<dyn FileSystem>,
    sandbox: FsSandbox,
    parameters: Value,
}

impl WriteTool {
    /// The tool over `fs`, fenced by `sandbox`.
    pub fn new(ctx: Context, fs: Arc<dyn FileSystem>, sandbox: FsSandbox) -> Self {
        let parameters = write_parameters(sandbox.escalation());
        Self {
            ctx,
            fs,
            sandbox,
            parameters,
        }
    }
}

/// The text of a write value.
fn render(value: Value, file_path: &str) -> ToolOutput {
    let path = value
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let created = value.get("operation").and_then(Value::as_str) == Some("create");
    let text = format_write_output(path, created);
    let diffs = match (
        value.get("before").and_then(Value::as_str),
        value.get("after").and_then(Value::as_str),
    ) {
        (Some(before), Some(after)) => hunk_diffs(file_path, before, after),
        _ => Vec::new(),
    };
    ToolOutput::new(value, vec![ContentBlock::text(text)]).with_meta(json!({"diffs": diffs}))
}

#[dsh_tools::async_trait]
impl ToolDefinition for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        WRITE_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let file_path = required_path(&args, "file_path")?;
        let content = args
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let policy = self.sandbox.resolve_policy(&args, &run).await?;
        let mode = policy.as_ref().map(|policy| policy.mode);
        let escalation = self.sandbox.escalation();
        let fail = move |error| tool_error(remediate(map_denial(error, mode, escalation)));
        let cwd = match &policy {
            Some(policy) => Some(
                dsh_shell::canonical_path(&policy.workspace_root)
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => crate::context::session_cwd(&run, &file_path),
        };
        let path = file_path.clone();
        let target = on_disk(&self.fs, move |fs| fs.resolve(&path, cwd.as_deref()))
            .await
            .map_err(fail)?;
        let intent = events::write_intent(&self.ctx, target.clone(), actor(&run), None)
            .await
            .map_err(fail)?;
        let writing = target.clone();
        let outcome = on_disk(&self.fs, move |fs| {
            fs.write_text(&writing, &content, intent.as_ref(), policy.as_ref())
        })
        .await
        .map_err(fail)?;
        events::observe(
            &self.ctx,
            &target,
            FsObservation::Present(outcome.version.clone()),
            &actor(&run),
        )
        .map_err(|error| ToolError::new(error.to_string()))?;
        let value = json!({
            "path": target.display_path,
            "operation": outcome.operation.as_str(),
            "before": outcome.before,
            "after": outcome.after,
        });
        Ok(render(value, &file_path))
    }

    fn render(&self, args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        let file_path = args
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(render(value, file_path))
    }
}
