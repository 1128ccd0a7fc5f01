//! The `dsh-llm-replay` plugin: registers a replay adapter for the configured providers.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_llm::LLM;
use serde::Deserialize;

use crate::adapter::ReplayAdapter;
use crate::recording::Recording;

/// Row config of `dsh-llm-replay`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplayConfig {
    /// The recorded session log (`session.jsonl` or `session.jsonl.zstd`).
    pub session: PathBuf,
    /// The provider routes it answers (default: `deepseek-official`).
    #[serde(default = "default_providers")]
    pub providers: Vec<String>,
}

fn default_providers() -> Vec<String> {
    vec!["deepseek-official".to_owned()]
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-llm-replay";

/// The `dsh-llm-replay` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayPlugin;

impl Plugin for ReplayPlugin {
    type Config = ReplayConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[LLM.name()] }
    }

    async fn apply(&self, ctx: Context, config: ReplayConfig) -> Result<(), BoxError> {
        let recording = Recording::load(&config.session)?;
        let llm = ctx.require(&LLM)?;
        llm.register_adapter(
            &ctx,
            config.providers,
            Arc::new(ReplayAdapter::new(recording)),
        )?;
        Ok(())
    }
}
