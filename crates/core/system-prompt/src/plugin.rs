//! The `dsh-system-prompt` plugin: provides [`SystemPrompt`] as `systemPrompt`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::service::{SYSTEM_PROMPT, SystemPrompt};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-system-prompt";

/// The plugin that runtime-context snapshot messages name as their source.
pub const RUNTIME_CONTEXT_PLUGIN: &str = "@deepseek-ai/dsh-system-prompt";

/// Row config of `dsh-system-prompt` (dsh's keys).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SystemPromptConfig {
    /// Open the prompt with the DeepSeek Harness identity (default true).
    pub include_harness_identity: Option<bool>,
    /// Keep runtime-context snapshots in model history (default true); false registers a
    /// suppression for the plugin's lifetime.
    pub include_runtime_context: Option<bool>,
    /// The deployment's persona, the order-0 section (default empty). It may reference
    /// `{{variable}}`s, resolved when the prompt is rendered.
    pub persona: Option<String>,
    /// Model-facing tool names in order, with [`crate::TOOL_ORDER_REST`] exactly once where
    /// the unlisted tools go. A repeated name or a missing rest entry fails the plugin; a name
    /// no tool provider knows fails each assembly. Omitted: tools in name order.
    pub tool_order: Option<Vec<String>>,
}

/// The `dsh-system-prompt` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemPromptPlugin;

impl Plugin for SystemPromptPlugin {
    type Config = SystemPromptConfig;

    async fn apply(&self, ctx: Context, config: SystemPromptConfig) -> Result<(), BoxError> {
        let service = SystemPrompt::new(ctx.clone(), &config)?;
        ctx.provide(&SYSTEM_PROMPT, Arc::new(service))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn config_keys() {
        let config: SystemPromptConfig = serde_json::from_value(json!({
            "includeHarnessIdentity": false,
            "includeRuntimeContext": true,
            "persona": "You are {{model}}.",
            "toolOrder": ["bash", "<unlisted-tools>"],
        }))
        .unwrap();
        assert_eq!(
            config,
            SystemPromptConfig {
                include_harness_identity: Some(false),
                include_runtime_context: Some(true),
                persona: Some("You are {{model}}.".to_owned()),
                tool_order: Some(vec!["bash".to_owned(), "<unlisted-tools>".to_owned()]),
            }
        );
        let empty: SystemPromptConfig = serde_json::from_value(json!({})).unwrap();
        assert_eq!(empty, SystemPromptConfig::default());
        let unknown = serde_json::from_value::<SystemPromptConfig>(json!({"personna": "x"}));
        assert!(unknown.is_err());
    }
}
