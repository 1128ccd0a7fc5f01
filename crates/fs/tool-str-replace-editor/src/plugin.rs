//! The `dsh-tool-str-replace-editor` plugin: registers `str_replace_editor` over the mounted
//! filesystem.

use std::sync::Arc;

use dsh_fs::FS;
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::SANDBOX_POLICY;
use dsh_tools::TOOLS;

use crate::config::StrReplaceEditorConfig;
use crate::tool::StrReplaceEditorTool;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-tool-str-replace-editor";

/// The `dsh-tool-str-replace-editor` plugin (dsh's `tool-str-replace-editor`).
///
/// It injects `tools` and `fs`. When the filesystem confines (`sandbox_mode()` is set), the
/// `sandboxPolicy` service must be up as well, else the load fails with
/// `tool-str-replace-editor: the mounted filesystem confines but ctx.sandboxPolicy is missing`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StrReplaceEditorPlugin;

impl Plugin for StrReplaceEditorPlugin {
    type Config = StrReplaceEditorConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name(), FS.name()] }
    }

    async fn apply(&self, ctx: Context, config: StrReplaceEditorConfig) -> Result<(), BoxError> {
        let settings = config.settings()?;
        let tools = ctx.require(&TOOLS)?;
        let fs = ctx.require(&FS)?;
        let policy = match fs.sandbox_mode() {
            None => None,
            Some(_) => Some(ctx.get(&SANDBOX_POLICY).ok_or(
                "tool-str-replace-editor: the mounted filesystem confines but \
                 ctx.sandboxPolicy is missing",
            )?),
        };
        let tool = StrReplaceEditorTool::from_settings(ctx.clone(), fs, policy, settings);
        tools.register(&ctx, Arc::new(tool))?;
        Ok(())
    }
}
