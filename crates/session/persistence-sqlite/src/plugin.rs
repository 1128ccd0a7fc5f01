//! The `dsh-persistence-sqlite` plugin: provides `sessionPersistence` backed by one SQLite
//! database.

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

use crate::backend::SqliteBackend;
use crate::path_checks::DatabasePath;
use crate::schema::JournalMode;
use crate::store::SqliteOptions;

/// The default wait for another connection's lock, in milliseconds.
pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 5_000;
/// The longest wait SQLite accepts, in milliseconds.
pub const MAX_BUSY_TIMEOUT_MS: u64 = 2_147_483_647;

/// Row config of `dsh-persistence-sqlite` (dsh's keys).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SqliteConfig {
    /// The database file (created `0600` on first write), or `:memory:`. The shipped overlay
    /// sets `dshHomePath('sessions.sqlite')`.
    pub path: PathBuf,
    /// `wal` (default), `delete`, `truncate` or `persist`.
    #[serde(default)]
    pub journal_mode: JournalMode,
    /// How long to wait for another connection's lock, in milliseconds (default 5,000).
    #[serde(default = "default_busy_timeout")]
    pub busy_timeout_ms: u64,
    /// Accepted for dsh compatibility: how many prepared sessions dsh caches (default 5).
    #[serde(default = "default_cache")]
    pub prepared_session_cache_size: u64,
    /// The write-behind window in milliseconds (default 200).
    #[serde(default = "default_delay")]
    pub write_batch_max_delay_ms: u64,
}

fn default_busy_timeout() -> u64 {
    DEFAULT_BUSY_TIMEOUT_MS
}

fn default_cache() -> u64 {
    5
}

fn default_delay() -> u64 {
    DEFAULT_WRITE_BATCH_MAX_DELAY_MS
}

impl SqliteConfig {
    /// Checks ranges and builds the backend options.
    pub fn options(&self) -> Result<(SqliteOptions, CoordinatorOptions), String> {
        if self.busy_timeout_ms > MAX_BUSY_TIMEOUT_MS {
            return Err(format!(
                "busyTimeoutMs must be an integer from 0 to {MAX_BUSY_TIMEOUT_MS}"
            ));
        }
        if self.prepared_session_cache_size == 0 {
            return Err("preparedSessionCacheSize must be a positive integer".into());
        }
        if !(1..=MAX_WRITE_BATCH_DELAY_MS).contains(&self.write_batch_max_delay_ms) {
            return Err(format!(
                "writeBatchMaxDelayMs must be an integer from 1 to {MAX_WRITE_BATCH_DELAY_MS}"
            ));
        }
        let path = DatabasePath::resolve(&self.path).map_err(|error| error.to_string())?;
        Ok((
            SqliteOptions {
                path,
                journal_mode: self.journal_mode,
                busy_timeout: Duration::from_millis(self.busy_timeout_ms),
            },
            CoordinatorOptions {
                write_batch_max_delay: Duration::from_millis(self.write_batch_max_delay_ms),
            },
        ))
    }
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-persistence-sqlite";

/// The `dsh-persistence-sqlite` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct SqlitePersistencePlugin;

impl Plugin for SqlitePersistencePlugin {
    type Config = SqliteConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SESSIONS.name()] }
    }

    async fn apply(&self, ctx: Context, config: SqliteConfig) -> Result<(), BoxError> {
        let (options, coordinator_options) = config.options()?;
        let coordinator = Coordinator::new(SqliteBackend::new(options)?, coordinator_options);
        let service: Arc<dyn SessionPersistence> = coordinator.clone();
        ctx.provide(&SESSION_PERSISTENCE, service)?;
        install_live_persistence(&ctx, &coordinator)?;
        Ok(())
    }
}
