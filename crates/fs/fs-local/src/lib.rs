//! The `dsh-fs-local` plugin (dsh's `@deepseek-ai/dsh-fs-local`): provides `fs` as the host
//! disk, unconfined ([`dsh_fs::LocalDisk`]). Its config is [`LocalDiskConfig`] (`cwd`,
//! `diffBasisMaxBytes`).

use std::sync::Arc;

use dsh_fs::{FS, FileSystem, LocalDiskConfig};
use dsh_kernel::{BoxError, Context, Plugin};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-fs-local";

/// The `dsh-fs-local` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsLocalPlugin;

impl Plugin for FsLocalPlugin {
    type Config = LocalDiskConfig;

    async fn apply(&self, ctx: Context, config: LocalDiskConfig) -> Result<(), BoxError> {
        let disk: Arc<dyn FileSystem> = Arc::new(config.disk()?);
        ctx.provide(&FS, disk)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use dsh_kernel::Kernel;

    use super::*;

    #[tokio::test]
    async fn provides_fs_over_the_configured_directory() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = Kernel::new().unwrap();
        kernel
            .root()
            .plugin(FsLocalPlugin, serde_json::json!({"cwd": dir.path()}))
            .unwrap();
        kernel.settle().await;
        let fs = kernel.root().require(&FS).unwrap();
        assert_eq!(fs.sandbox_mode(), None);
        let target = fs.resolve("a.txt", None).unwrap();
        assert_eq!(
            target.target_key,
            std::fs::canonicalize(dir.path()).unwrap().join("a.txt")
        );
        kernel.shutdown().await;
    }

    #[tokio::test]
    async fn a_bad_diff_bound_fails_the_load() {
        let kernel = Kernel::new().unwrap();
        let fiber = kernel
            .root()
            .plugin(FsLocalPlugin, serde_json::json!({"diffBasisMaxBytes": 0}))
            .unwrap();
        kernel.settle().await;
        let error = fiber.error().unwrap_or_default();
        assert!(
            error.contains("fs-local: diffBasisMaxBytes must be a positive safe integer"),
            "{error}"
        );
        kernel.shutdown().await;
    }
}
