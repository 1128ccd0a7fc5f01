//! The `dsh-bash-local` plugin: provides `shell`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use dsh_shell::{BashRunner, SHELL, ShellConfig, ShellExecutor};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-bash-local";

/// The `dsh-bash-local` plugin. Its row config is [`ShellConfig`]. Unloading it terminates
/// and awaits every process its executor still owns.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashLocalPlugin;

impl Plugin for BashLocalPlugin {
    type Config = ShellConfig;

    async fn apply(&self, ctx: Context, config: ShellConfig) -> Result<(), BoxError> {
        let executor = Arc::new(BashRunner::new(config)?);
        let service: Arc<dyn ShellExecutor> = Arc::clone(&executor) as Arc<dyn ShellExecutor>;
        ctx.provide(&SHELL, service)?;
        ctx.effect_async(move || async move { executor.shutdown().await })?;
        Ok(())
    }
}
