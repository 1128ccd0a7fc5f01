//! The `str_replace_editor` tool: one command per call over the filesystem seam.

use std::sync::Arc;

use dsh_fs::FileSystem;
use dsh_kernel::Context;
use dsh_shell::SandboxPolicyService;
use dsh_tools::{ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::Value;

use crate::args::{Command, EditorArgs};
use crate::config::EditorSettings;
use crate::create::create;
use crate::insert::insert;
use crate::policy::MutationPolicy;
use crate::replace::str_replace;
use crate::schema::{TOOL_NAME, output_schema, parameters};
use crate::seam::Seam;
use crate::view::view;

/// The model-facing `str_replace_editor` tool. Its value is the text the model reads (one
/// text block, no presentation metadata); it runs exclusively.
pub struct StrReplaceEditorTool {
    ctx: Context,
    fs: Arc<dyn FileSystem>,
    policy: MutationPolicy,
    max_output_chars: usize,
    description: String,
    parameters: Value,
    output_schema: Value,
}

impl StrReplaceEditorTool {
    /// The tool over `fs`, dispatching the `fs/*` events through `ctx`. `policy` gives each
    /// mutation its sandbox policy and is required when `fs` confines (the plugin checks);
    /// views are clipped at `max_output_chars` UTF-16 code units.
    pub fn new(
        ctx: Context,
        fs: Arc<dyn FileSystem>,
        policy: Option<Arc<dyn SandboxPolicyService>>,
        max_output_chars: usize,
        description: impl Into<String>,
    ) -> Self {
        Self {
            ctx,
            fs,
            policy: MutationPolicy::new(policy),
            max_output_chars,
            description: description.into(),
            parameters: parameters(),
            output_schema: output_schema(),
        }
    }

    pub(crate) fn from_settings(
        ctx: Context,
        fs: Arc<dyn FileSystem>,
        policy: Option<Arc<dyn SandboxPolicyService>>,
        settings: EditorSettings,
    ) -> Self {
        Self::new(
            ctx,
            fs,
            policy,
            settings.max_output_chars,
            settings.description,
        )
    }
}

#[dsh_tools::async_trait]
impl ToolDefinition for StrReplaceEditorTool {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let args = EditorArgs::parse(&args)?;
        let seam = Seam::new(&self.ctx, &self.fs, &run);
        let text = match args.command {
            Command::View => view(&seam, &args, self.max_output_chars).await?,
            Command::Create => create(&seam, &self.policy, &args, &run).await?,
            Command::StrReplace => str_replace(&seam, &self.policy, &args, &run).await?,
            Command::Insert => insert(&seam, &self.policy, &args, &run).await?,
        };
        Ok(ToolOutput::text(text))
    }
}
