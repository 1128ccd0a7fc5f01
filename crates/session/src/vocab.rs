//! Typed views of the core vocabulary: messages, content blocks, stream chunks, usage and
//! turn-end reasons.
//!
//! Events keep their JSON exactly as written; these types are read from it on demand with
//! [`CoreEvent::read`]. Open-ended shapes (message sources, unknown content blocks) keep their
//! extra fields, so nothing a plugin added is lost.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::SessionEvent;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System prompt.
    System,
    /// The user, injected context, or a tool result.
    User,
    /// The model.
    Assistant,
}

/// A message as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Stable message id.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Where it came from (`{kind:'user'}`, `{kind:'model', provider, model}`, ...).
    pub source: MessageSource,
}

/// Where a message came from: `kind` plus whatever fields that kind carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageSource {
    /// `user`, `model`, `tool`, `plugin`, or a plugin's own kind.
    pub kind: String,
    /// The other fields (`provider`, `model`, `callId`, `plugin`, ...), in written order.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// One block of message content; unknown block types are kept as [`ContentBlock::Other`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// A block of a type this harness knows.
    Known(KnownBlock),
    /// A block of a type added by a plugin.
    Other(Value),
}

/// The content blocks of the core vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum KnownBlock {
    /// Visible text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning.
    Reasoning {
        /// The reasoning text.
        text: String,
    },
    /// An attached image.
    Image {
        /// The attachment reference.
        attachment: Value,
    },
    /// A call the model asked for.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Raw JSON text of the arguments.
        arguments: String,
    },
    /// The result of a call.
    ToolResult {
        /// The call this answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The result content.
        content: Vec<ContentBlock>,
        /// Set when the tool failed.
        #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Prompt tokens written to cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Completion tokens spent reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// One piece of a streamed model reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum StreamChunk {
    /// A content block opens.
    BlockStart {
        /// Block index.
        index: u64,
        /// `text`, `reasoning`, `tool-call`, ...
        #[serde(rename = "blockType")]
        block_type: String,
    },
    /// More visible text.
    TextDelta {
        /// Block index.
        index: u64,
        /// The new text.
        text: String,
    },
    /// More reasoning.
    ReasoningDelta {
        /// Block index.
        index: u64,
        /// The new text.
        text: String,
    },
    /// More of a tool call.
    ToolCallDelta {
        /// Block index.
        index: u64,
        /// Call id.
        id: String,
        /// Tool name, on the first delta.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// More argument text.
        #[serde(rename = "argumentsDelta")]
        arguments_delta: String,
    },
    /// A content block is complete.
    BlockEnd {
        /// Block index.
        index: u64,
        /// The whole block.
        block: ContentBlock,
    },
    /// Token usage of the call.
    Usage {
        /// The counts.
        usage: TokenUsage,
    },
    /// The stream ended.
    Finish {
        /// Why the model stopped: `{"kind": "stop" | "tool-calls" | "max-tokens"}`, or
        /// `{"kind": "aborted" | "error", "failure": {...}}`.
        reason: Value,
        /// Provider state to send back on the next call.
        #[serde(
            rename = "replayState",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        replay_state: Option<Value>,
    },
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmFailure {
    /// What went wrong.
    pub message: String,
    /// A stable code.
    pub code: String,
    /// HTTP status, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// How long the provider asked us to wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_retry_after_ms: Option<u64>,
    /// The provider's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

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
            "turn/start" => TurnData::deserialize(data).map(|d| Self::TurnStart { turn: d.turn }),
            "turn/end" => TurnEndData::deserialize(data).map(|d| Self::TurnEnd {
                turn: d.turn,
                reason: d.reason,
            }),
            "step/start" => StepData::deserialize(data).map(|d| Self::StepStart {
                turn: d.turn,
                step: d.step,
            }),
            "step/end" => StepData::deserialize(data).map(|d| Self::StepEnd {
                turn: d.turn,
                step: d.step,
            }),
            "user/message" => Message::deserialize(data).map(Self::UserMessage),
            "assistant/chunk" => ChunkData::deserialize(data).map(|d| Self::AssistantChunk {
                turn: d.turn,
                step: d.step,
                chunk: d.chunk,
            }),
            "assistant/message" => {
                AssistantMessageData::deserialize(data).map(Self::AssistantMessage)
            }
            "tool/call" => ToolCallData::deserialize(data).map(Self::ToolCall),
            "tool/result" => ToolResultData::deserialize(data).map(Self::ToolResult),
            "session/end-seed" => Ok(Self::EndSeed),
            _ => return None,
        };
        Some(parsed.map_err(|source| VocabError {
            seq: event.seq,
            kind: event.kind.to_string(),
            source,
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json::to_js_string;

    #[test]
    fn messages_round_trip_with_their_extra_fields() {
        let value = json!({
            "id": "m1", "role": "assistant",
            "content": [{"type": "text", "text": "hi"}, {"type": "plugin-x", "z": 1},
                        {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}],
            "source": {"kind": "model", "provider": "deepseek", "model": "m", "replayState": {"a": 1}}
        });
        let message = Message::deserialize(&value).unwrap();
        assert_eq!(
            message.source.fields.get("provider"),
            Some(&json!("deepseek"))
        );
        assert!(matches!(
            message.content.get(1),
            Some(ContentBlock::Other(_))
        ));
        assert_eq!(to_js_string(&message), to_js_string(&value));
    }

    #[test]
    fn core_events_read_as_types() {
        let end = SessionEvent::new(
            "turn/end",
            3,
            0,
            json!({"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook", "reason": "no"}}}),
        );
        let Some(Ok(CoreEvent::TurnEnd { turn: 1, reason })) = CoreEvent::read(&end) else {
            panic!("not a turn end");
        };
        assert_eq!(
            reason,
            TurnEndReason::Aborted {
                reason: AbortCause::Hook {
                    reason: "no".into()
                }
            }
        );
        let chunk = SessionEvent::new(
            "assistant/chunk",
            4,
            0,
            json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "{"}}),
        );
        assert!(matches!(
            CoreEvent::read(&chunk),
            Some(Ok(CoreEvent::AssistantChunk { .. }))
        ));
        let finish = SessionEvent::new(
            "assistant/chunk",
            5,
            0,
            json!({"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}),
        );
        assert!(
            matches!(
                CoreEvent::read(&finish),
                Some(Ok(CoreEvent::AssistantChunk { .. }))
            ),
            "a real finish chunk reads"
        );
        assert!(CoreEvent::read(&SessionEvent::new("goal/change", 5, 0, json!({}))).is_none());
        let bad = SessionEvent::new("turn/start", 6, 0, json!({"turn": "x"}));
        assert!(
            CoreEvent::read(&bad)
                .unwrap()
                .unwrap_err()
                .to_string()
                .contains("event 6 (turn/start)")
        );
    }
}
