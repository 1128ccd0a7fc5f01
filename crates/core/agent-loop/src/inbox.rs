//! The agent's inbox: two ordered queues, every change logged first as
//! `agent/inbox/spliced` so a resumed agent gets its pending messages back.

use std::collections::HashMap;
use std::sync::Arc;

use dsh_llm::Message;
use dsh_protocol::kinds::AGENT_INBOX_SPLICED;
use dsh_session::{LiveSession, SessionEvent, StoreError, SurfaceIntent};
use serde_json::{Map, Value, json};

use crate::options::InboxTarget;

/// The two queues.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    next_turn: Vec<Message>,
    next_step: Vec<Message>,
}

/// What one splice changed.
#[derive(Debug, Default)]
pub(crate) struct Spliced {
    pub(crate) removed: Vec<Message>,
    pub(crate) inserted: Vec<Message>,
}

/// Why a splice was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InboxError {
    /// The change breaks the queue's rules.
    #[error("{0}")]
    Invalid(String),
    /// The session refused the event.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Inbox {
    /// The queues a log leaves behind: every splice after the inherited prefix, in order.
    pub(crate) fn replay(events: &[Arc<SessionEvent>], seed_length: u64) -> Result<Self, String> {
        let mut inbox = Self::default();
        for event in events.iter().filter(|event| event.seq >= seed_length) {
            if event.kind != AGENT_INBOX_SPLICED {
                continue;
            }
            let invalid = |why: String| {
                format!(
                    "invalid persisted inbox splice at session seq {}: {why}",
                    event.seq
                )
            };
            let splice = Splice::read(&event.data).map_err(invalid)?;
            inbox.validate(&splice).map_err(invalid)?;
            inbox.apply(splice);
        }
        Ok(inbox)
    }

    /// The queue of `target`.
    pub(crate) fn queue(&self, target: InboxTarget) -> &[Message] {
        match target {
            InboxTarget::NextTurn => &self.next_turn,
            InboxTarget::NextStep => &self.next_step,
        }
    }

    /// Whether anything waits.
    pub(crate) fn has_pending(&self) -> bool {
        !self.next_turn.is_empty() || !self.next_step.is_empty()
    }

    /// Replaces `delete` messages of `target` from `start` with `inserted` (positions are
    /// clamped as JavaScript's `splice` clamps them). `cancelling` marks removed messages
    /// `outcome: 'canceled'` (a claim is a plain deletion). Logs before changing memory;
    /// a no-op logs nothing.
    pub(crate) fn splice(
        &mut self,
        session: &Arc<LiveSession>,
        target: InboxTarget,
        start: usize,
        delete: usize,
        inserted: Vec<Message>,
        cancelling: bool,
    ) -> Result<Spliced, InboxError> {
        let len = self.queue(target).len();
        let start = start.min(len);
        let delete = delete.min(len - start);
        if delete == 0 && inserted.is_empty() {
            return Ok(Spliced::default());
        }
        let splice = Splice {
            target,
            start,
            removed: delete,
            inserted,
            canceled: cancelling && delete > 0,
        };
        self.validate(&splice).map_err(InboxError::Invalid)?;
        session.append(
            AGENT_INBOX_SPLICED,
            splice.to_json(),
            SurfaceIntent::default(),
        )?;
        let inserted = splice.inserted.clone();
        let removed = self.apply(splice);
        Ok(Spliced { removed, inserted })
    }

    fn queue_mut(&mut self, target: InboxTarget) -> &mut Vec<Message> {
        match target {
            InboxTarget::NextTurn => &mut self.next_turn,
            InboxTarget::NextStep => &mut self.next_step,
        }
    }

    fn validate(&self, splice: &Splice) -> Result<(), String> {
        let queue = self.queue(splice.target);
        let (Some(before), Some(after)) = (
            queue.get(..splice.start),
            queue.get(splice.start.saturating_add(splice.removed)..),
        ) else {
            return Err("invalid inbox splice".to_owned());
        };
        let (other_target, other) = match splice.target {
            InboxTarget::NextTurn => (InboxTarget::NextStep, &self.next_step),
            InboxTarget::NextStep => (InboxTarget::NextTurn, &self.next_turn),
        };
        // What stays pending first, then what is inserted, so a duplicate names the queue
        // its id already waits in.
        let staying = before.iter().chain(after).map(|m| (m, splice.target));
        let others = other.iter().map(|m| (m, other_target));
        let inserted = splice.inserted.iter().map(|m| (m, splice.target));
        let mut pending: HashMap<&str, InboxTarget> = HashMap::new();
        for (message, queue) in staying.chain(others).chain(inserted) {
            if let Some(waiting) = pending.insert(message.id.as_str(), queue) {
                return Err(format!(
                    "message \"{}\" is already pending in the {} queue",
                    message.id,
                    waiting.as_str()
                ));
            }
        }
        Ok(())
    }

    fn apply(&mut self, splice: Splice) -> Vec<Message> {
        let Splice {
            target,
            start,
            removed,
            inserted,
            ..
        } = splice;
        self.queue_mut(target)
            .splice(start..start + removed, inserted)
            .collect()
    }
}

/// One `agent/inbox/spliced` payload.
struct Splice {
    target: InboxTarget,
    start: usize,
    removed: usize,
    inserted: Vec<Message>,
    canceled: bool,
}

impl Splice {
    fn to_json(&self) -> Value {
        let mut data = Map::new();
        data.insert("target".into(), json!(self.target.as_str()));
        data.insert("start".into(), json!(self.start));
        if self.removed > 0 {
            data.insert("removedCount".into(), json!(self.removed));
        }
        data.insert("inserted".into(), json!(self.inserted));
        if self.canceled {
            data.insert("outcome".into(), json!("canceled"));
        }
        Value::Object(data)
    }

    fn read(data: &Value) -> Result<Self, String> {
        let target = match data.get("target").and_then(Value::as_str) {
            Some("next-turn") => InboxTarget::NextTurn,
            Some("next-step") => InboxTarget::NextStep,
            _ => return Err("target must be \"next-turn\" or \"next-step\"".to_owned()),
        };
        let count = |key: &str| -> Result<usize, String> {
            match data.get(key) {
                None => Ok(0),
                Some(value) => value
                    .as_u64()
                    .and_then(|count| usize::try_from(count).ok())
                    .ok_or_else(|| format!("{key} must be a non-negative integer")),
            }
        };
        let start = count("start")?;
        let removed = count("removedCount")?;
        let inserted = match data.get("inserted") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    serde_json::from_value::<Message>(item.clone())
                        .map_err(|error| format!("inserted message: {error}"))
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err("inserted must be an array".to_owned()),
        };
        Ok(Self {
            target,
            start,
            removed,
            inserted,
            canceled: data.get("outcome").and_then(Value::as_str) == Some("canceled"),
        })
    }
}
