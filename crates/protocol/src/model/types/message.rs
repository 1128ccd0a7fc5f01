//! Messages: who wrote them, where they came from, and the order their keys are written in.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::content::ContentBlock;

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
