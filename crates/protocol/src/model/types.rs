//! The provider-neutral vocabulary: content blocks, messages, stream chunks, finish reasons
//! and token usage, serialized exactly as dsh's session log stores them.
//!
//! dsh's content blocks, message sources and finish reasons are open (plugins add kinds), so
//! each has an `Other` variant that keeps a plugin's value as written. A known kind that
//! carries fields it does not define is kept as `Other` too, so nothing is lost on a round
//! trip.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::failure::LlmFailure;

/// Content block type tags of the core vocabulary.
pub mod block_types {
    /// Visible text.
    pub const TEXT: &str = "text";
    /// Reasoning.
    pub const REASONING: &str = "reasoning";
    /// An image attachment.
    pub const IMAGE: &str = "image";
    /// A tool call.
    pub const TOOL_CALL: &str = "tool-call";
    /// A tool result.
    pub const TOOL_RESULT: &str = "tool-result";
}

/// One block of message content (`{"type": "text", "text": "..."}`, ...).
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// Visible text: `{type:'text', text}`.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning: `{type:'reasoning', text}`.
    Reasoning {
        /// The reasoning text.
        text: String,
    },
    /// An image: `{type:'image', attachment}`; the attachment reference is opaque here.
    Image {
        /// The attachment service's reference (`attachmentId`, `bytes`, ...).
        attachment: Value,
    },
    /// A call the model asked for: `{type:'tool-call', id, name, arguments}`.
    ToolCall {
        /// Provider-issued call id.
        id: String,
        /// Tool name.
        name: String,
        /// The arguments, as the raw JSON text the model produced.
        arguments: String,
    },
    /// A tool's result: `{type:'tool-result', toolCallId, content, isError?}`.
    ToolResult {
        /// The call it answers.
        tool_call_id: String,
        /// The result content.
        content: Vec<ContentBlock>,
        /// Whether the tool failed; absent when not stated.
        is_error: Option<bool>,
    },
    /// A block of a type this crate does not define (or a known type with extra fields),
    /// kept as written, `type` included.
    Other(Map<String, Value>),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A reasoning block.
    pub fn reasoning(text: impl Into<String>) -> Self {
        Self::Reasoning { text: text.into() }
    }

    /// A tool-call block.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// The block's `type` tag (`""` for an `Other` without one).
    pub fn block_type(&self) -> &str {
        match self {
            Self::Text { .. } => block_types::TEXT,
            Self::Reasoning { .. } => block_types::REASONING,
            Self::Image { .. } => block_types::IMAGE,
            Self::ToolCall { .. } => block_types::TOOL_CALL,
            Self::ToolResult { .. } => block_types::TOOL_RESULT,
            Self::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or_default(),
        }
    }

    /// The text of a text or reasoning block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } | Self::Reasoning { text } => Some(text),
            _ => None,
        }
    }

    /// Reads a block from its JSON object.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err("a content block must be an object".to_owned());
        };
        let Some(kind) = map.get("type").and_then(Value::as_str) else {
            return Err("a content block needs a string \"type\"".to_owned());
        };
        let fields: &[&str] = match kind {
            block_types::TEXT | block_types::REASONING => &["type", "text"],
            block_types::IMAGE => &["type", "attachment"],
            block_types::TOOL_CALL => &["type", "id", "name", "arguments"],
            block_types::TOOL_RESULT => &["type", "toolCallId", "content", "isError"],
            _ => return Ok(Self::Other(map)),
        };
        if map.keys().any(|key| !fields.contains(&key.as_str())) {
            return Ok(Self::Other(map));
        }
        let kind = kind.to_owned();
        let block = match kind.as_str() {
            block_types::TEXT => Self::Text {
                text: string_field(&map, &kind, "text")?,
            },
            block_types::REASONING => Self::Reasoning {
                text: string_field(&map, &kind, "text")?,
            },
            block_types::IMAGE => Self::Image {
                attachment: map
                    .get("attachment")
                    .cloned()
                    .ok_or_else(|| missing(&kind, "attachment"))?,
            },
            block_types::TOOL_CALL => Self::ToolCall {
                id: string_field(&map, &kind, "id")?,
                name: string_field(&map, &kind, "name")?,
                arguments: string_field(&map, &kind, "arguments")?,
            },
            _ => {
                let content = match map.get("content") {
                    Some(Value::Array(items)) => items
                        .iter()
                        .cloned()
                        .map(Self::from_value)
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => return Err(missing(&kind, "content")),
                };
                let is_error = match map.get("isError") {
                    None => None,
                    Some(Value::Bool(flag)) => Some(*flag),
                    Some(_) => {
                        return Err(format!(
                            "content block \"{kind}\" has a non-boolean \"isError\""
                        ));
                    }
                };
                Self::ToolResult {
                    tool_call_id: string_field(&map, &kind, "toolCallId")?,
                    content,
                    is_error,
                }
            }
        };
        Ok(block)
    }
}

fn missing(kind: &str, field: &str) -> String {
    format!("content block \"{kind}\" needs \"{field}\"")
}

fn string_field(map: &Map<String, Value>, kind: &str, field: &str) -> Result<String, String> {
    match map.get(field) {
        Some(Value::String(text)) => Ok(text.clone()),
        _ => Err(format!(
            "content block \"{kind}\" needs a string \"{field}\""
        )),
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::Text { text } => {
                map.serialize_entry("type", block_types::TEXT)?;
                map.serialize_entry("text", text)?;
            }
            Self::Reasoning { text } => {
                map.serialize_entry("type", block_types::REASONING)?;
                map.serialize_entry("text", text)?;
            }
            Self::Image { attachment } => {
                map.serialize_entry("type", block_types::IMAGE)?;
                map.serialize_entry("attachment", attachment)?;
            }
            Self::ToolCall {
                id,
                name,
                arguments,
            } => {
                map.serialize_entry("type", block_types::TOOL_CALL)?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("arguments", arguments)?;
            }
            Self::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                map.serialize_entry("type", block_types::TOOL_RESULT)?;
                map.serialize_entry("toolCallId", tool_call_id)?;
                map.serialize_entry("content", content)?;
                if let Some(flag) = is_error {
                    map.serialize_entry("isError", flag)?;
                }
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

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// The user, injected context, or a tool result.
    User,
    /// The model.
    Assistant,
}

/// Where a message came from (`{kind: 'user'}`, `{kind: 'model', provider, model}`, ...).
#[derive(Debug, Clone, PartialEq)]
pub enum MessageSource {
    /// `{kind:'user'}`: typed by the user.
    User,
    /// `{kind:'plugin', plugin, form?, ...}`: injected by a plugin.
    Plugin {
        /// The plugin's name.
        plugin: String,
        /// What kind of context it is (`instructions`, `catalog`, `snapshot`, `notice`,
        /// `relay`, `recall`).
        form: Option<String>,
        /// The form's own fields (`sections` of a snapshot, `summary` of a notice), in written
        /// order.
        fields: Map<String, Value>,
    },
    /// `{kind:'model', provider, model, replayState?}`: produced by a model.
    Model {
        /// The provider route that produced it.
        provider: String,
        /// The model id.
        model: String,
        /// Adapter-private state to replay the response; opaque to the harness.
        replay_state: Option<Value>,
    },
    /// `{kind:'tool', callId}`: a tool result.
    Tool {
        /// The call the result answers.
        call_id: String,
    },
    /// A kind this crate does not define (or a known kind with extra fields), kept as
    /// written, `kind` included.
    Other(Map<String, Value>),
}

impl MessageSource {
    /// `{kind:'model', provider, model}`.
    pub fn model(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self::Model {
            provider: provider.into(),
            model: model.into(),
            replay_state: None,
        }
    }

    /// `{kind:'plugin', plugin}`.
    pub fn plugin(plugin: impl Into<String>) -> Self {
        Self::Plugin {
            plugin: plugin.into(),
            form: None,
            fields: Map::new(),
        }
    }

    /// The `kind` tag (`""` for an `Other` without one).
    pub fn kind(&self) -> &str {
        match self {
            Self::User => "user",
            Self::Plugin { .. } => "plugin",
            Self::Model { .. } => "model",
            Self::Tool { .. } => "tool",
            Self::Other(map) => map.get("kind").and_then(Value::as_str).unwrap_or_default(),
        }
    }

    /// Reads a source from its JSON object.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err("a message source must be an object".to_owned());
        };
        let Some(kind) = map.get("kind").and_then(Value::as_str) else {
            return Err("a message source needs a string \"kind\"".to_owned());
        };
        let source_field = |field: &str| match map.get(field) {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(format!(
                "message source \"{kind}\" needs a string \"{field}\""
            )),
        };
        let only = |allowed: &[&str]| map.keys().all(|key| allowed.contains(&key.as_str()));
        let source = match kind {
            "user" if only(&["kind"]) => Self::User,
            "model" if only(&["kind", "provider", "model", "replayState"]) => Self::Model {
                provider: source_field("provider")?,
                model: source_field("model")?,
                replay_state: map.get("replayState").cloned(),
            },
            "tool" if only(&["kind", "callId"]) => Self::Tool {
                call_id: source_field("callId")?,
            },
            "plugin" => {
                let plugin = source_field("plugin")?;
                let form = match map.get("form") {
                    None => None,
                    Some(Value::String(form)) => Some(form.clone()),
                    Some(_) => return Ok(Self::Other(map)),
                };
                let fields = map
                    .iter()
                    .filter(|(key, _)| !matches!(key.as_str(), "kind" | "plugin" | "form"))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect();
                Self::Plugin {
                    plugin,
                    form,
                    fields,
                }
            }
            _ => Self::Other(map),
        };
        Ok(source)
    }
}

impl Serialize for MessageSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::User => map.serialize_entry("kind", "user")?,
            Self::Plugin {
                plugin,
                form,
                fields,
            } => {
                map.serialize_entry("kind", "plugin")?;
                map.serialize_entry("plugin", plugin)?;
                if let Some(form) = form {
                    map.serialize_entry("form", form)?;
                }
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
            }
            Self::Model {
                provider,
                model,
                replay_state,
            } => {
                map.serialize_entry("kind", "model")?;
                map.serialize_entry("provider", provider)?;
                map.serialize_entry("model", model)?;
                if let Some(state) = replay_state {
                    map.serialize_entry("replayState", state)?;
                }
            }
            Self::Tool { call_id } => {
                map.serialize_entry("kind", "tool")?;
                map.serialize_entry("callId", call_id)?;
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

impl<'de> Deserialize<'de> for MessageSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// One message as the model sees it.
///
/// It reads its fields in any order and writes them in the order dsh's constructors produce,
/// so a message built here is logged byte for byte as dsh logs it: an assistant or system
/// message as `{role, content, source, id}` (`createAssistantMessage`, `createMessage`), a tool
/// result as `{source, content, role, id}` (`createToolResultMessage`), any other user message
/// as `{content, source, role, id}` (`createUserMessage`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    /// Stable identity, kept across every representation.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Where it came from.
    pub source: MessageSource,
}

impl Message {
    /// A message with a fresh random id (dsh's `createMessage`).
    pub fn new(role: Role, content: Vec<ContentBlock>, source: MessageSource) -> Self {
        Self {
            id: crate::ids::random_uuid(),
            role,
            content,
            source,
        }
    }

    /// A user message with a fresh id (`createUserMessage`).
    pub fn user(content: Vec<ContentBlock>, source: MessageSource) -> Self {
        Self::new(Role::User, content, source)
    }

    /// An assistant message from `provider`/`model` with a fresh id
    /// (`createAssistantMessage`).
    pub fn assistant(content: Vec<ContentBlock>, source: MessageSource) -> Self {
        Self::new(Role::Assistant, content, source)
    }

    /// The user-role message carrying one tool result (`createToolResultMessage`).
    pub fn tool_result(
        call_id: impl Into<String>,
        content: Vec<ContentBlock>,
        is_error: bool,
    ) -> Self {
        let call_id = call_id.into();
        Self::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_call_id: call_id.clone(),
                content,
                is_error: Some(is_error),
            }],
            MessageSource::Tool { call_id },
        )
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        match (self.role, &self.source) {
            (Role::User, MessageSource::Tool { .. }) => {
                map.serialize_entry("source", &self.source)?;
                map.serialize_entry("content", &self.content)?;
                map.serialize_entry("role", &self.role)?;
            }
            (Role::User, _) => {
                map.serialize_entry("content", &self.content)?;
                map.serialize_entry("source", &self.source)?;
                map.serialize_entry("role", &self.role)?;
            }
            (Role::Assistant | Role::System, _) => {
                map.serialize_entry("role", &self.role)?;
                map.serialize_entry("content", &self.content)?;
                map.serialize_entry("source", &self.source)?;
            }
        }
        map.serialize_entry("id", &self.id)?;
        map.end()
    }
}

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

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use super::*;

    fn round_trip<T: Serialize + for<'de> Deserialize<'de>>(value: Value) -> Value {
        let typed: T = serde_json::from_value(value).unwrap();
        serde_json::to_value(&typed).unwrap()
    }

    #[test]
    fn known_blocks_and_plugin_blocks_round_trip() {
        for value in [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "attachment": {"attachmentId": "sha256:ab"}}),
            json!({"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}], "isError": true}),
            json!({"type": "tool-result", "toolCallId": "c", "content": []}),
            json!({"type": "video", "url": "u"}),
            json!({"type": "text", "text": "hi", "cache": true}),
        ] {
            assert_eq!(round_trip::<ContentBlock>(value.clone()), value);
        }
        assert!(matches!(
            serde_json::from_value::<ContentBlock>(
                json!({"type": "text", "text": "hi", "cache": true})
            )
            .unwrap(),
            ContentBlock::Other(_)
        ));
        let error = serde_json::from_value::<ContentBlock>(json!({"type": "text"})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "content block \"text\" needs a string \"text\""
        );
    }

    #[test]
    fn sources_round_trip_with_their_extra_fields() {
        for value in [
            json!({"kind": "user"}),
            json!({"kind": "model", "provider": "p", "model": "m", "replayState": {"a": 1}}),
            json!({"kind": "tool", "callId": "c"}),
            json!({"kind": "plugin", "plugin": "x", "form": "notice", "summary": "s"}),
            json!({"kind": "compaction", "upTo": 3}),
            json!({"kind": "user", "via": "acp"}),
        ] {
            assert_eq!(round_trip::<MessageSource>(value.clone()), value);
        }
    }

    #[test]
    fn messages_write_keys_in_dsh_constructor_order() {
        let assistant = Message {
            id: "a".into(),
            role: Role::Assistant,
            content: vec![ContentBlock::text("t")],
            source: MessageSource::model("p", "m"),
        };
        assert_eq!(
            serde_json::to_string(&assistant).unwrap(),
            r#"{"role":"assistant","content":[{"type":"text","text":"t"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}"#
        );
        let mut result = Message::tool_result("c1", vec![ContentBlock::text("ok")], false);
        result.id = "r".into();
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}],"isError":false}],"role":"user","id":"r"}"#
        );
    }

    #[test]
    fn finish_reasons() {
        for value in [
            json!({"kind": "stop"}),
            json!({"kind": "error", "failure": {"message": "m", "code": "SERVER", "status": 500}}),
            json!({"kind": "content-filter"}),
        ] {
            assert_eq!(round_trip::<FinishReason>(value.clone()), value);
        }
    }

    #[test]
    fn token_deltas() {
        assert!(
            StreamChunk::TextDelta {
                index: 0,
                text: "a".into()
            }
            .is_token_delta()
        );
        assert!(
            !StreamChunk::TextDelta {
                index: 0,
                text: String::new()
            }
            .is_token_delta()
        );
        assert!(
            StreamChunk::ToolCallDelta {
                index: 0,
                id: "c".into(),
                name: Some("n".into()),
                arguments_delta: String::new()
            }
            .is_token_delta()
        );
        assert!(!StreamChunk::finish(FinishReason::Stop).is_token_delta());
    }
}
