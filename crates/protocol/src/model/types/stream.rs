//! Streamed replies: the chunks an adapter emits, why a reply stopped, and its token usage.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::content::ContentBlock;
use crate::model::failure::LlmFailure;

/// Token accounting of one model call. The counts are disjoint: `input_tokens` is uncached
/// input only, cached input is `cache_read_tokens`/`cache_write_tokens`, and
/// `reasoning_tokens` is part of `output_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Uncached prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Prompt tokens written to cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Completion tokens spent reasoning (within `output_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// Why a response stopped: `{kind: 'stop'}`, `{kind: 'error', failure}`, ...
#[derive(Debug, Clone, PartialEq)]
pub enum FinishReason {
    /// The model finished.
    Stop,
    /// The model asked for tool calls.
    ToolCalls,
    /// The reply hit the output limit.
    MaxTokens,
    /// The request was cancelled.
    Aborted {
        /// What happened.
        failure: LlmFailure,
    },
    /// The request failed.
    Error {
        /// What happened.
        failure: LlmFailure,
    },
    /// A provider-specific reason (or a known kind with extra fields), kept as written.
    Other(Map<String, Value>),
}

impl FinishReason {
    /// The `kind` tag.
    pub fn kind(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool-calls",
            Self::MaxTokens => "max-tokens",
            Self::Aborted { .. } => "aborted",
            Self::Error { .. } => "error",
            Self::Other(map) => map.get("kind").and_then(Value::as_str).unwrap_or_default(),
        }
    }

    /// The failure of an `aborted` or `error` finish.
    pub fn failure(&self) -> Option<&LlmFailure> {
        match self {
            Self::Aborted { failure } | Self::Error { failure } => Some(failure),
            _ => None,
        }
    }

    /// Reads a reason from its JSON object.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err("a finish reason must be an object".to_owned());
        };
        let Some(kind) = map.get("kind").and_then(Value::as_str) else {
            return Err("a finish reason needs a string \"kind\"".to_owned());
        };
        let only = |allowed: &[&str]| map.keys().all(|key| allowed.contains(&key.as_str()));
        let failure = || {
            map.get("failure")
                .cloned()
                .ok_or_else(|| format!("finish reason \"{kind}\" needs \"failure\""))
                .and_then(|value| {
                    serde_json::from_value::<LlmFailure>(value)
                        .map_err(|error| format!("finish reason \"{kind}\": {error}"))
                })
        };
        let reason = match kind {
            "stop" if only(&["kind"]) => Self::Stop,
            "tool-calls" if only(&["kind"]) => Self::ToolCalls,
            "max-tokens" if only(&["kind"]) => Self::MaxTokens,
            "aborted" if only(&["kind", "failure"]) => Self::Aborted {
                failure: failure()?,
            },
            "error" if only(&["kind", "failure"]) => Self::Error {
                failure: failure()?,
            },
            _ => Self::Other(map),
        };
        Ok(reason)
    }
}

impl Serialize for FinishReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::Stop | Self::ToolCalls | Self::MaxTokens => {
                map.serialize_entry("kind", self.kind())?;
            }
            Self::Aborted { failure } | Self::Error { failure } => {
                map.serialize_entry("kind", self.kind())?;
                map.serialize_entry("failure", failure)?;
            }
            Self::Other(fields) => {
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// One piece of a streamed reply, as adapters emit it and the session logs it in
/// `assistant/chunk`.
///
/// The grammar: `block-start`, deltas and `block-end` per block index (blocks may
/// interleave), then `usage` (optional), then exactly one terminal `finish`. Tool arguments
/// stay raw JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum StreamChunk {
    /// A block opens.
    BlockStart {
        /// Block index.
        index: u64,
        /// Its type (`text`, `reasoning`, `tool-call`, or a plugin's).
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
        /// Tool name, when this fragment carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// More argument text.
        #[serde(rename = "argumentsDelta")]
        arguments_delta: String,
    },
    /// A block is complete; `block` is authoritative.
    BlockEnd {
        /// Block index.
        index: u64,
        /// The whole block.
        block: ContentBlock,
    },
    /// Token usage of the call (before `finish`).
    Usage {
        /// The counts.
        usage: TokenUsage,
    },
    /// The stream ends.
    Finish {
        /// Why.
        reason: FinishReason,
        /// Adapter-private replay state of a successful response
        /// (`{response, blocks?}`), opaque to the harness.
        #[serde(
            rename = "replayState",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        replay_state: Option<Value>,
    },
}

impl StreamChunk {
    /// A `finish` without replay state.
    pub fn finish(reason: FinishReason) -> Self {
        Self::Finish {
            reason,
            replay_state: None,
        }
    }

    /// A `finish` of kind `error`.
    pub fn error(failure: LlmFailure) -> Self {
        Self::finish(FinishReason::Error { failure })
    }

    /// The `type` tag.
    pub fn chunk_type(&self) -> &'static str {
        match self {
            Self::BlockStart { .. } => "block-start",
            Self::TextDelta { .. } => "text-delta",
            Self::ReasoningDelta { .. } => "reasoning-delta",
            Self::ToolCallDelta { .. } => "tool-call-delta",
            Self::BlockEnd { .. } => "block-end",
            Self::Usage { .. } => "usage",
            Self::Finish { .. } => "finish",
        }
    }

    /// The reason, for a `finish`.
    pub fn finish_reason(&self) -> Option<&FinishReason> {
        match self {
            Self::Finish { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// Whether the chunk carries visible model output: a non-empty text or reasoning delta,
    /// or a tool-call delta with argument text or a name (dsh's `isTokenDelta`, the
    /// first-token boundary).
    pub fn is_token_delta(&self) -> bool {
        match self {
            Self::TextDelta { text, .. } | Self::ReasoningDelta { text, .. } => !text.is_empty(),
            Self::ToolCallDelta {
                name,
                arguments_delta,
                ..
            } => !arguments_delta.is_empty() || name.is_some(),
            _ => false,
        }
    }
}
