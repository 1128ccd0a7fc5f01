//! Checks a restored or forked log gets before it becomes a session (dsh's seed validation).
//!
//! Live appends skip these shape checks; events read from storage or inherited by a fork must
//! pass them, so a damaged log is refused instead of confusing the model.

use serde_json::Value;

use crate::data::EventData;
use crate::event::SessionEvent;
use crate::fields::{message_skeleton, object_fields};
use dsh_protocol::kinds;
use dsh_protocol::known::RETIRED_EVENT_TYPES;

/// Refuses the event types and shapes dsh retired (`request/header-delta`, `mode/set`,
/// `request/header` with `reason: "fallback"`).
pub fn check_not_retired(kind: &str, data: &EventData) -> Result<(), String> {
    if RETIRED_EVENT_TYPES.contains(&kind) {
        return Err(format!(
            "session event type \"{kind}\" is retired and no longer accepted"
        ));
    }
    // Only request headers are read, so other payloads stay unparsed.
    if kind == kinds::REQUEST_HEADER
        && data.with_value(|data| data.get("reason").and_then(Value::as_str) == Some("fallback"))
    {
        return Err(
            "request/header with reason \"fallback\" is retired and no longer accepted".into(),
        );
    }
    Ok(())
}

fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// Checks the shape of one seed event: request headers and the three message events.
pub fn check_seed_event(event: &SessionEvent) -> Result<(), String> {
    check_not_retired(&event.kind, &event.data)?;
    if let Some(text) = event.data.raw_text() {
        // Read from storage: check a skeleton of the message rather than parse its content.
        let message = |text: &str| match object_fields(text) {
            Some(fields) => fields
                .iter()
                .find(|(key, _)| key == "message")
                .map_or(Value::Null, |(_, raw)| message_skeleton(raw.get())),
            None => Value::Null,
        };
        match event.kind.as_ref() {
            kinds::USER_MESSAGE => return check_message(&message_skeleton(text), "user"),
            kinds::ASSISTANT_MESSAGE => return check_message(&message(text), "assistant"),
            kinds::TOOL_RESULT => return check_message(&message(text), "tool"),
            _ => {}
        }
    }
    match event.kind.as_ref() {
        kinds::REQUEST_HEADER => check_request_header(&event.data),
        kinds::USER_MESSAGE => check_message(&event.data, "user"),
        kinds::ASSISTANT_MESSAGE => check_message(
            event.data.get("message").unwrap_or(&Value::Null),
            "assistant",
        ),
        kinds::TOOL_RESULT => {
            check_message(event.data.get("message").unwrap_or(&Value::Null), "tool")
        }
        _ => Ok(()),
    }
}

fn check_request_header(data: &Value) -> Result<(), String> {
    let config = data.pointer("/header/config");
    let field = |name: &str| config.and_then(|config| config.get(name));
    if non_empty_str(field("provider")).is_none() || non_empty_str(field("model")).is_none() {
        return Err("request/header config needs a non-empty provider and model".into());
    }
    if field("reasoningEffort").is_some() && non_empty_str(field("reasoningEffort")).is_none() {
        return Err("request/header reasoningEffort must be a non-empty string".into());
    }
    if let Some(defaults) = data.pointer("/header/adapterDefaults") {
        let Value::Object(defaults) = defaults else {
            return Err("request/header adapterDefaults must be an object".into());
        };
        for (key, value) in defaults {
            let allowed = matches!(key.as_str(), "reasoningEffort" | "maxTokens");
            if !allowed || value != &Value::Bool(true) || field(key).is_none() {
                return Err(format!(
                    "request/header adapterDefaults.{key} must be true and match a config field"
                ));
            }
        }
    }
    Ok(())
}

/// `expect` is `user`, `assistant` or `tool` (a tool result: role `user`, source kind `tool`).
fn check_message(message: &Value, expect: &str) -> Result<(), String> {
    if non_empty_str(message.get("id")).is_none() {
        return Err("message.id must be a non-empty string".into());
    }
    let role = if expect == "assistant" {
        "assistant"
    } else {
        "user"
    };
    if message.get("role").and_then(Value::as_str) != Some(role) {
        return Err(format!("message.role must be \"{role}\""));
    }
    let source = message.get("source");
    let Some(kind) = non_empty_str(source.and_then(|source| source.get("kind"))) else {
        return Err("message.source.kind must be a non-empty string".into());
    };
    let Some(Value::Array(content)) = message.get("content") else {
        return Err("message.content must be an array".into());
    };
    let source_field = |name: &str| non_empty_str(source.and_then(|source| source.get(name)));
    match expect {
        "assistant"
            if kind != "model"
                || source_field("provider").is_none()
                || source_field("model").is_none() =>
        {
            return Err("assistant message source must be a model with provider and model".into());
        }
        "tool" => {
            let Some(call_id) = source_field("callId").filter(|_| kind == "tool") else {
                return Err("tool result source must be {kind:\"tool\", callId}".into());
            };
            let [block] = content.as_slice() else {
                return Err("tool result content must be exactly one tool-result block".into());
            };
            if block.get("type").and_then(Value::as_str) != Some("tool-result")
                || block.get("toolCallId").and_then(Value::as_str) != Some(call_id)
            {
                return Err("tool result block must be a tool-result for its callId".into());
            }
        }
        _ => {}
    }
    Ok(())
}
