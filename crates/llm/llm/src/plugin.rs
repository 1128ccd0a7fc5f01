//! The `dsh-llm` plugin (row `llm`): provides the [`LlmRuntime`] as `llm`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::runtime::{LLM, LlmRuntime};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-llm";

/// Row config of `dsh-llm`: none (dsh's runtime takes none); any key is refused.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {}

/// The `dsh-llm` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlmPlugin;

impl Plugin for LlmPlugin {
    type Config = LlmConfig;

    async fn apply(&self, ctx: Context, _config: LlmConfig) -> Result<(), BoxError> {
        ctx.provide(&LLM, Arc::new(LlmRuntime::new(ctx.clone())))?;
        Ok(())
    }
}
