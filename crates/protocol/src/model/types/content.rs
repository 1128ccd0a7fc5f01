//! Content blocks: text, reasoning, images, tool calls and results, and plugins' own kinds.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

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
