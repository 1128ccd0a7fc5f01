//! Optional relational invariants of a session log (dsh 0.1's session invariant companion).
//!
//! An [`InvariantChecker`] follows one session's events and refuses the first one that breaks
//! the turn/step/tool structure: seqs strictly increase; turns are numbered from 1 and never
//! nest; steps restart at 1 in every turn and never nest; chunks, assistant messages, tool calls
//! and appended tool results name the open turn and step; an appended tool result answers a
//! `tool/call` of the same step (or is a crash closer for a call that never started); a
//! tool-result replacement, `todo/write`, `request/header` and `request/context` sit inside a turn.
//! `user/message`, `session/end-seed` and plugin events are unconstrained.
//!
//! Checking is two-phase so a later veto cannot corrupt the trace: [`InvariantChecker::validate`]
//! is pure and returns an [`InvariantTransition`], which [`InvariantChecker::commit`] applies once
//! the event is committed. [`InvariantChecker::check`] does both.
//!
//! Payload fields are read the way JavaScript reads them, so messages and verdicts match dsh 0.1:
//! a missing field prints as `undefined` and numbers compare as doubles.

use std::borrow::Borrow;
use std::collections::HashSet;

use serde_json::Value;

use crate::event::{SessionEvent, SurfaceOp};
use crate::repair::{TOOL_NOT_STARTED, field, js_number, js_template};

/// The package the invariants belong to, as named in every [`InvariantError`].
pub const PACKAGE_NAME: &str = "@deepseek-ai/dsh-session";

/// An event that breaks a session-log invariant; the event must not be committed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invariant violated by \"{package}\": {message}")]
pub struct InvariantError {
    /// The package owning the broken invariant (always [`PACKAGE_NAME`]).
    pub package: &'static str,
    /// The violated relation, without the standard prefix.
    pub message: String,
}

impl InvariantError {
    /// The stable machine-readable code of every invariant failure.
    pub const CODE: &'static str = "INVARIANT";

    fn new(message: String) -> Self {
        Self {
            package: PACKAGE_NAME,
            message,
        }
    }
}

/// A tool call id as a JavaScript `Set` tells ids apart (SameValueZero).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CallKey {
    Undefined,
    Null,
    Bool(bool),
    /// The double's bits, with `-0` folded into `0`.
    Number(u64),
    String(String),
}

impl CallKey {
    /// The key of a call id; `None` for objects and arrays, which never match another event's.
    fn of(value: Option<&Value>) -> Option<Self> {
        Some(match value {
            None => Self::Undefined,
            Some(Value::Null) => Self::Null,
            Some(Value::Bool(flag)) => Self::Bool(*flag),
            Some(Value::Number(number)) => {
                let double = number.as_f64()?;
                Self::Number(if double == 0.0 { 0 } else { double.to_bits() })
            }
            Some(Value::String(text)) => Self::String(text.clone()),
            Some(Value::Array(_) | Value::Object(_)) => return None,
        })
    }
}

/// How an accepted event changes the set of started, unanswered tool calls.
#[derive(Debug, Clone, PartialEq)]
enum PendingChange {
    None,
    Add(Option<CallKey>),
    Delete(Option<CallKey>),
    Clear,
}

/// The state change of one validated event, applied by [`InvariantChecker::commit`].
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a validated event changes nothing until its transition is committed"]
pub struct InvariantTransition {
    last_seq: u64,
    open_turn: Option<u64>,
    open_step: Option<u64>,
    next_turn: u64,
    next_step: u64,
    pending: PendingChange,
}

/// One session's relational trace: the open turn and step and the started tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantChecker {
    last_seq: Option<u64>,
    /// The open turn (always the number `turn/start` was required to name), or `null`.
    open_turn: Option<u64>,
    /// The open step, or `null`.
    open_step: Option<u64>,
    next_turn: u64,
    next_step: u64,
    pending_calls: HashSet<CallKey>,
}

impl Default for InvariantChecker {
    fn default() -> Self {
        Self::new()
    }
}

impl InvariantChecker {
    /// A trace for an empty session: no events, no open turn, turn 1 and step 1 come next.
    pub fn new() -> Self {
        Self {
            last_seq: None,
            open_turn: None,
            open_step: None,
            next_turn: 1,
            next_step: 1,
            pending_calls: HashSet::new(),
        }
    }

    /// A trace replayed over a session's existing events, or the first violation among them.
    pub fn seeded<E: Borrow<SessionEvent>>(events: &[E]) -> Result<Self, InvariantError> {
        let mut checker = Self::new();
        for event in events {
            checker.check(event.borrow())?;
        }
        Ok(checker)
    }

    /// Validates `event` as the next event and, if it is accepted, commits its state change.
    ///
    /// On error the trace is unchanged.
    pub fn check(&mut self, event: &SessionEvent) -> Result<(), InvariantError> {
        let transition = self.validate(event)?;
        self.commit(transition);
        Ok(())
    }

    /// Validates `event` as the next event without changing the trace.
    ///
    /// The returned transition must be [`commit`](Self::commit)ted once the event is committed;
    /// dropping it (because a later check vetoed the event) leaves the trace as it was.
    pub fn validate(&self, event: &SessionEvent) -> Result<InvariantTransition, InvariantError> {
        if let Some(last) = self.last_seq
            && event.seq <= last
        {
            return Err(InvariantError::new(format!(
                "seq must strictly increase: saw {} after {last}",
                event.seq
            )));
        }
        let mut next = InvariantTransition {
            last_seq: event.seq,
            open_turn: self.open_turn,
            open_step: self.open_step,
            next_turn: self.next_turn,
            next_step: self.next_step,
            pending: PendingChange::None,
        };
        let data = &event.data;
        let turn = field(data, "turn");
        let step = field(data, "step");
        let fail = |message: String| Err(InvariantError::new(message));
        match event.kind.as_ref() {
            "turn/start" => {
                if let Some(open) = self.open_turn {
                    return fail(format!(
                        "turn/start {} while turn {} is still open",
                        js_template(turn),
                        js_number(open)
                    ));
                }
                if !number_is(turn, self.next_turn) {
                    return fail(format!(
                        "turn/start expected turn {}, got {}",
                        js_number(self.next_turn),
                        js_template(turn)
                    ));
                }
                next.open_turn = Some(self.next_turn);
                next.next_step = 1;
            }
            "turn/end" => {
                if !slot_is(self.open_turn, turn) {
                    return fail(format!(
                        "turn/end {} does not match open turn {}",
                        js_template(turn),
                        slot_text(self.open_turn)
                    ));
                }
                if let Some(open) = self.open_step {
                    return fail(format!(
                        "turn/end {} while step {} is still open",
                        js_template(turn),
                        js_number(open)
                    ));
                }
                next.open_turn = None;
                next.next_turn = self.next_turn.saturating_add(1);
            }
            "step/start" => {
                if !slot_is(self.open_turn, turn) {
                    return fail(format!(
                        "step/start in turn {} but open turn is {}",
                        js_template(turn),
                        slot_text(self.open_turn)
                    ));
                }
                if let Some(open) = self.open_step {
                    return fail(format!(
                        "step/start {} while step {} is still open",
                        js_template(step),
                        js_number(open)
                    ));
                }
                if !number_is(step, self.next_step) {
                    return fail(format!(
                        "step/start expected step {} in turn {}, got {}",
                        js_number(self.next_step),
                        js_template(turn),
                        js_template(step)
                    ));
                }
                next.open_step = Some(self.next_step);
            }
            "step/end" => {
                self.require_open_step("step/end", turn, step)?;
                next.pending = PendingChange::Clear;
                next.open_step = None;
                next.next_step = self.next_step.saturating_add(1);
            }
            kind @ ("assistant/chunk" | "assistant/message") => {
                self.require_open_step(kind, turn, step)?;
            }
            "tool/call" => {
                self.require_open_step("tool/call", turn, step)?;
                next.pending = PendingChange::Add(CallKey::of(field(data, "callId")));
            }
            "tool/result" => {
                // A replacement is a content rewrite the surface already validated: durable turn
                // work, not a second execution of the original call.
                if event.surface_op != Some(SurfaceOp::Append) {
                    if self.open_turn.is_none() {
                        return fail(
                            "tool/result surface replacement appended outside any open turn".into(),
                        );
                    }
                } else {
                    self.require_open_step("tool/result", turn, step)?;
                    let message = field(data, "message");
                    let call_id = message
                        .and_then(|m| field(m, "source"))
                        .and_then(|s| field(s, "callId"));
                    let first_block = message
                        .and_then(|m| field(m, "content"))
                        .and_then(|content| content.as_array())
                        .and_then(|blocks| blocks.first());
                    let synthetic_not_started = first_block
                        .and_then(|block| field(block, "isError"))
                        == Some(&Value::Bool(true))
                        && field(data, "error")
                            .and_then(|error| field(error, "code"))
                            .and_then(Value::as_str)
                            == Some(TOOL_NOT_STARTED);
                    let key = CallKey::of(call_id);
                    let started = key
                        .as_ref()
                        .is_some_and(|key| self.pending_calls.contains(key));
                    if !started && !synthetic_not_started {
                        return fail(format!(
                            "tool/result for {} with no prior tool/call in this step",
                            js_template(call_id)
                        ));
                    }
                    next.pending = PendingChange::Delete(key);
                }
            }
            kind @ ("todo/write" | "request/header" | "request/context")
                if self.open_turn.is_none() =>
            {
                return fail(format!(
                    "{kind} appended outside any open turn (core execution events must be \
                     turn-enclosed)"
                ));
            }
            // Enclosed context events; `user/message` and `session/end-seed` are unconstrained
            // (an unbalanced seed puts the end-seed marker inside an open turn); plugin events
            // belong to their plugin.
            _ => {}
        }
        Ok(next)
    }

    /// Applies a transition returned by [`validate`](Self::validate) for the committed event.
    pub fn commit(&mut self, transition: InvariantTransition) {
        self.last_seq = Some(transition.last_seq);
        self.open_turn = transition.open_turn;
        self.open_step = transition.open_step;
        self.next_turn = transition.next_turn;
        self.next_step = transition.next_step;
        match transition.pending {
            PendingChange::None => {}
            PendingChange::Add(key) => {
                if let Some(key) = key {
                    self.pending_calls.insert(key);
                }
            }
            PendingChange::Delete(key) => {
                if let Some(key) = key {
                    self.pending_calls.remove(&key);
                }
            }
            PendingChange::Clear => self.pending_calls.clear(),
        }
    }

    /// Checks that a step-scoped event names the open turn and step.
    fn require_open_step(
        &self,
        kind: &str,
        turn: Option<&Value>,
        step: Option<&Value>,
    ) -> Result<(), InvariantError> {
        if slot_is(self.open_turn, turn) && slot_is(self.open_step, step) {
            return Ok(());
        }
        Err(InvariantError::new(format!(
            "{kind} names turn {}/step {} but open is turn {}/step {}",
            js_template(turn),
            js_template(step),
            slot_text(self.open_turn),
            slot_text(self.open_step)
        )))
    }
}

/// JavaScript's `value === n` for a field read from an event.
fn number_is(value: Option<&Value>, n: u64) -> bool {
    #[allow(clippy::cast_precision_loss)] // deliberate: JavaScript holds a double
    let n = n as f64;
    value.and_then(Value::as_f64) == Some(n)
}

/// JavaScript's `slot === value`, where an empty slot is `null`.
fn slot_is(slot: Option<u64>, value: Option<&Value>) -> bool {
    match slot {
        None => value == Some(&Value::Null),
        Some(n) => number_is(value, n),
    }
}

/// JavaScript's `` `${slot}` ``, where an empty slot is `null`.
fn slot_text(slot: Option<u64>) -> String {
    slot.map_or_else(|| "null".to_owned(), js_number)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::repair::interrupted_turn_closers;

    /// Appends events to a checked log, as a session with the companion mounted does.
    struct Log {
        checker: InvariantChecker,
        events: Vec<SessionEvent>,
    }

    impl Log {
        fn new() -> Self {
            Self {
                checker: InvariantChecker::new(),
                events: Vec::new(),
            }
        }

        fn next(&self, kind: &str, data: Value) -> SessionEvent {
            let seq = self.events.len() as u64;
            let mut event = SessionEvent::new(kind, seq, 1_000, data);
            if crate::event::is_surface_type(kind) {
                event.surface_op = Some(SurfaceOp::Append);
            }
            event
        }

        fn try_event(&mut self, event: SessionEvent) -> Result<(), String> {
            self.checker
                .check(&event)
                .map_err(|error| error.to_string())?;
            self.events.push(event);
            Ok(())
        }

        fn append(&mut self, kind: &str, data: Value) -> Result<(), String> {
            let event = self.next(kind, data);
            self.try_event(event)
        }

        fn ok(&mut self, kind: &str, data: Value) -> &mut Self {
            if let Err(error) = self.append(kind, data) {
                panic!("{kind} refused: {error}");
            }
            self
        }

        fn refused(&mut self, kind: &str, data: Value, pattern: &str) {
            let checker = self.checker.clone();
            match self.append(kind, data) {
                Ok(()) => panic!("{kind} accepted, expected {pattern:?}"),
                Err(error) => {
                    assert!(error.contains(pattern), "{error:?} lacks {pattern:?}");
                    assert!(
                        error.starts_with("invariant violated by \"@deepseek-ai/dsh-session\": ")
                    );
                }
            }
            assert_eq!(self.checker, checker, "a refused event changed the trace");
        }
    }

    fn user_message(text: &str) -> Value {
        json!({"id": "u", "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}})
    }

    fn assistant(turn: u64, step: u64, content: Value) -> Value {
        json!({"turn": turn, "step": step, "message": {
            "id": "a", "role": "assistant", "content": content,
            "source": {"kind": "model", "provider": "mock", "model": "mock"},
        }})
    }

    fn tool_result(turn: u64, step: u64, call_id: &str, is_error: bool) -> Value {
        json!({"turn": turn, "step": step, "message": {
            "id": "r", "role": "user",
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": [], "isError": is_error}],
            "source": {"kind": "tool", "callId": call_id},
        }})
    }

    fn tool_call(turn: u64, step: u64, call_id: &str) -> Value {
        json!({"turn": turn, "step": step, "callId": call_id, "name": "echo", "arguments": "{}"})
    }

    #[test]
    fn accepts_a_well_formed_turn_step_and_tool_sequence() {
        Log::new()
            .ok("turn/start", json!({"turn": 1}))
            .ok("user/message", user_message("hi"))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("assistant/chunk", json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "h"}}))
            .ok("assistant/message", assistant(1, 1, json!([{"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"}])))
            .ok("tool/call", tool_call(1, 1, "c1"))
            .ok("tool/result", tool_result(1, 1, "c1", false))
            .ok("step/end", json!({"turn": 1, "step": 1}))
            .ok("turn/end", json!({"turn": 1, "reason": {"kind": "completed"}}));
    }

    #[test]
    fn a_vetoed_event_leaves_the_trace_unchanged() {
        let mut checker = InvariantChecker::new();
        let start = SessionEvent::new("turn/start", 0, 1, json!({"turn": 1}));
        // Validated, then vetoed by a later listener: the transition is dropped.
        let _vetoed = checker.validate(&start).unwrap();
        assert_eq!(checker, InvariantChecker::new());
        checker.check(&start).unwrap();
        let end = SessionEvent::new(
            "turn/end",
            1,
            2,
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );
        checker.check(&end).unwrap();
    }

    #[test]
    fn rejects_non_monotonic_seqs() {
        let mut checker = InvariantChecker::new();
        checker
            .check(&SessionEvent::new("turn/start", 0, 1, json!({"turn": 1})))
            .unwrap();
        let error = checker
            .check(&SessionEvent::new(
                "turn/end",
                0,
                2,
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            ))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invariant violated by \"@deepseek-ai/dsh-session\": seq must strictly increase: saw 0 after 0"
        );
        assert_eq!(error.message, "seq must strictly increase: saw 0 after 0");
        assert_eq!(InvariantError::CODE, "INVARIANT");
    }

    #[test]
    fn enforces_turn_numbering_and_core_execution_enclosure() {
        let mut open = Log::new();
        open.ok("turn/start", json!({"turn": 1}));
        open.refused(
            "turn/start",
            json!({"turn": 2}),
            "turn/start 2 while turn 1 is still open",
        );
        open.refused(
            "turn/end",
            json!({"turn": 2, "reason": {"kind": "completed"}}),
            "turn/end 2 does not match open turn 1",
        );

        let mut second = Log::new();
        second.ok("turn/start", json!({"turn": 1})).ok(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );
        second.refused(
            "turn/start",
            json!({"turn": 3}),
            "turn/start expected turn 2, got 3",
        );

        Log::new()
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("step/end", json!({"turn": 1, "step": 1}))
            .ok(
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            );

        Log::new()
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("todo/write", json!({"todos": []}))
            .ok("request/header", json!({"header": {"config": {"provider": "mock", "model": "mock"}}, "reason": "initial"}))
            .ok("request/context", json!({"provider": "mock", "model": "mock"}));

        let mut outside = Log::new();
        outside.ok("user/message", user_message("idle context"));
        outside.refused(
            "request/context",
            json!({"provider": "mock", "model": "m", "contextWindow": 128_000}),
            "request/context appended outside any open turn (core execution events must be turn-enclosed)",
        );
        outside.refused(
            "todo/write",
            json!({"todos": []}),
            "todo/write appended outside any open turn",
        );
        outside
            .ok("plugin/marker", json!({}))
            .ok("turn/start", json!({"turn": 1}));
    }

    #[test]
    fn enforces_open_step_identity_and_numbering() {
        let mut wrong_turn = Log::new();
        wrong_turn.ok("turn/start", json!({"turn": 1}));
        wrong_turn.refused(
            "step/start",
            json!({"turn": 2, "step": 1}),
            "step/start in turn 2 but open turn is 1",
        );

        let mut nested = Log::new();
        nested
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}));
        nested.refused(
            "step/start",
            json!({"turn": 1, "step": 2}),
            "step/start 2 while step 1 is still open",
        );
        nested.refused(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
            "turn/end 1 while step 1 is still open",
        );
        nested.refused(
            "step/end",
            json!({"turn": 1, "step": 2}),
            "step/end names turn 1/step 2 but open is turn 1/step 1",
        );
        nested.refused(
            "assistant/message",
            assistant(1, 2, json!([])),
            "open is turn 1/step 1",
        );

        let mut skipped = Log::new();
        skipped
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("step/end", json!({"turn": 1, "step": 1}));
        skipped.refused(
            "step/start",
            json!({"turn": 1, "step": 3}),
            "step/start expected step 2 in turn 1, got 3",
        );
        skipped.ok(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );

        // Steps restart at 1 in the next turn.
        skipped
            .ok("turn/start", json!({"turn": 2}))
            .ok("step/start", json!({"turn": 2, "step": 1}));
    }

    #[test]
    fn step_scoped_stream_and_tool_events_name_the_open_step() {
        let mut chunk = Log::new();
        chunk.ok("turn/start", json!({"turn": 1}));
        chunk.refused(
            "assistant/chunk",
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}),
            "assistant/chunk names turn 1/step 1 but open is turn 1/step null",
        );

        let mut tool = Log::new();
        tool.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}));
        tool.refused(
            "tool/result",
            tool_result(1, 1, "ghost", false),
            "tool/result for ghost with no prior tool/call in this step",
        );
        tool.refused(
            "tool/call",
            tool_call(2, 1, "c"),
            "tool/call names turn 2/step 1 but open is turn 1/step 1",
        );
    }

    #[test]
    fn fresh_tool_result_appends_stay_open_step_checked() {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}));
        log.refused(
            "tool/result",
            tool_result(1, 1, "closed", false),
            "open is turn 1/step null",
        );
    }

    fn replacement_of(log: &Log, original: u64) -> SessionEvent {
        let mut event = log.next("tool/result", tool_result(1, 1, "rewrite", false));
        event.data["message"]["content"][0]["content"] =
            json!([{"type": "text", "text": "pruned"}]);
        event.surface_op = Some(SurfaceOp::Replace {
            start: original,
            end: original,
        });
        event.source_event_seqs = Some(vec![original]);
        event
    }

    fn log_with_answered_call() -> (Log, u64) {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("tool/call", tool_call(1, 1, "rewrite"))
            .ok("tool/result", tool_result(1, 1, "rewrite", false));
        let original = log.events.len() as u64 - 1;
        log.ok("step/end", json!({"turn": 1, "step": 1})).ok(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );
        (log, original)
    }

    #[test]
    fn a_tool_result_replacement_is_a_turn_enclosed_rewrite() {
        let (mut log, original) = log_with_answered_call();
        log.ok("turn/start", json!({"turn": 2}));
        let replacement = replacement_of(&log, original);
        log.try_event(replacement).unwrap();
    }

    #[test]
    fn rejects_a_tool_result_replacement_outside_a_turn() {
        let (mut log, original) = log_with_answered_call();
        let replacement = replacement_of(&log, original);
        assert_eq!(
            log.try_event(replacement).unwrap_err(),
            "invariant violated by \"@deepseek-ai/dsh-session\": tool/result surface replacement appended outside any open turn"
        );
    }

    #[test]
    fn allows_not_started_repair_results_and_unresolved_calls_at_step_end() {
        let mut repaired = Log::new();
        let mut result = tool_result(1, 1, "crashed", true);
        result["error"] = json!({"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED});
        repaired
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("tool/result", result)
            .ok("step/end", json!({"turn": 1, "step": 1}))
            .ok(
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "interrupted"}}),
            );

        Log::new()
            .ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("tool/call", tool_call(1, 1, "c1"))
            .ok("step/end", json!({"turn": 1, "step": 1}))
            .ok("turn/end", json!({"turn": 1, "reason": {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}}}));
    }

    #[test]
    fn a_result_in_a_later_step_does_not_answer_an_earlier_call() {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("tool/call", tool_call(1, 1, "c1"))
            .ok("step/end", json!({"turn": 1, "step": 1}))
            .ok("step/start", json!({"turn": 1, "step": 2}));
        log.refused(
            "tool/result",
            tool_result(1, 2, "c1", false),
            "no prior tool/call in this step",
        );
    }

    #[test]
    fn a_call_is_answered_once() {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok("tool/call", tool_call(1, 1, "c1"))
            .ok("tool/result", tool_result(1, 1, "c1", false));
        log.refused(
            "tool/result",
            tool_result(1, 1, "c1", false),
            "tool/result for c1 with no prior tool/call",
        );
    }

    #[test]
    fn replays_seeds_and_tracks_sessions_independently() {
        let bad_seed = [
            SessionEvent::new("turn/start", 0, 0, json!({"turn": 1})),
            SessionEvent::new("turn/start", 1, 0, json!({"turn": 2})),
        ];
        let error = InvariantChecker::seeded(&bad_seed).unwrap_err();
        assert_eq!(error.message, "turn/start 2 while turn 1 is still open");

        let mut a = Log::new();
        let mut b = Log::new();
        a.ok("turn/start", json!({"turn": 1}));
        b.ok("turn/start", json!({"turn": 1}));
    }

    #[test]
    fn a_rebuilt_trace_continues_the_session() {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}));
        let mut rebuilt = Log {
            checker: InvariantChecker::seeded(&log.events).unwrap(),
            events: log.events,
        };
        rebuilt.ok(
            "assistant/chunk",
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "h"}}),
        );
        rebuilt.refused("turn/start", json!({"turn": 2}), "turn 1 is still open");
    }

    #[test]
    fn accepts_end_seed_whether_or_not_a_turn_is_open() {
        Log::new()
            .ok("turn/start", json!({"turn": 1}))
            .ok(
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            )
            .ok("session/end-seed", json!({}));
        let mut open = Log::new();
        open.ok("turn/start", json!({"turn": 1}))
            .ok("session/end-seed", json!({}));
        open.refused("turn/start", json!({"turn": 2}), "turn 1 is still open");
        open.ok(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );
    }

    #[test]
    fn crash_closers_satisfy_the_invariants() {
        let mut log = Log::new();
        log.ok("turn/start", json!({"turn": 1}))
            .ok("step/start", json!({"turn": 1, "step": 1}))
            .ok(
                "assistant/message",
                assistant(
                    1,
                    1,
                    json!([
                        {"type": "tool-call", "id": "a", "name": "echo", "arguments": "{}"},
                        {"type": "tool-call", "id": "b", "name": "echo", "arguments": "{}"},
                    ]),
                ),
            )
            .ok("tool/call", tool_call(1, 1, "a"));
        for closer in interrupted_turn_closers(&log.events) {
            log.try_event(closer).unwrap();
        }
        assert_eq!(log.checker.open_turn, None);
        log.ok("turn/start", json!({"turn": 2}));
    }

    #[test]
    fn reads_payload_fields_the_way_javascript_does() {
        let mut log = Log::new();
        log.refused(
            "turn/start",
            json!({}),
            "turn/start expected turn 1, got undefined",
        );
        log.refused(
            "turn/start",
            json!({"turn": "1"}),
            "turn/start expected turn 1, got 1",
        );
        // `1.0` is the number 1; a `null` turn matches the closed turn (`null === null`).
        log.ok("turn/start", json!({"turn": 1.0}))
            .ok(
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            )
            .ok(
                "turn/end",
                json!({"turn": null, "reason": {"kind": "completed"}}),
            );
        log.refused(
            "turn/start",
            json!({"turn": 2}),
            "turn/start expected turn 3, got 2",
        );
    }
}
