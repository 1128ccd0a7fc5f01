//! What a run of turns did, folded from the events it logged (the log is the only truth).

use std::sync::Arc;

use dsh_protocol::kinds::{ASSISTANT_MESSAGE, STEP_START, TURN_END, TURN_START};
use dsh_session::SessionEvent;
use serde_json::{Map, Value, json};

/// The outcome of the turns logged from some seq on (see [`crate::Agent::run_turn`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnSummary {
    /// The last non-empty text of an assistant message (text blocks joined).
    pub text: String,
    /// The last `turn/end` reason, if a turn ended.
    pub reason: Option<Value>,
    /// The token counts of the run's assistant messages, summed per field.
    pub usage: Map<String, Value>,
    /// Steps the run opened.
    pub steps: u64,
}

impl TurnSummary {
    /// Folds the events with `seq >= first_seq` that follow the first `turn/start` among
    /// them (dsh's headless fold), adding up usage.
    pub fn fold(events: &[Arc<SessionEvent>], first_seq: u64) -> Self {
        let mut summary = Self::default();
        let mut started = false;
        for event in events.iter().filter(|event| event.seq >= first_seq) {
            match event.kind.as_ref() {
                TURN_START => started = true,
                _ if !started => {}
                STEP_START => summary.steps += 1,
                ASSISTANT_MESSAGE => summary.add_message(&event.data),
                TURN_END => summary.reason = event.data.get("reason").cloned(),
                _ => {}
            }
        }
        summary
    }

    fn add_message(&mut self, data: &Value) {
        let joined: String = data
            .pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        if !joined.is_empty() {
            self.text = joined;
        }
        if let Some(Value::Object(usage)) = data.get("usage") {
            for (key, value) in usage {
                if let Some(count) = value.as_u64() {
                    let total = self.usage.get(key).and_then(Value::as_u64).unwrap_or(0);
                    self.usage.insert(key.clone(), json!(total + count));
                }
            }
        }
    }

    /// The reason's kind (`none` when no turn ended).
    pub fn reason_kind(&self) -> &str {
        self.reason
            .as_ref()
            .and_then(|reason| reason.get("kind"))
            .and_then(Value::as_str)
            .unwrap_or("none")
    }

    /// Whether the last turn completed.
    pub fn completed(&self) -> bool {
        self.reason_kind() == "completed"
    }

    /// `(code, message)` of an `error` ending.
    pub fn error(&self) -> Option<(&str, &str)> {
        if self.reason_kind() != "error" {
            return None;
        }
        let error = self.reason.as_ref()?.get("error")?;
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("UNKNOWN");
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Some((code, message))
    }

    /// `{"sessionId", "text", "reason", "usage", "steps"}` (`reason` is `null` when no turn
    /// ended).
    pub fn to_json(&self, session_id: &str) -> Value {
        json!({
            "sessionId": session_id,
            "text": self.text,
            "reason": self.reason.clone().unwrap_or(Value::Null),
            "usage": self.usage,
            "steps": self.steps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, seq: u64, data: Value) -> Arc<SessionEvent> {
        Arc::new(SessionEvent::new(kind, seq, 1, data))
    }

    fn assistant(seq: u64, text: &str, output: u64) -> Arc<SessionEvent> {
        event(
            "assistant/message",
            seq,
            json!({"turn": 1, "step": 1, "message": {"role": "assistant",
                "content": [{"type": "text", "text": text}], "source": {"kind": "model"}, "id": "m"},
                "usage": {"inputTokens": 10, "outputTokens": output}}),
        )
    }

    #[test]
    fn the_last_non_empty_text_and_summed_usage() {
        let events = vec![
            assistant(0, "old turn", 99),
            event("turn/start", 1, json!({"turn": 2})),
            event("step/start", 2, json!({"turn": 2, "step": 1})),
            assistant(3, "first", 5),
            assistant(4, "", 1),
            event("step/start", 5, json!({"turn": 2, "step": 2})),
            assistant(6, "final", 7),
            event(
                "turn/end",
                7,
                json!({"turn": 2, "reason": {"kind": "completed"}}),
            ),
        ];
        let summary = TurnSummary::fold(&events, 1);
        assert_eq!(summary.text, "final");
        assert!(summary.completed());
        assert_eq!(summary.steps, 2);
        assert_eq!(summary.usage["inputTokens"], json!(30));
        assert_eq!(summary.usage["outputTokens"], json!(13));
        assert_eq!(summary.error(), None);
    }

    #[test]
    fn an_error_ending_prints_its_code() {
        let events = vec![
            event("turn/start", 0, json!({"turn": 1})),
            event(
                "turn/end",
                1,
                json!({"turn": 1, "reason": {"kind": "error", "error": {"message": "slow down", "code": "RATE_LIMIT"}}}),
            ),
        ];
        let summary = TurnSummary::fold(&events, 0);
        assert!(!summary.completed());
        assert_eq!(summary.error(), Some(("RATE_LIMIT", "slow down")));
    }

    #[test]
    fn no_turn_is_a_failure() {
        assert!(!TurnSummary::fold(&[], 0).completed());
        assert_eq!(TurnSummary::fold(&[], 0).reason_kind(), "none");
    }
}
