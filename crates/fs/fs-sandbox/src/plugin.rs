//! The plugin: the disk of its config behind the `sandboxPolicy` service.

use std::sync::Arc;

use dsh_fs::{FS, FileSystem, LocalDiskConfig};
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::SANDBOX_POLICY;

use crate::fence::SandboxedDisk;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-fs-sandbox";

/// The `dsh-fs-sandbox` plugin; its config is [`LocalDiskConfig`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FsSandboxPlugin;

impl Plugin for FsSandboxPlugin {
    type Config = LocalDiskConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SANDBOX_POLICY.name()] }
    }

    async fn apply(&self, ctx: Context, config: LocalDiskConfig) -> Result<(), BoxError> {
        let policies = ctx.require(&SANDBOX_POLICY)?;
        let disk: Arc<dyn FileSystem> = Arc::new(SandboxedDisk::new(config.disk()?, policies));
        ctx.provide(&FS, disk)?;
        Ok(())
    }
}
