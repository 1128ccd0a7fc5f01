//! The `edit` tool: a literal replacement in a file the session has read.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsEditRequest, FsObservation, events};
use dsh_kernel::Context;
use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Value, json};

use crate::blocking::{on_disk, required_path};
use crate::context::{FsSandbox, actor};
use crate::mutation::{Mutation, diff_meta};
use crate::render::format_edit_output;
use crate::schema::{EDIT_DESCRIPTION, edit_parameters};

/// The `edit` tool.
pub struct EditTool {
    ctx: Context,
    fs: Arc<dyn FileSystem>,
    sandbox: FsSandbox,
    parameters: Value,
}

impl EditTool {
    /// The tool over `fs`, fenced by `sandbox`.
    pub fn new(ctx: Context, fs: Arc<dyn FileSystem>, sandbox: FsSandbox) -> Self {
        let parameters = edit_parameters(sandbox.escalation());
        Self {
            ctx,
            fs,
            sandbox,
            parameters,
        }
    }
}

fn render(value: Value, args: &Value) -> ToolOutput {
    let path = value
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let replace_all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
    let file_path = args
        .get("file_path")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text = format_edit_output(path, replace_all);
    let meta = diff_meta(&value, file_path);
    ToolOutput::new(value, vec![ContentBlock::text(text)]).with_meta(meta)
}

#[dsh_tools::async_trait]
impl ToolDefinition for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        EDIT_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let file_path = required_path(&args, "file_path")?;
        let text = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let request = FsEditRequest {
            old_string: text("old_string"),
            new_string: text("new_string"),
            replace_all: args.get("replace_all").and_then(Value::as_bool) == Some(true),
        };
        if request.old_string.is_empty() {
            return Err(ToolError::new("old_string must be a non-empty string"));
        }
        if request.old_string == request.new_string {
            return Err(ToolError::new("old_string and new_string must differ"));
        }
        let call = Mutation::prepare(&self.sandbox, &self.fs, &args, &run, &file_path).await?;
        let target = call.target.clone();
        let expected = events::edit_intent(&self.ctx, target.clone(), actor(&run))
            .await
            .map_err(|error| call.fail(error))?;
        let (editing, policy) = (target.clone(), call.policy.clone());
        let outcome = on_disk(&self.fs, move |fs| {
            fs.edit_text(&editing, &request, expected.as_ref(), policy.as_ref())
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
        let value =
            json!({"path": target.display_path, "before": outcome.before, "after": outcome.after});
        Ok(render(value, &args))
    }

    fn render(&self, args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        Ok(render(value, args))
    }
}
