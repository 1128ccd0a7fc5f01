//! The `dsh-llm-replay` plugin: registers a replay adapter for the configured providers.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, KernelError, Plugin, ServiceName};
use dsh_llm::LLM;
use dsh_persistence::SESSION_PERSISTENCE;
use serde::Deserialize;

use crate::adapter::ReplayAdapter;
use crate::recording::Recording;

/// Where the recording is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordingSource {
    /// A session log file, `session.jsonl` or `session.jsonl.zstd` (the row's `session`).
    File(PathBuf),
    /// A session of the profile's session store, JSONL or SQLite, by id (the row's
    /// `sessionId`). The row must inject `sessionPersistence`.
    Stored(String),
}

/// Row config of `dsh-llm-replay`.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "ReplayRow")]
pub struct ReplayConfig {
    /// The recorded session: `session` (a log file) or `sessionId` (a stored session).
    pub recording: RecordingSource,
    /// The provider routes it answers (default: `deepseek-official`).
    pub providers: Vec<String>,
}

/// The row's keys as written; exactly one of `session` and `sessionId` is set.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReplayRow {
    /// The recorded session log (`session.jsonl` or `session.jsonl.zstd`).
    session: Option<PathBuf>,
    /// The id of a recorded session in the profile's session store.
    session_id: Option<String>,
    #[serde(default = "default_providers")]
    providers: Vec<String>,
}

impl TryFrom<ReplayRow> for ReplayConfig {
    type Error = String;

    fn try_from(row: ReplayRow) -> Result<Self, String> {
        let recording = match (row.session, row.session_id) {
            (Some(path), None) => RecordingSource::File(path),
            (None, Some(id)) => RecordingSource::Stored(id),
            (None, None) => return Err("missing field `session`".to_owned()),
            (Some(_), Some(_)) => {
                return Err(
                    "set `session` (a log file) or `sessionId` (a stored session), \
                            not both"
                        .to_owned(),
                );
            }
        };
        Ok(Self {
            recording,
            providers: row.providers,
        })
    }
}

fn default_providers() -> Vec<String> {
    vec![dsh_llm::DEEPSEEK_OFFICIAL.to_owned()]
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
        let recording = match &config.recording {
            RecordingSource::File(path) => Recording::load(path)?,
            RecordingSource::Stored(id) => {
                let persistence =
                    ctx.require(&SESSION_PERSISTENCE)
                        .map_err(|error| match error {
                            KernelError::NotInjected { .. } => format!(
                                "a recording named by `sessionId` is read from the session store: \
                             add `inject: [{}]` to the row",
                                SESSION_PERSISTENCE.name()
                            ),
                            other => other.to_string(),
                        })?;
                Recording::load_stored(persistence.as_ref(), id).await?
            }
        };
        let llm = ctx.require(&LLM)?;
        llm.register_adapter(
            &ctx,
            config.providers,
            Arc::new(ReplayAdapter::new(recording)),
        )?;
        Ok(())
    }
}
