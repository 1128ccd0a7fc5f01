//! The `tool:bash` system-prompt section, registered once the `systemPrompt` service exists
//! (a child fiber waits for it, so the tool works in trees without a system prompt).

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_system_prompt::{PromptSection, SYSTEM_PROMPT};

use crate::schema::PROMPT_SECTION;

/// The section's name.
pub const PROMPT_SECTION_NAME: &str = "tool:bash";
/// The section's order (after the persona, before product sections).
pub const PROMPT_SECTION_ORDER: f64 = 105.0;

/// Registers the section with `systemPrompt` for as long as the tool is loaded.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BashPromptSection;

impl Plugin for BashPromptSection {
    type Config = ();

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SYSTEM_PROMPT.name()] }
    }

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        let prompt = ctx.require(&SYSTEM_PROMPT)?;
        prompt.section(
            &ctx,
            PromptSection::new(PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER, PROMPT_SECTION),
        )?;
        Ok(())
    }
}
