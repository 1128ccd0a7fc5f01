//! The system-prompt sections of both tools (`tool:glob`, order 103; `tool:grep`, order 104),
//! dsh's exact texts.

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_system_prompt::{PromptSection, SYSTEM_PROMPT};

/// The glob section's name.
pub const GLOB_SECTION_NAME: &str = "tool:glob";
/// The glob section's order (after read, write and edit).
pub const GLOB_SECTION_ORDER: f64 = 103.0;
/// The grep section's name.
pub const GREP_SECTION_NAME: &str = "tool:grep";
/// The grep section's order (before bash).
pub const GREP_SECTION_ORDER: f64 = 104.0;

/// The grep section's text.
pub const GREP_SECTION: &str = "Use the grep tool — not shell grep or rg — to search file \
    contents. Use read on a matched file when you need surrounding context.";

/// The glob section's text for the deployment's sampling choice.
pub fn glob_section(sample_over_cap: bool) -> String {
    let over_cap = if sample_over_cap {
        "while a larger one is sampled across top-level entries, so it spans the tree instead of \
         one subtree."
    } else {
        "while a larger one keeps the modification-time-ordered head."
    };
    format!(
        "Use the glob tool — not shell find — to discover files by path pattern. A pattern with \
         no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather \
         than its top level. Results are files only, never directories, and include hidden and \
         ignored files: a result that fits comes back in modification-time order, {over_cap}"
    )
}

/// Registers both sections with `systemPrompt` once it exists, for as long as the tools are
/// loaded (a child fiber waits for the service, so the tools work in trees without a system
/// prompt, such as `dsh tools`). Its config is the sampling choice.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SearchPromptSections;

impl Plugin for SearchPromptSections {
    type Config = bool;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SYSTEM_PROMPT.name()] }
    }

    async fn apply(&self, ctx: Context, sample_over_cap: bool) -> Result<(), BoxError> {
        let prompt = ctx.require(&SYSTEM_PROMPT)?;
        prompt.section(
            &ctx,
            PromptSection::new(
                GLOB_SECTION_NAME,
                GLOB_SECTION_ORDER,
                glob_section(sample_over_cap),
            ),
        )?;
        prompt.section(
            &ctx,
            PromptSection::new(GREP_SECTION_NAME, GREP_SECTION_ORDER, GREP_SECTION),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_are_dshs() {
        assert_eq!(
            glob_section(false),
            "Use the glob tool — not shell find — to discover files by path pattern. A pattern \
             with no \"/\" matches basenames at any depth, so \"*\" matches every file in the \
             tree rather than its top level. Results are files only, never directories, and \
             include hidden and ignored files: a result that fits comes back in \
             modification-time order, while a larger one keeps the modification-time-ordered \
             head."
        );
        assert!(glob_section(true).ends_with(
            "while a larger one is sampled across top-level entries, so it spans the tree \
             instead of one subtree."
        ));
        assert_eq!(
            GREP_SECTION,
            "Use the grep tool — not shell grep or rg — to search file contents. Use read on a \
             matched file when you need surrounding context."
        );
    }
}
