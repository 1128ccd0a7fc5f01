//! Deriving the model's messages from the surface, with an incremental cache.

use std::sync::Arc;

use dsh_protocol::kinds;
use serde::Deserialize;
use serde_json::Value;

use crate::event::SessionEvent;
use crate::surface::SurfaceFold;
use crate::vocab::Message;

/// One model message, sharing the event it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedMessage(Arc<SessionEvent>);

impl DerivedMessage {
    /// The event the message comes from.
    pub fn event(&self) -> &SessionEvent {
        &self.0
    }

    /// The message JSON exactly as logged.
    pub fn json(&self) -> &Value {
        message_json(&self.0).unwrap_or(&Value::Null)
    }

    /// The message as a typed [`Message`].
    pub fn message(&self) -> Result<Message, serde_json::Error> {
        Message::deserialize(self.json())
    }
}

/// The message an event contributes, if any (dsh's `deriveEventMessage`).
///
/// `user/message` is its own message; `assistant/message` and `tool/result` carry one in
/// `data.message`, except that an assistant message with no content (kept only for its usage)
/// contributes nothing. Every other event contributes nothing.
pub fn message_json(event: &SessionEvent) -> Option<&Value> {
    match event.kind.as_ref() {
        kinds::USER_MESSAGE => Some(&event.data),
        kinds::ASSISTANT_MESSAGE => event.data.get("message").filter(|message| {
            message
                .get("content")
                .and_then(Value::as_array)
                .is_none_or(|c| !c.is_empty())
        }),
        kinds::TOOL_RESULT => event.data.get("message"),
        _ => None,
    }
}

/// The derived-message cache of one session.
#[derive(Debug, Default)]
pub(crate) struct DerivedMessages {
    messages: Vec<DerivedMessage>,
    projected_nodes: usize,
    generation: u64,
}

impl DerivedMessages {
    /// Projects surface nodes added since the last call; rebuilds after a replace.
    pub(crate) fn update(&mut self, surface: &SurfaceFold, events: &[Arc<SessionEvent>]) {
        if surface.replace_generation() != self.generation {
            self.messages.clear();
            self.projected_nodes = 0;
            self.generation = surface.replace_generation();
        }
        let nodes = surface
            .nodes()
            .get(self.projected_nodes..)
            .unwrap_or_default();
        for seq in nodes {
            let event = usize::try_from(*seq)
                .ok()
                .and_then(|index| events.get(index));
            if let Some(event) = event.filter(|event| message_json(event).is_some()) {
                self.messages.push(DerivedMessage(Arc::clone(event)));
            }
        }
        self.projected_nodes = surface.nodes().len();
    }

    pub(crate) fn messages(&self) -> &[DerivedMessage] {
        &self.messages
    }
}
