//! The `dsh-persistence-jsonl` plugin: provides `sessionPersistence` backed by JSONL files.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_persistence::{
    Coordinator, CoordinatorOptions, DEFAULT_WRITE_BATCH_MAX_DELAY_MS, MAX_WRITE_BATCH_DELAY_MS,
    SESSION_PERSISTENCE, SessionPersistence, install_live_persistence,
};
use dsh_session::SESSIONS;
use serde::Deserialize;

use crate::backend::{JsonlBackend, JsonlOptions};
use crate::layout::Compression;

/// Row config of `dsh-persistence-jsonl` (dsh's keys).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JsonlConfig {
    /// The sessions root; bundles set `dshHomePath('sessions')`.
    pub root: PathBuf,
    /// Pack runs of streamed chunks into rows when writing (default true).
    #[serde(default = "default_true")]
    pub pack_chunks: bool,
    /// `zstd` (default) or `none`.
    #[serde(default)]
    pub compression: CompressionSetting,
    /// Accepted for dsh compatibility: how many prepared sessions dsh caches (default 5).
    #[serde(default = "default_cache")]
    pub prepared_session_cache_size: u64,
    /// The write-behind window in milliseconds (default 200).
    #[serde(default = "default_delay")]
    pub write_batch_max_delay_ms: u64,
}

/// The `compression` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompressionSetting {
    /// Checksummed zstd frames.
    #[default]
    Zstd,
    /// Plain JSONL.
    None,
}

fn default_true() -> bool {
    true
}

fn default_cache() -> u64 {
    5
}

fn default_delay() -> u64 {
    DEFAULT_WRITE_BATCH_MAX_DELAY_MS
}

impl JsonlConfig {
    /// Checks ranges and builds the backend options.
    pub fn options(&self) -> Result<(JsonlOptions, CoordinatorOptions), String> {
        if self.prepared_session_cache_size == 0 {
            return Err("preparedSessionCacheSize must be a positive integer".into());
        }
        if !(1..=MAX_WRITE_BATCH_DELAY_MS).contains(&self.write_batch_max_delay_ms) {
            return Err(format!(
                "writeBatchMaxDelayMs must be an integer from 1 to {MAX_WRITE_BATCH_DELAY_MS}"
            ));
        }
        let compression = match self.compression {
            CompressionSetting::Zstd => Compression::Zstd,
            CompressionSetting::None => Compression::None,
        };
        Ok((
            JsonlOptions {
                root: self.root.clone(),
                compression,
                pack_chunks: self.pack_chunks,
            },
            CoordinatorOptions {
                write_batch_max_delay: Duration::from_millis(self.write_batch_max_delay_ms),
            },
        ))
    }
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-persistence-jsonl";

/// The `dsh-persistence-jsonl` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonlPersistencePlugin;

impl Plugin for JsonlPersistencePlugin {
    type Config = JsonlConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SESSIONS.name()] }
    }

    async fn apply(&self, ctx: Context, config: JsonlConfig) -> Result<(), BoxError> {
        let (options, coordinator_options) = config.options()?;
        let coordinator = Coordinator::new(JsonlBackend::new(options)?, coordinator_options);
        let service: Arc<dyn SessionPersistence> = coordinator.clone();
        ctx.provide(&SESSION_PERSISTENCE, service)?;
        install_live_persistence(&ctx, &coordinator)?;
        Ok(())
    }
}
