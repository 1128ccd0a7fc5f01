//! Crash recovery: the synthetic events that close a turn a crash left open.
//!
//! [`interrupted_turn_closers`] scans a loaded log and, when its last turn never ended, returns
//! the events dsh 0.1 appends to close it: an error `tool/result` for every unanswered tool call,
//! then `step/end` for an open step, then `turn/end {reason: {kind: "interrupted"}}`. The output is
//! deterministic (seqs continue the log, every closer reuses the last event's time), so repairing
//! the same log twice writes the same bytes.
//!
//! The scan reads event payloads the way JavaScript does: a missing field is `undefined` (its key
//! is then left out of the closer), JSON `null` is `null`, and ids are compared with JavaScript's
//! equality, so a log written by dsh 0.1 repairs to exactly what dsh 0.1 would append.

use std::borrow::{Borrow, Cow};

use dsh_protocol::kinds;
use serde_json::{Map, Value};

use crate::event::{SessionEvent, SurfaceKeyOrder, SurfaceOp};
use crate::js_values::{field, js_strict_eq, js_template};

/// Error code of a closer for a tool call the assistant asked for but that never started.
pub const TOOL_NOT_STARTED: &str = "TOOL_NOT_STARTED";

/// Error code of a closer for a started tool call whose outcome was never recorded.
pub const TOOL_OUTCOME_UNKNOWN: &str = "TOOL_OUTCOME_UNKNOWN";

/// The model-facing text of a closer for a tool call that had started (`TOOL_OUTCOME_UNKNOWN`).
pub const OUTCOME_UNKNOWN_TEXT: &str = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.";

/// The model-facing text of a closer for a tool call that never started (`TOOL_NOT_STARTED`).
pub const NOT_STARTED_TEXT: &str = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.";

/// A tool call the assistant asked for and no `tool/result` answered yet.
struct PendingCall<'a> {
    /// The `tool-call` block's `id` (`None` is JavaScript's `undefined`).
    id: Option<&'a Value>,
    /// The `step` of the `assistant/message` that asked for it.
    step: Option<&'a Value>,
    /// The seq of its `tool/call` event, once the call started.
    call_seq: Option<u64>,
}

/// The synthetic events that close the log's open tail turn, in the order to append them.
///
/// Returns nothing for an empty log or one whose last turn ended. Otherwise returns one error
/// `tool/result` per unanswered tool call of the open step (in the order the assistant asked for
/// them), `step/end` if a step is open, and `turn/end` with reason `interrupted`. Seqs continue
/// from the last event's seq + 1 and every closer carries the last event's time. A `tool/result`
/// closer has `surfaceOp: "append"`, written before `sourceEventSeqs: [<tool/call seq>]`, which it
/// carries only when the call had started.
pub fn interrupted_turn_closers<E: Borrow<SessionEvent>>(events: &[E]) -> Vec<SessionEvent> {
    // Only the last turn can be open, and `turn/start` resets all state, so the scan starts
    // there: payloads of earlier turns are never read (nor parsed, for a loaded log).
    let last_start = events
        .iter()
        .rposition(|event| event.borrow().kind == kinds::TURN_START);
    let Some(start) = last_start else {
        return Vec::new();
    };
    let tail = events.get(start..).unwrap_or_default();
    if tail
        .iter()
        .any(|event| event.borrow().kind == kinds::TURN_END)
    {
        return Vec::new();
    }
    closers_of_open_turn(tail)
}

/// dsh's scan over a log whose state matters from its first event.
fn closers_of_open_turn<E: Borrow<SessionEvent>>(events: &[E]) -> Vec<SessionEvent> {
    // `None` is JavaScript's `null` (no open turn or step); `Some(None)` is `undefined`.
    let mut open_turn: Option<Option<&Value>> = None;
    let mut open_step: Option<Option<&Value>> = None;
    let mut pending: Vec<PendingCall<'_>> = Vec::new();
    for event in events {
        let event: &SessionEvent = event.borrow();
        let data = &event.data;
        match event.kind.as_ref() {
            kinds::TURN_START => {
                open_turn = js_nullable(field(data, "turn"));
                open_step = None;
                pending.clear();
            }
            kinds::TURN_END => {
                open_turn = None;
                open_step = None;
                pending.clear();
            }
            kinds::STEP_START => open_step = js_nullable(field(data, "step")),
            kinds::STEP_END => {
                pending.clear();
                open_step = None;
            }
            kinds::ASSISTANT_MESSAGE => {
                let blocks = field(data, "message").and_then(|message| field(message, "content"));
                let Some(Value::Array(blocks)) = blocks else {
                    continue;
                };
                let step = field(data, "step");
                for block in blocks {
                    if field(block, "type").and_then(Value::as_str) != Some("tool-call") {
                        continue;
                    }
                    let id = field(block, "id");
                    let call = PendingCall {
                        id,
                        step,
                        call_seq: None,
                    };
                    // `Map.set` on a known id replaces the entry but keeps its position.
                    match pending.iter_mut().find(|entry| js_strict_eq(entry.id, id)) {
                        Some(entry) => *entry = call,
                        None => pending.push(call),
                    }
                }
            }
            kinds::TOOL_CALL => {
                let id = field(data, "callId");
                if let Some(entry) = pending.iter_mut().find(|entry| js_strict_eq(entry.id, id)) {
                    entry.call_seq = Some(event.seq);
                }
            }
            kinds::TOOL_RESULT => {
                let source = field(data, "message").and_then(|message| field(message, "source"));
                if let Some(source) = source {
                    let id = field(source, "callId");
                    pending.retain(|entry| !js_strict_eq(entry.id, id));
                }
            }
            _ => {}
        }
    }

    let (Some(turn), Some(last)) = (open_turn, events.last()) else {
        return Vec::new();
    };
    let last: &SessionEvent = last.borrow();
    let mut seq = last.seq.saturating_add(1);
    let time = last.time;
    let mut closers = Vec::with_capacity(pending.len() + 2);

    for call in &pending {
        closers.push(tool_result_closer(turn, call, seq, time));
        seq = seq.saturating_add(1);
    }
    if let Some(step) = open_step {
        let mut data = Map::new();
        insert_defined(&mut data, "turn", turn);
        insert_defined(&mut data, "step", step);
        closers.push(closer(kinds::STEP_END, seq, time, Value::Object(data)));
        seq = seq.saturating_add(1);
    }
    let mut data = Map::new();
    insert_defined(&mut data, "turn", turn);
    data.insert(
        "reason".into(),
        object([("kind", Value::from("interrupted"))]),
    );
    closers.push(closer(kinds::TURN_END, seq, time, Value::Object(data)));
    closers
}

/// The error `tool/result` that answers one unanswered call.
fn tool_result_closer(
    turn: Option<&Value>,
    call: &PendingCall<'_>,
    seq: u64,
    time: i64,
) -> SessionEvent {
    let started = call.call_seq.is_some();
    let mut source = Map::new();
    source.insert("kind".into(), Value::from("tool"));
    insert_defined(&mut source, "callId", call.id);
    let text = if started {
        OUTCOME_UNKNOWN_TEXT
    } else {
        NOT_STARTED_TEXT
    };
    let mut block = Map::new();
    block.insert("type".into(), Value::from("tool-result"));
    insert_defined(&mut block, "toolCallId", call.id);
    block.insert("isError".into(), Value::Bool(true));
    let text_block = object([("type", Value::from("text")), ("text", Value::from(text))]);
    block.insert("content".into(), Value::Array(vec![text_block]));
    let message = object([
        (
            "id",
            Value::from(format!(
                "interrupted-tool-result-{}-{seq}",
                js_template(call.id)
            )),
        ),
        ("role", Value::from("user")),
        ("source", Value::Object(source)),
        ("content", Value::Array(vec![Value::Object(block)])),
    ]);
    let (name, code) = if started {
        ("ToolOutcomeUnknownError", TOOL_OUTCOME_UNKNOWN)
    } else {
        ("ToolNotStartedError", TOOL_NOT_STARTED)
    };
    let mut data = Map::new();
    insert_defined(&mut data, "turn", turn);
    insert_defined(&mut data, "step", call.step);
    data.insert("message".into(), message);
    data.insert(
        "error".into(),
        object([("name", Value::from(name)), ("code", Value::from(code))]),
    );
    let sources = call.call_seq.map(|call_seq| vec![call_seq]);
    SessionEvent {
        // With no sources the two orders print the same; a parsed event reads `SourcesFirst`.
        surface_key_order: if sources.is_some() {
            SurfaceKeyOrder::OpFirst
        } else {
            SurfaceKeyOrder::SourcesFirst
        },
        source_event_seqs: sources,
        surface_op: Some(SurfaceOp::Append),
        ..closer(kinds::TOOL_RESULT, seq, time, Value::Object(data))
    }
}

/// A plain closer event of a known core type.
fn closer(kind: &'static str, seq: u64, time: i64, data: Value) -> SessionEvent {
    SessionEvent {
        kind: Cow::Borrowed(kind),
        seq,
        time,
        data: data.into(),
        source_event_seqs: None,
        surface_op: None,
        ignorable: false,
        surface_key_order: SurfaceKeyOrder::SourcesFirst,
    }
}

/// A JSON object with `entries` in order.
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// Sets `key` unless `value` is `undefined`, as `JSON.stringify` drops undefined properties.
fn insert_defined(map: &mut Map<String, Value>, key: &str, value: Option<&Value>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value.clone());
    }
}

/// Reads a value that may be JavaScript's `null`: `None` for JSON `null`, else the value.
fn js_nullable(value: Option<&Value>) -> Option<Option<&Value>> {
    match value {
        Some(Value::Null) => None,
        other => Some(other),
    }
}
