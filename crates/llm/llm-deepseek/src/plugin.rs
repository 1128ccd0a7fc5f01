//! The `dsh-llm-deepseek` plugin: registers a [`DeepSeekAdapter`] for `deepseek-official`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_llm::LLM;

use crate::adapter::DeepSeekAdapter;
use crate::config::DeepSeekConfig;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-llm-deepseek";
/// The provider route the plugin registers.
pub const PROVIDER: &str = dsh_llm::DEEPSEEK_OFFICIAL;

/// The `dsh-llm-deepseek` plugin; needs the `llm` service ([`dsh_llm::LlmPlugin`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeepSeekPlugin;

impl Plugin for DeepSeekPlugin {
    type Config = DeepSeekConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[LLM.name()] }
    }

    async fn apply(&self, ctx: Context, config: DeepSeekConfig) -> Result<(), BoxError> {
        let llm = ctx.require(&LLM)?;
        let adapter = DeepSeekAdapter::new(config)?;
        llm.register_adapter(&ctx, [PROVIDER], Arc::new(adapter))?;
        Ok(())
    }
}
