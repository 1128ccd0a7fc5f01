//! The `dsh-tools` plugin (row `tools`): provides the [`ToolRegistry`] as `tools`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::registry::{TOOLS, ToolRegistry};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-tools";

/// Row config of `dsh-tools` (dsh's keys).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsConfig {
    /// How tools are presented to the model. dsh knows `native` (the default: every schema
    /// is sent), `code` and `both` (Code Mode: a `run_code` tool and a generated SDK). The
    /// shipped bundles set it from `DSH_TOOLS_MODE`, which is usually unset. Only `native`
    /// is built: `code` and `both` fail the row naming the mode, anything else fails as
    /// dsh's config schema does.
    pub mode: Option<String>,
    /// Code Mode's cap on a program's overlapping sub-calls (dsh default 10; must be a
    /// positive integer). Accepted for compatibility; unused without Code Mode.
    pub max_parallel_sub_calls: Option<u64>,
}

impl ToolsConfig {
    /// Checks the values as dsh does.
    pub fn check(&self) -> Result<(), String> {
        match self.mode.as_deref() {
            None | Some("native") => {}
            Some(mode @ ("code" | "both")) => {
                return Err(format!(
                    "mode \"{mode}\" (Code Mode) is not supported by this build yet; \
                     use \"native\" or leave DSH_TOOLS_MODE unset"
                ));
            }
            Some(other) => {
                return Err(format!(
                    "mode must be one of \"native\", \"code\", \"both\" (got \"{other}\")"
                ));
            }
        }
        if self.max_parallel_sub_calls == Some(0) {
            return Err("maxParallelSubCalls must be a positive integer".to_owned());
        }
        Ok(())
    }
}

/// The `dsh-tools` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolsPlugin;

impl Plugin for ToolsPlugin {
    type Config = ToolsConfig;

    async fn apply(&self, ctx: Context, config: ToolsConfig) -> Result<(), BoxError> {
        config.check()?;
        ctx.provide(&TOOLS, Arc::new(ToolRegistry::new(ctx.clone())))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(mode: &str) -> ToolsConfig {
        ToolsConfig {
            mode: Some(mode.to_owned()),
            ..ToolsConfig::default()
        }
    }

    #[test]
    fn only_native_presentation() {
        assert_eq!(ToolsConfig::default().check(), Ok(()));
        assert_eq!(mode("native").check(), Ok(()));
        assert_eq!(
            mode("code").check(),
            Err(
                "mode \"code\" (Code Mode) is not supported by this build yet; use \"native\" \
                 or leave DSH_TOOLS_MODE unset"
                    .to_owned()
            )
        );
        assert_eq!(
            mode("direct").check(),
            Err("mode must be one of \"native\", \"code\", \"both\" (got \"direct\")".to_owned())
        );
        let zero = ToolsConfig {
            max_parallel_sub_calls: Some(0),
            ..ToolsConfig::default()
        };
        assert_eq!(
            zero.check(),
            Err("maxParallelSubCalls must be a positive integer".to_owned())
        );
    }
}
