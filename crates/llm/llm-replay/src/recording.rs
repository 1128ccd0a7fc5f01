//! The model steps of a recorded session log.

use std::path::Path;

use dsh_llm::{ContentBlock, StreamChunk};
use dsh_persistence_jsonl::Compression;
use dsh_persistence_jsonl::decode::decode_log;
use dsh_protocol::kinds::LLM_RETRY;
use dsh_session::SessionEvent;
use dsh_session::vocab::CoreEvent;

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
            if event.kind == LLM_RETRY {
                ended = true;
                continue;
            }
            if event.kind != "assistant/chunk" {
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
                " (a relative path is taken from the directory dsh runs in: run from the \
                 directory it is relative to, or make the `session` path absolute)"
            } else {
                ""
            };
            format!(
                "cannot read the recording {}: {error}{hint}",
                shown.display()
            )
        })?;
        let compression = if path.extension().is_some_and(|ext| ext == "zstd") {
            Compression::Zstd
        } else {
            Compression::None
        };
        let log = decode_log(&bytes, compression, path)
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
}
