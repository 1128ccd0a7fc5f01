//! The `write` tool: create a file, or replace all of it, under the observation policy.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsObservation, events};
use dsh_kernel::Context;
use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Value, json};

use crate::blocking::{on_disk, required_path};
use crate::context::{FsSandbox, actor};
use crate::mutation::{Mutation, diff_meta};
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
    let meta = diff_meta(&value, file_path);
    ToolOutput::new(value, vec![ContentBlock::text(text)]).with_meta(meta)
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
        let call = Mutation::prepare(&self.sandbox, &self.fs, &args, &run, &file_path).await?;
        let target = call.target.clone();
        let intent = events::write_intent(&self.ctx, target.clone(), actor(&run), None)
            .await
            .map_err(|error| call.fail(error))?;
        let (writing, policy) = (target.clone(), call.policy.clone());
        let outcome = on_disk(&self.fs, move |fs| {
            fs.write_text(&writing, &content, intent.as_ref(), policy.as_ref())
        })
        .await
        .map_err(|error| call.fail(error))?;
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
