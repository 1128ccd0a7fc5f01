//! [`GenerateOptions`] to DeepSeek's chat-completions request body (dsh's `src/serialize.ts`,
//! text-only path).

use dsh_llm::content::content_has_image;
use dsh_llm::{ContentBlock, GenerateOptions, LlmFailure, Message, Purpose, Role, codes};
use serde_json::{Map, Value, json};

use crate::config::Thinking;

/// The adapter-level defaults a request falls back on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestDefaults {
    /// The deployment's `thinking` switch, when configured.
    pub thinking: Option<Thinking>,
    /// The effort used when the request names none (`off`, `low`, `high` or `max`).
    pub reasoning_effort: Option<String>,
}

fn checked_effort(effort: &str) -> Result<&str, LlmFailure> {
    match effort {
        "off" | "low" | "high" | "max" => Ok(effort),
        other => Err(LlmFailure::new(
            codes::UNSUPPORTED_REASONING_EFFORT,
            format!("DeepSeek does not support reasoning effort \"{other}\""),
        )),
    }
}

/// `(thinking, reasoning_effort)` of one request.
fn resolve_thinking(
    options: &GenerateOptions,
    defaults: &RequestDefaults,
) -> Result<(Option<Thinking>, Option<String>), LlmFailure> {
    if options.purpose == Some(Purpose::SessionTitle) {
        return Ok((Some(Thinking::Disabled), None));
    }
    let effort = match &options.reasoning_effort {
        Some(effort) => Some(checked_effort(effort)?.to_owned()),
        None => defaults.reasoning_effort.clone(),
    };
    if defaults.thinking == Some(Thinking::Disabled)
        && effort.as_deref().is_some_and(|effort| effort != "off")
    {
        return Err(LlmFailure::new(
            codes::UNSUPPORTED_REASONING_EFFORT,
            format!(
                "DeepSeek deployment does not support reasoning effort \"{}\"",
                effort.unwrap_or_default()
            ),
        ));
    }
    Ok(match effort.as_deref() {
        Some("off") => (Some(Thinking::Disabled), None),
        Some(effort @ ("low" | "high" | "max")) => (Some(Thinking::Enabled), Some(effort.into())),
        _ => (defaults.thinking, None),
    })
}

fn flatten_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn assert_text_only(blocks: &[ContentBlock]) -> Result<(), LlmFailure> {
    if content_has_image(blocks) {
        return Err(LlmFailure::new(
            codes::UNSUPPORTED_CONTENT,
            "The DeepSeek chat-completions adapter does not support image content.",
        ));
    }
    Ok(())
}

fn assistant(message: &Message) -> Value {
    let text = flatten_text(&message.content);
    let reasoning: String = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Reasoning { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let tool_calls: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall {
                id,
                name,
                arguments,
            } => Some(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            })),
            _ => None,
        })
        .collect();
    let mut wire = Map::new();
    wire.insert("role".into(), json!("assistant"));
    wire.insert("content".into(), Value::String(text));
    if !reasoning.is_empty() {
        wire.insert("reasoning_content".into(), Value::String(reasoning));
    }
    if !tool_calls.is_empty() {
        wire.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Value::Object(wire)
}

/// The wire messages of a conversation: tool results become `role: tool` messages after their
/// user message's text; assistant `content` is `""`, never `null`.
pub fn serialize_messages(messages: &[Message]) -> Result<Vec<Value>, LlmFailure> {
    let mut wire = Vec::with_capacity(messages.len());
    for message in messages {
        assert_text_only(&message.content)?;
        match message.role {
            Role::System => {
                wire.push(json!({"role": "system", "content": flatten_text(&message.content)}));
            }
            Role::Assistant => wire.push(assistant(message)),
            Role::User => {
                let text = flatten_text(&message.content);
                let results: Vec<(&String, &Vec<ContentBlock>)> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::ToolResult {
                            tool_call_id,
                            content,
                            ..
                        } => Some((tool_call_id, content)),
                        _ => None,
                    })
                    .collect();
                if !text.is_empty() || results.is_empty() {
                    wire.push(json!({"role": "user", "content": text}));
                }
                for (tool_call_id, content) in results {
                    let mut output = flatten_text(content);
                    if output.is_empty() {
                        output.push_str("(no output)");
                    }
                    wire.push(json!({
                        "role": "tool",
                        "tool_call_id": tool_call_id,
                        "content": output,
                    }));
                }
            }
        }
    }
    Ok(wire)
}

/// The whole request body: `model, messages, stream, stream_options, thinking?,
/// reasoning_effort?, tools? (omitted when empty), temperature?, max_tokens?, stop?`, in that
/// key order. `options.system` becomes the first message.
pub fn build_request(
    options: &GenerateOptions,
    defaults: &RequestDefaults,
) -> Result<Value, LlmFailure> {
    let mut messages = Vec::with_capacity(options.messages.len().saturating_add(1));
    if let Some(system) = &options.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(serialize_messages(&options.messages)?);
    let (thinking, effort) = resolve_thinking(options, defaults)?;
    let mut body = Map::new();
    body.insert("model".into(), json!(options.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if let Some(thinking) = thinking {
        body.insert("thinking".into(), json!({"type": thinking.as_str()}));
    }
    if let Some(effort) = effort {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    if let Some(tools) = options.tools.as_ref().filter(|tools| !tools.is_empty()) {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = options.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(stop) = &options.stop {
        body.insert("stop".into(), json!(stop));
    }
    Ok(Value::Object(body))
}
