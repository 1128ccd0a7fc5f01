//! The `dsh-tool-fs` plugin: registers `read`, `write`, `edit` and `read_image`, and their
//! prompt sections.

use std::sync::Arc;

use dsh_fs::FS;
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::SANDBOX_POLICY;
use dsh_tools::TOOLS;

use crate::config::ToolFsConfig;
use crate::context::FsSandbox;
use crate::edit::EditTool;
use crate::prompt::FsPromptSections;
use crate::read::ReadTool;
use crate::read_image::ReadImageTool;
use crate::write::WriteTool;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-tool-fs";

/// The `dsh-tool-fs` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolFsPlugin;

impl Plugin for ToolFsPlugin {
    type Config = ToolFsConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name(), FS.name()] }
    }

    async fn apply(&self, ctx: Context, config: ToolFsConfig) -> Result<(), BoxError> {
        let caps = config.caps()?;
        let tools = ctx.require(&TOOLS)?;
        let fs = ctx.require(&FS)?;
        let policies = match fs.sandbox_mode() {
            None => None,
            Some(_) => Some(ctx.get(&SANDBOX_POLICY).ok_or(
                "tool-fs: the mounted filesystem confines but ctx.sandboxPolicy is missing",
            )?),
        };
        let sandbox = FsSandbox::new(ctx.clone(), policies);
        tools.register(
            &ctx,
            Arc::new(ReadTool::new(ctx.clone(), Arc::clone(&fs), caps)),
        )?;
        tools.register(
            &ctx,
            Arc::new(WriteTool::new(
                ctx.clone(),
                Arc::clone(&fs),
                sandbox.clone(),
            )),
        )?;
        tools.register(&ctx, Arc::new(EditTool::new(ctx.clone(), fs, sandbox)))?;
        tools.register(&ctx, Arc::new(ReadImageTool::new(ctx.clone())))?;
        ctx.plugin(FsPromptSections, serde_json::Value::Null)?;
        Ok(())
    }
}
