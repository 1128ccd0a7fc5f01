//! The `dsh-tool-fs-search` plugin: checks the config, registers `glob` and `grep`, and adds
//! their system-prompt sections.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_tools::TOOLS;

use crate::config::ToolFsSearchConfig;
use crate::glob::GlobTool;
use crate::grep::GrepTool;
use crate::prompt::SearchPromptSections;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-tool-fs-search";

/// The `dsh-tool-fs-search` plugin (dsh's `tool-fs-search`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolFsSearchPlugin;

impl Plugin for ToolFsSearchPlugin {
    type Config = ToolFsSearchConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name()] }
    }

    async fn apply(&self, ctx: Context, config: ToolFsSearchConfig) -> Result<(), BoxError> {
        let caps = config.caps()?;
        let tools = ctx.require(&TOOLS)?;
        tools.register(&ctx, Arc::new(GlobTool::new(caps)))?;
        tools.register(&ctx, Arc::new(GrepTool::new(caps)))?;
        ctx.plugin(
            SearchPromptSections,
            serde_json::Value::Bool(caps.sample_over_cap_glob_results),
        )?;
        Ok(())
    }
}
