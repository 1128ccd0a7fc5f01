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

use dsh_protocol::kinds;
use serde_json::Value;

use crate::event::{SessionEvent, SurfaceOp};
use crate::js_values::{field, js_number, js_template};
use crate::repair::TOOL_NOT_STARTED;

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
            kinds::TURN_START => {
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
            kinds::TURN_END => {
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
            kinds::STEP_START => {
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
            kinds::STEP_END => {
                self.require_open_step(kinds::STEP_END, turn, step)?;
                next.pending = PendingChange::Clear;
                next.open_step = None;
                next.next_step = self.next_step.saturating_add(1);
            }
            kind @ (kinds::ASSISTANT_CHUNK | kinds::ASSISTANT_MESSAGE) => {
                self.require_open_step(kind, turn, step)?;
            }
            kinds::TOOL_CALL => {
                self.require_open_step(kinds::TOOL_CALL, turn, step)?;
                next.pending = PendingChange::Add(CallKey::of(field(data, "callId")));
            }
            kinds::TOOL_RESULT => {
                // A replacement is a content rewrite the surface already validated: durable turn
                // work, not a second execution of the original call.
                if event.surface_op != Some(SurfaceOp::Append) {
                    if self.open_turn.is_none() {
                        return fail(
                            "tool/result surface replacement appended outside any open turn".into(),
                        );
                    }
                } else {
                    self.require_open_step(kinds::TOOL_RESULT, turn, step)?;
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
            kind @ (kinds::TODO_WRITE | kinds::REQUEST_HEADER | kinds::REQUEST_CONTEXT)
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
    // Deliberate: JavaScript holds a double.
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
