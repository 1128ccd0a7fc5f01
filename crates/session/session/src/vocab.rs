//! Typed views of the core events: turn and step boundaries, messages, stream chunks, tool
//! calls and results, turn-end reasons.
//!
//! Events keep their JSON exactly as written; these types are read from it on demand with
//! [`CoreEvent::read`]. They are built from the shared model vocabulary ([`dsh_protocol::model`]),
//! whose open-ended shapes (message sources, content blocks, finish reasons) keep a plugin's
//! values as written, so nothing is lost.

use dsh_protocol::kinds;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::SessionEvent;
pub use dsh_protocol::model::{
    ContentBlock, LlmFailure, Message, MessageSource, Role, StreamChunk, TokenUsage,
};

/// Why a turn was aborted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AbortCause {
    /// The user cancelled.
    User,
    /// The parent agent cancelled.
    Parent,
    /// The agent was disposed.
    Disposed,
    /// A hook stopped the turn.
    Hook {
        /// The hook's reason.
        reason: String,
    },
    /// An old log that did not record a cause.
    Legacy,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TurnEndReason {
    /// The model finished.
    Completed,
    /// Someone stopped the turn.
    Aborted {
        /// Who and why.
        reason: AbortCause,
    },
    /// A policy blocked the turn.
    Blocked,
    /// The model call failed.
    Error {
        /// The failure.
        error: LlmFailure,
    },
    /// The reply hit the token limit.
    MaxTokens,
    /// The process died mid-turn; written only by crash recovery.
    Interrupted,
}

/// `assistant/message` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessageData {
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
    /// The reply.
    pub message: Message,
    /// Token usage, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// Set when the stream was cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
}

/// `tool/call` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallData {
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Raw JSON text of the arguments.
    pub arguments: String,
}

/// A tool failure's name and code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    /// Error name, such as `ToolOutcomeUnknownError`.
    pub name: String,
    /// Stable code, such as `TOOL_OUTCOME_UNKNOWN`.
    pub code: String,
}

/// `tool/result` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultData {
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
    /// The result message.
    pub message: Message,
    /// Set when the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// Tool-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A core event read as typed data.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreEvent {
    /// `turn/start`.
    TurnStart {
        /// Turn number.
        turn: u64,
    },
    /// `turn/end`.
    TurnEnd {
        /// Turn number.
        turn: u64,
        /// How it ended.
        reason: TurnEndReason,
    },
    /// `step/start`.
    StepStart {
        /// Turn number.
        turn: u64,
        /// Step number.
        step: u64,
    },
    /// `step/end`.
    StepEnd {
        /// Turn number.
        turn: u64,
        /// Step number.
        step: u64,
    },
    /// `user/message`.
    UserMessage(Message),
    /// `assistant/chunk`.
    AssistantChunk {
        /// Turn number.
        turn: u64,
        /// Step number.
        step: u64,
        /// The chunk.
        chunk: StreamChunk,
    },
    /// `assistant/message`.
    AssistantMessage(AssistantMessageData),
    /// `tool/call`.
    ToolCall(ToolCallData),
    /// `tool/result`.
    ToolResult(ToolResultData),
    /// `session/end-seed`.
    EndSeed,
}

/// A core event whose data does not have the core shape.
#[derive(Debug, thiserror::Error)]
#[error("event {seq} ({kind}) does not have the expected shape: {source}")]
pub struct VocabError {
    /// Seq of the event.
    pub seq: u64,
    /// Type of the event.
    pub kind: String,
    /// What serde found.
    #[source]
    pub source: serde_json::Error,
}

#[derive(Deserialize)]
struct TurnData {
    turn: u64,
}

#[derive(Deserialize)]
struct TurnEndData {
    turn: u64,
    reason: TurnEndReason,
}

#[derive(Deserialize)]
struct StepData {
    turn: u64,
    step: u64,
}

#[derive(Deserialize)]
struct ChunkData {
    turn: u64,
    step: u64,
    chunk: StreamChunk,
}

impl CoreEvent {
    /// Reads `event` as a core event; `None` for plugin and log-only types outside the core.
    pub fn read(event: &SessionEvent) -> Option<Result<Self, VocabError>> {
        let data = event.data.value();
        let parsed = match event.kind.as_ref() {
            kinds::TURN_START => {
                TurnData::deserialize(data).map(|d| Self::TurnStart { turn: d.turn })
            }
            kinds::TURN_END => TurnEndData::deserialize(data).map(|d| Self::TurnEnd {
                turn: d.turn,
                reason: d.reason,
            }),
            kinds::STEP_START => StepData::deserialize(data).map(|d| Self::StepStart {
                turn: d.turn,
                step: d.step,
            }),
            kinds::STEP_END => StepData::deserialize(data).map(|d| Self::StepEnd {
                turn: d.turn,
                step: d.step,
            }),
            kinds::USER_MESSAGE => Message::deserialize(data).map(Self::UserMessage),
            kinds::ASSISTANT_CHUNK => ChunkData::deserialize(data).map(|d| Self::AssistantChunk {
                turn: d.turn,
                step: d.step,
                chunk: d.chunk,
            }),
            kinds::ASSISTANT_MESSAGE => {
                AssistantMessageData::deserialize(data).map(Self::AssistantMessage)
            }
            kinds::TOOL_CALL => ToolCallData::deserialize(data).map(Self::ToolCall),
            kinds::TOOL_RESULT => ToolResultData::deserialize(data).map(Self::ToolResult),
            kinds::SESSION_END_SEED => Ok(Self::EndSeed),
            _ => return None,
        };
        Some(parsed.map_err(|source| VocabError {
            seq: event.seq,
            kind: event.kind.to_string(),
            source,
        }))
    }
}
