//! The model steps of a recorded session log.

use std::path::Path;

use dsh_llm::{ContentBlock, StreamChunk};
use dsh_persistence::SessionPersistence;
use dsh_persistence::log_file::decode::{decode_framed, decode_plain};
use dsh_protocol::kinds;
use dsh_session::SessionEvent;
use dsh_session::vocab::CoreEvent;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// One recorded model call: the chunks the model streamed for one attempt of a `(turn, step)`.
///
/// A step that was retried holds one attempt per request: the failed ones (each ending in an
/// `error` finish) and the last one, each a [`RecordedStep`] of the same `(turn, step)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedStep {
    /// The turn.
    pub turn: u64,
    /// The step within the turn.
    pub step: u64,
    /// The chunks, in order.
    pub chunks: Vec<StreamChunk>,
}

impl RecordedStep {
    /// The ids of the tool calls the step asked for, in order.
    pub fn tool_call_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for chunk in &self.chunks {
            let id = match chunk {
                StreamChunk::ToolCallDelta { id, .. } => Some(id.clone()),
                StreamChunk::BlockEnd {
                    block: ContentBlock::ToolCall { id, .. },
                    ..
                } => Some(id.clone()),
                _ => None,
            };
            if let Some(id) = id.filter(|id| !ids.contains(id)) {
                ids.push(id);
            }
        }
        ids
    }

    /// Whether the call failed: its finish is an `error` or `aborted` one, so the tool calls
    /// it streamed were never run.
    pub fn failed(&self) -> bool {
        self.chunks.iter().any(|chunk| {
            chunk
                .finish_reason()
                .is_some_and(|reason| reason.failure().is_some())
        })
    }
}

/// The model steps of a session, in the order they were recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recording {
    /// The steps.
    pub steps: Vec<RecordedStep>,
}

impl Recording {
    /// Groups the `assistant/chunk` events of `events` into model calls: consecutive chunks of
    /// one `(turn, step)`, where a `finish` chunk or an `llm/retry` event ends a call, so each
    /// attempt of a retried step is a call of its own.
    pub fn from_events(events: &[SessionEvent]) -> Result<Self, String> {
        let mut steps: Vec<RecordedStep> = Vec::new();
        // Whether the last call is over, so the next chunk starts another one.
        let mut ended = true;
        for event in events {
            if event.kind == kinds::LLM_RETRY {
                ended = true;
                continue;
            }
            if event.kind != kinds::ASSISTANT_CHUNK {
                continue;
            }
            let Some(CoreEvent::AssistantChunk { turn, step, chunk }) = CoreEvent::read(event)
                .transpose()
                .map_err(|error| error.to_string())?
            else {
                continue;
            };
            let finish = chunk.finish_reason().is_some();
            match steps.last_mut() {
                Some(last) if !ended && last.turn == turn && last.step == step => {
                    last.chunks.push(chunk);
                }
                _ => steps.push(RecordedStep {
                    turn,
                    step,
                    chunks: vec![chunk],
                }),
            }
            ended = finish;
        }
        Ok(Self { steps })
    }

    /// Reads a session log file (`session.jsonl`, or `session.jsonl.zstd` in zstd frames).
    pub fn load(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|error| {
            let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            let hint = if path.is_relative() {
                " (a relative path is taken from the directory dsh runs in: in a patch file, \
                 start it with `./` to take it from the patch file's directory, or make the \
                 `session` path absolute)"
            } else {
                ""
            };
            format!(
                "cannot read the recording {}: {error}{hint}",
                shown.display()
            )
        })?;
        if bytes.starts_with(SQLITE_MAGIC) {
            return Err(format!(
                "the recording {} is a SQLite database, not a session log: name the recorded \
                 session with `sessionId: <id>` instead of `session:`, with \
                 `inject: [sessionPersistence]` on the row, in a profile whose session store \
                 is that database (profiles/examples/sqlite.patch.yml)",
                path.display()
            ));
        }
        let log = if path.extension().is_some_and(|ext| ext == "zstd") {
            decode_framed(&bytes, path)
        } else {
            decode_plain(&bytes, path)
        }
        .map_err(|error| format!("the recording {} does not read: {error}", path.display()))?;
        let recording = Self::from_events(&log.events)
            .map_err(|error| format!("the recording {}: {error}", path.display()))?;
        if recording.steps.is_empty() {
            return Err(format!(
                "the recording {} has no assistant/chunk events to replay",
                path.display()
            ));
        }
        Ok(recording)
    }

    /// Reads session `id` from a session store (JSONL or SQLite, whichever `persistence` is),
    /// without changing it: a turn a crash left open is closed in memory only.
    pub async fn load_stored(
        persistence: &dyn SessionPersistence,
        id: &str,
    ) -> Result<Self, String> {
        let stored = persistence
            .inspect(id)
            .await
            .map_err(|error| format!("the recorded session \"{id}\" does not read: {error}"))?;
        let recording = Self::from_events(&stored.events)
            .map_err(|error| format!("the recorded session \"{id}\": {error}"))?;
        if recording.steps.is_empty() {
            return Err(format!(
                "the recorded session \"{id}\" has no assistant/chunk events to replay"
            ));
        }
        Ok(recording)
    }
}
