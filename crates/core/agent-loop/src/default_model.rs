//! The `dsh-agent-default-model` plugin (row `agent-default-model`): the model route apps
//! give the agents they create (dsh: `deepseek-official` / `deepseek-v4-flash`).

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceKey};
use serde::Deserialize;

/// The service (`ctx.agentDefaultModel` in dsh).
pub const AGENT_DEFAULT_MODEL: ServiceKey<AgentDefaultModel> = ServiceKey::new("agentDefaultModel");

/// The plugin's name in rows.
pub const DEFAULT_MODEL_PLUGIN_NAME: &str = "dsh-agent-default-model";

/// A provider route and model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSelection {
    /// Provider route.
    pub provider: String,
    /// Model id.
    pub model: String,
}

/// The configured default model.
#[derive(Debug, Clone)]
pub struct AgentDefaultModel {
    selection: ModelSelection,
}

impl AgentDefaultModel {
    /// The default route.
    pub fn current_selection(&self) -> ModelSelection {
        self.selection.clone()
    }
}

/// The `dsh-agent-default-model` plugin; its config is the selection.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentDefaultModelPlugin;

impl Plugin for AgentDefaultModelPlugin {
    type Config = ModelSelection;

    async fn apply(&self, ctx: Context, config: ModelSelection) -> Result<(), BoxError> {
        if config.provider.is_empty() || config.model.is_empty() {
            return Err("provider and model must be non-empty".into());
        }
        ctx.provide(
            &AGENT_DEFAULT_MODEL,
            Arc::new(AgentDefaultModel { selection: config }),
        )?;
        Ok(())
    }
}
