//! Realistic session events: a session preamble and 33-event agent turns.

use dsh_protocol::kinds;
use dsh_session::{SessionEvent, SurfaceOp};
use serde_json::{Value, json};

/// Events in the preamble written before the first turn.
pub const PREAMBLE_EVENTS: usize = 7;
/// Events in one turn from [`LogBuilder::turn`].
pub const TURN_EVENTS: usize = 33;

/// Builds events with contiguous seqs and times 1 ms apart.
#[derive(Debug, Clone)]
pub struct LogBuilder {
    events: Vec<SessionEvent>,
    time: i64,
}

impl Default for LogBuilder {
    fn default() -> Self {
        Self::new(1_795_976_398_536)
    }
}

impl LogBuilder {
    /// An empty log whose first event is stamped `time0`.
    pub fn new(time0: i64) -> Self {
        Self {
            events: Vec::new(),
            time: time0,
        }
    }

    /// The next seq.
    pub fn next_seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// Appends a plain event.
    pub fn push(&mut self, kind: &str, data: Value) -> &mut Self {
        let event = SessionEvent::new(kind, self.next_seq(), self.time, data);
        self.events.push(event);
        self.time += 1;
        self
    }

    /// Appends a surface event that appends to the model's view.
    pub fn push_surface(
        &mut self,
        kind: &str,
        data: Value,
        sources: Option<Vec<u64>>,
    ) -> &mut Self {
        let mut event = SessionEvent::new(kind, self.next_seq(), self.time, data);
        event.surface_op = Some(SurfaceOp::Append);
        event.source_event_seqs = sources;
        self.events.push(event);
        self.time += 1;
        self
    }

    /// The events so far.
    pub fn events(&self) -> &[SessionEvent] {
        &self.events
    }

    /// Takes the events.
    pub fn finish(self) -> Vec<SessionEvent> {
        self.events
    }

    /// The preamble dsh writes before the first turn (policy, request header and context).
    pub fn preamble(&mut self) -> &mut Self {
        self.push(
            kinds::PERMISSION_PRESET,
            json!({"preset": "workspace-write"}),
        )
        .push(kinds::SANDBOX_MODE, json!({"mode": "workspace-write"}))
        .push(kinds::APPROVAL_POLICY, json!({"policy": "never"}))
        .push(
            kinds::REQUEST_HEADER,
            json!({"header": {"config": {"provider": "deepseek", "model": "deepseek-chat"},
                    "system": "You are dsh, a coding agent.", "tools": [{"name": "bash",
                    "description": "Run a bash command", "parameters": {"type": "object"}}]},
                    "reason": "initial"}),
        )
        .push(
            kinds::REQUEST_CONTEXT,
            json!({"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 128_000}),
        )
        .push(kinds::SESSION_TITLE, json!({"title": "A long session"}))
        .push(kinds::GOAL_CHANGE, json!({"goal": null}))
    }

    fn chunk(&mut self, turn: u64, step: u64, chunk: Value) -> &mut Self {
        self.push(
            kinds::ASSISTANT_CHUNK,
            json!({"turn": turn, "step": step, "chunk": chunk}),
        )
    }

    /// One agent turn of [`TURN_EVENTS`] events: the user asks, the model reasons, talks and
    /// calls bash, the tool answers, the model replies, the turn completes.
    pub fn turn(&mut self, turn: u64) -> &mut Self {
        let call = format!("call_{turn:05}");
        self.push(kinds::TURN_START, json!({"turn": turn}))
            .push(kinds::STEP_START, json!({"turn": turn, "step": 1}));
        self.push_surface(
            kinds::USER_MESSAGE,
            json!({"content": [{"type": "text", "text": format!("Task {turn}: list the files and count the lines of the sources.")}],
                "source": {"kind": "user"}, "role": "user", "id": format!("user-{turn}")}),
            None,
        );
        let first_chunk = self.next_seq();
        for index in 0..8 {
            self.chunk(turn, 1, json!({"type": "reasoning-delta", "index": 0, "text": format!("thinking about step {index} of the request, ")}));
        }
        for index in 0..4 {
            self.chunk(turn, 1, json!({"type": "text-delta", "index": 1, "text": format!("I will run a command ({index}). ")}));
        }
        let arguments = ["{\"comm", "and\":\"ls -la ", "&& wc -l src/*", ".rs\"}"];
        for (index, part) in arguments.iter().enumerate() {
            let delta = if index == 0 {
                json!({"type": "tool-call-delta", "index": 2, "id": call, "name": "bash", "argumentsDelta": part})
            } else {
                json!({"type": "tool-call-delta", "index": 2, "id": call, "argumentsDelta": part})
            };
            self.chunk(turn, 1, delta);
        }
        let chunks: Vec<u64> = (first_chunk..self.next_seq()).collect();
        self.push_surface(
            kinds::ASSISTANT_MESSAGE,
            json!({"turn": turn, "step": 1, "message": {"id": format!("assistant-{turn}-1"), "role": "assistant",
                "content": [{"type": "reasoning", "text": "thinking about the request"},
                    {"type": "text", "text": "I will run a command."},
                    {"type": "tool-call", "id": call, "name": "bash", "arguments": arguments.concat()}],
                "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}},
                "usage": {"inputTokens": 1200 + turn, "outputTokens": 90, "cacheReadTokens": 1024}}),
            Some(chunks),
        );
        let call_seq = self.next_seq();
        self.push(kinds::TOOL_CALL, json!({"turn": turn, "step": 1, "callId": call, "name": "bash", "arguments": arguments.concat()}));
        let output = "-rw-r--r-- 1 dev dev  4096 Nov 29 12:00 main.rs\n".repeat(8);
        self.push_surface(
            kinds::TOOL_RESULT,
            json!({"turn": turn, "step": 1, "message": {"id": format!("result-{call}"), "role": "user",
                "content": [{"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": output}]}],
                "source": {"kind": "tool", "callId": call}}, "meta": {"exitCode": 0, "durationMs": 12}}),
            Some(vec![call_seq]),
        );
        self.push(kinds::STEP_END, json!({"turn": turn, "step": 1}))
            .push(kinds::STEP_START, json!({"turn": turn, "step": 2}));
        let second = self.next_seq();
        for index in 0..6 {
            self.chunk(turn, 2, json!({"type": "text-delta", "index": 0, "text": format!("The sources have {index}00 lines. ")}));
        }
        let chunks: Vec<u64> = (second..self.next_seq()).collect();
        self.push_surface(
            kinds::ASSISTANT_MESSAGE,
            json!({"turn": turn, "step": 2, "message": {"id": format!("assistant-{turn}-2"), "role": "assistant",
                "content": [{"type": "text", "text": "The sources have 500 lines."}],
                "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}},
                "usage": {"inputTokens": 1400 + turn, "outputTokens": 40}}),
            Some(chunks),
        );
        self.push(kinds::STEP_END, json!({"turn": turn, "step": 2}))
            .push(
                kinds::TURN_END,
                json!({"turn": turn, "reason": {"kind": "completed"}}),
            )
    }
}

/// A session of the preamble plus `turns` turns: `7 + 33 * turns` events (1,000 turns give
/// the 33,007 events of the load benchmark).
pub fn long_session(turns: u64) -> Vec<SessionEvent> {
    let mut builder = LogBuilder::default();
    builder.preamble();
    for turn in 1..=turns {
        builder.turn(turn);
    }
    builder.finish()
}

/// [`long_session`] split as a live session flushes it: the preamble, then one batch per turn.
pub fn long_session_batches(turns: u64) -> (Vec<SessionEvent>, Vec<Vec<SessionEvent>>) {
    let mut events = long_session(turns).into_iter();
    let preamble = events.by_ref().take(PREAMBLE_EVENTS).collect();
    let mut batches = Vec::new();
    loop {
        let batch: Vec<_> = events.by_ref().take(TURN_EVENTS).collect();
        if batch.is_empty() {
            return (preamble, batches);
        }
        batches.push(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thousand_turns_are_33007_events() {
        let events = long_session(1000);
        assert_eq!(events.len(), PREAMBLE_EVENTS + 1000 * TURN_EVENTS);
        assert_eq!(events.len(), 33_007);
        assert!(
            events
                .iter()
                .enumerate()
                .all(|(index, event)| event.seq == index as u64)
        );
    }

    #[test]
    fn the_log_is_a_valid_session() {
        let header = dsh_session::SessionHeader::new("s", 1);
        let mut session = dsh_session::Session::from_seed(header, long_session(3)).map(Some);
        let session = session.as_mut().ok().and_then(Option::as_mut);
        assert!(session.is_some_and(|s| s.derive_messages().len() == 3 * 4));
    }
}
