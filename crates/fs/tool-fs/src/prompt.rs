//! The `tool:read`, `tool:write` and `tool:edit` system-prompt sections (dsh's text).

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_system_prompt::{PromptSection, SYSTEM_PROMPT};

/// The sections: name, order, text.
pub const SECTIONS: [(&str, f64, &str); 3] = [
    (
        "tool:read",
        100.0,
        "Use the read tool — not shell commands like cat — to inspect text files. Results \
         include line numbers. Use offset and limit to continue reading large files.",
    ),
    (
        "tool:write",
        101.0,
        "Use the write tool to create files or completely replace file contents. Existing \
         files are overwritten, so read an existing file first (the default \
         fs-observation-policy requires it) and prefer edit for targeted changes.",
    ),
    (
        "tool:edit",
        102.0,
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces \
         literal old_string with new_string; by default old_string must appear exactly once. \
         If old_string appears multiple times, provide a more specific old_string or set \
         replace_all to true. Read the file first (the default fs-observation-policy requires \
         it), unless you just created or edited it in this session.",
    ),
];

/// Registers the sections with `systemPrompt` for as long as the tools are loaded.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FsPromptSections;

impl Plugin for FsPromptSections {
    type Config = ();

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SYSTEM_PROMPT.name()] }
    }

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        let prompt = ctx.require(&SYSTEM_PROMPT)?;
        for (name, order, text) in SECTIONS {
            prompt.section(&ctx, PromptSection::new(name, order, text))?;
        }
        Ok(())
    }
}
