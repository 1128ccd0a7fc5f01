//! The runtime-context snapshot: the rendered `context` sections of the system prompt go
//! to the model as a `user/message`, and only when they changed since the last one.

use std::sync::Arc;

use dsh_llm::{ContentBlock, Message, MessageSource};
use dsh_protocol::kinds::USER_MESSAGE;
use dsh_session::SessionEvent;
use dsh_system_prompt::{
    ContextSnapshotSection, RUNTIME_CONTEXT_CLEARED, RUNTIME_CONTEXT_PLUGIN, join_context_sections,
};
use serde_json::{Map, Value, json};

/// What the model last saw of the runtime context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Retained {
    /// No snapshot was ever sent.
    Never,
    /// A snapshot with this text is the current one.
    Text(String),
}

impl Retained {
    /// The state a log leaves: its last snapshot on the model's surface.
    pub(crate) fn restore(events: &[Arc<SessionEvent>]) -> Self {
        events
            .iter()
            .rev()
            .filter(|event| event.kind == USER_MESSAGE && event.surface_op.is_some())
            .find_map(|event| snapshot_text(&event.data))
            .map_or(Self::Never, Self::Text)
    }

    /// The snapshot message to send now, if the context changed: the joined sections, or
    /// the clearing text once sections existed and are gone.
    pub(crate) fn project(&self, sections: &[ContextSnapshotSection]) -> Option<Message> {
        let current = join_context_sections(sections);
        if *self == Self::Never && current.is_empty() {
            return None;
        }
        let snapshot = if current.is_empty() {
            RUNTIME_CONTEXT_CLEARED.to_owned()
        } else {
            current
        };
        if matches!(self, Self::Text(text) if *text == snapshot) {
            return None;
        }
        let mut fields = Map::new();
        let form = if sections.is_empty() {
            None
        } else {
            fields.insert("sections".into(), json!(sections));
            Some("snapshot".to_owned())
        };
        Some(Message::user(
            vec![ContentBlock::text(snapshot)],
            MessageSource::Plugin {
                plugin: RUNTIME_CONTEXT_PLUGIN.to_owned(),
                form,
                fields,
            },
        ))
    }

    /// Follows a message the loop logged.
    pub(crate) fn observe(&mut self, message: &Message) {
        if let MessageSource::Plugin { plugin, .. } = &message.source
            && plugin == RUNTIME_CONTEXT_PLUGIN
            && let [ContentBlock::Text { text }] = message.content.as_slice()
        {
            *self = Self::Text(text.clone());
        }
    }
}

/// The text of a logged snapshot message (one text block from the system-prompt plugin).
fn snapshot_text(data: &Value) -> Option<String> {
    let source = data.get("source")?;
    if source.get("kind")?.as_str()? != "plugin"
        || source.get("plugin")?.as_str()? != RUNTIME_CONTEXT_PLUGIN
    {
        return None;
    }
    match data.get("content")?.as_array()?.as_slice() {
        [block] if block.get("type")?.as_str()? == "text" => {
            Some(block.get("text")?.as_str()?.to_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(name: &str, text: &str) -> ContextSnapshotSection {
        ContextSnapshotSection {
            name: name.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_snapshot_is_sent_once_and_again_only_when_it_changes() {
        let mut retained = Retained::Never;
        assert!(retained.project(&[]).is_none());
        let sections = [section("sandbox:policy", "read-only")];
        let message = retained.project(&sections).unwrap();
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(
            json["content"][0]["text"],
            "Current runtime context. This snapshot supersedes earlier runtime-context \
             snapshots.\n\nread-only"
        );
        assert_eq!(json["source"]["form"], "snapshot");
        assert_eq!(json["source"]["sections"][0]["name"], "sandbox:policy");
        retained.observe(&message);
        assert!(retained.project(&sections).is_none());
        let cleared = retained.project(&[]).unwrap();
        assert_eq!(
            cleared.content,
            [ContentBlock::text(RUNTIME_CONTEXT_CLEARED)]
        );
        assert_eq!(
            serde_json::to_value(&cleared).unwrap()["source"],
            json!({"kind": "plugin", "plugin": RUNTIME_CONTEXT_PLUGIN})
        );
    }
}
