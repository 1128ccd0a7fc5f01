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

use serde_json::{Map, Value};

use crate::event::{SessionEvent, SurfaceKeyOrder, SurfaceOp};

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
        .rposition(|event| event.borrow().kind == "turn/start");
    let Some(start) = last_start else {
        return Vec::new();
    };
    let tail = events.get(start..).unwrap_or_default();
    if tail.iter().any(|event| event.borrow().kind == "turn/end") {
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
            "turn/start" => {
                open_turn = js_nullable(field(data, "turn"));
                open_step = None;
                pending.clear();
            }
            "turn/end" => {
                open_turn = None;
                open_step = None;
                pending.clear();
            }
            "step/start" => open_step = js_nullable(field(data, "step")),
            "step/end" => {
                pending.clear();
                open_step = None;
            }
            "assistant/message" => {
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
            "tool/call" => {
                let id = field(data, "callId");
                if let Some(entry) = pending.iter_mut().find(|entry| js_strict_eq(entry.id, id)) {
                    entry.call_seq = Some(event.seq);
                }
            }
            "tool/result" => {
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
        closers.push(closer("step/end", seq, time, Value::Object(data)));
        seq = seq.saturating_add(1);
    }
    let mut data = Map::new();
    insert_defined(&mut data, "turn", turn);
    data.insert(
        "reason".into(),
        object([("kind", Value::from("interrupted"))]),
    );
    closers.push(closer("turn/end", seq, time, Value::Object(data)));
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
        ..closer("tool/result", seq, time, Value::Object(data))
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

/// JavaScript's `value[key]` on parsed JSON: `None` (`undefined`) unless `value` is an object.
pub(crate) fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object()?.get(key)
}

/// Reads a value that may be JavaScript's `null`: `None` for JSON `null`, else the value.
fn js_nullable(value: Option<&Value>) -> Option<Option<&Value>> {
    match value {
        Some(Value::Null) => None,
        other => Some(other),
    }
}

/// JavaScript's `a === b` between values read from two different events (`None` is `undefined`).
///
/// Numbers compare as doubles. Objects and arrays compare by identity in JavaScript, and two
/// values parsed from different places are never the same object, so they are never equal.
pub(crate) fn js_strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(a)), Some(Value::Bool(b))) => a == b,
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        (Some(Value::String(a)), Some(Value::String(b))) => a == b,
        _ => false,
    }
}

/// JavaScript's `` `${value}` `` for a parsed JSON value (`None` is `undefined`).
pub(crate) fn js_template(value: Option<&Value>) -> String {
    let mut out = String::new();
    match value {
        None => out.push_str("undefined"),
        Some(Value::Null) => out.push_str("null"),
        Some(value) => push_js_string(&mut out, value, 0),
    }
    out
}

/// Appends JavaScript's `String(value)`; array elements that are `null` print as nothing.
fn push_js_string(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => {
            let mut buffer = ryu_js::Buffer::new();
            out.push_str(buffer.format(number.as_f64().unwrap_or(f64::NAN)));
        }
        Value::String(text) => out.push_str(text),
        Value::Object(_) => out.push_str("[object Object]"),
        // JavaScript gives up on absurdly deep arrays too; they never name a real call.
        Value::Array(_) if depth > 64 => {}
        Value::Array(items) => {
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                if !item.is_null() {
                    push_js_string(out, item, depth + 1);
                }
            }
        }
    }
}

/// JavaScript's `` `${n}` `` for a number held as a `u64`.
pub(crate) fn js_number(n: u64) -> String {
    let mut out = String::new();
    #[allow(clippy::cast_precision_loss)] // deliberate: JavaScript holds a double
    push_js_string(&mut out, &Value::from(n as f64), 0);
    out
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use dsh_protocol::json::to_js_string;

    fn event(kind: &str, seq: u64, data: Value) -> SessionEvent {
        #[allow(clippy::cast_possible_wrap)]
        SessionEvent::new(kind, seq, seq as i64, data)
    }

    fn turn_start(turn: u64, seq: u64) -> SessionEvent {
        event("turn/start", seq, json!({ "turn": turn }))
    }

    fn assistant_calls(turn: u64, step: u64, seq: u64, ids: &[&str]) -> SessionEvent {
        let mut content = vec![json!({"type": "text", "text": "calling a tool"})];
        content.extend(
            ids.iter().map(
                |id| json!({"type": "tool-call", "id": id, "name": "bash", "arguments": "{}"}),
            ),
        );
        let mut event = event(
            "assistant/message",
            seq,
            json!({
                "turn": turn, "step": step,
                "message": {
                    "id": format!("m{seq}"), "role": "assistant", "content": content,
                    "source": {"kind": "model", "provider": "mock", "model": "mock"},
                },
            }),
        );
        event.surface_op = Some(SurfaceOp::Append);
        event
    }

    fn tool_result(turn: u64, step: u64, seq: u64, call_id: &str) -> SessionEvent {
        let mut event = event(
            "tool/result",
            seq,
            json!({
                "turn": turn, "step": step,
                "message": {
                    "id": format!("r{seq}"), "role": "user",
                    "content": [{"type": "tool-result", "toolCallId": call_id, "content": [], "isError": false}],
                    "source": {"kind": "tool", "callId": call_id},
                },
            }),
        );
        event.surface_op = Some(SurfaceOp::Append);
        event
    }

    fn tool_call(turn: u64, step: u64, seq: u64, call_id: &str) -> SessionEvent {
        event(
            "tool/call",
            seq,
            json!({"turn": turn, "step": step, "callId": call_id, "name": "bash", "arguments": "{}"}),
        )
    }

    fn kinds(events: &[SessionEvent]) -> Vec<&str> {
        events.iter().map(|event| event.kind.as_ref()).collect()
    }

    fn seqs(events: &[SessionEvent]) -> Vec<u64> {
        events.iter().map(|event| event.seq).collect()
    }

    #[test]
    fn returns_nothing_for_a_balanced_log() {
        let balanced = [
            turn_start(1, 0),
            event(
                "turn/end",
                1,
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            ),
        ];
        assert!(interrupted_turn_closers(&balanced).is_empty());
    }

    #[test]
    fn returns_nothing_for_an_empty_log() {
        assert!(interrupted_turn_closers::<SessionEvent>(&[]).is_empty());
    }

    #[test]
    fn closes_an_open_turn_with_no_open_step() {
        let closers = interrupted_turn_closers(&[turn_start(1, 0)]);
        assert_eq!(kinds(&closers), ["turn/end"]);
        assert_eq!(closers[0].seq, 1);
        assert_eq!(closers[0].data["reason"], json!({"kind": "interrupted"}));
        assert_eq!(
            to_js_string(&closers[0]),
            r#"{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"interrupted"}}}"#
        );
    }

    #[test]
    fn closes_an_open_step_before_the_turn() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(kinds(&closers), ["step/end", "turn/end"]);
        assert_eq!(seqs(&closers), [2, 3]);
        assert_eq!(
            to_js_string(&closers[0]),
            r#"{"type":"step/end","seq":2,"time":1,"data":{"turn":1,"step":1}}"#
        );
    }

    #[test]
    fn marks_an_assistant_tool_request_with_no_recorded_call_as_not_started() {
        let events = [
            turn_start(2, 0),
            event("step/start", 1, json!({"turn": 2, "step": 1})),
            assistant_calls(2, 1, 2, &["call-1"]),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(kinds(&closers), ["tool/result", "step/end", "turn/end"]);
        assert_eq!(seqs(&closers), [3, 4, 5]);
        let result = &closers[0];
        assert_eq!(result.data["error"]["code"], TOOL_NOT_STARTED);
        assert_eq!(result.source_event_seqs, None);
        assert_eq!(result.surface_op, Some(SurfaceOp::Append));
        let expected = format!(
            concat!(
                r#"{{"type":"tool/result","seq":3,"time":2,"data":{{"turn":2,"step":1,"message":"#,
                r#"{{"id":"interrupted-tool-result-call-1-3","role":"user","#,
                r#""source":{{"kind":"tool","callId":"call-1"}},"content":[{{"type":"tool-result","#,
                r#""toolCallId":"call-1","isError":true,"content":[{{"type":"text","text":"{}"}}]}}]}},"#,
                r#""error":{{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"}}}},"#,
                r#""surfaceOp":"append"}}"#
            ),
            NOT_STARTED_TEXT
        );
        assert_eq!(to_js_string(result), expected);
    }

    #[test]
    fn does_not_answer_a_call_that_already_has_a_result() {
        let events = [
            turn_start(2, 0),
            event("step/start", 1, json!({"turn": 2, "step": 1})),
            assistant_calls(2, 1, 2, &["call-1"]),
            tool_result(2, 1, 3, "call-1"),
        ];
        assert_eq!(
            kinds(&interrupted_turn_closers(&events)),
            ["step/end", "turn/end"]
        );
    }

    #[test]
    fn does_not_answer_a_call_after_its_step_closed() {
        let events = [
            turn_start(2, 0),
            event("step/start", 1, json!({"turn": 2, "step": 1})),
            assistant_calls(2, 1, 2, &["call-1"]),
            event("step/end", 3, json!({"turn": 2, "step": 1})),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(kinds(&closers), ["turn/end"]);
        assert_eq!(closers[0].seq, 4);
    }

    #[test]
    fn answers_only_the_open_turn_not_a_committed_earlier_one() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            assistant_calls(1, 1, 2, &["old-call"]),
            tool_result(1, 1, 3, "old-call"),
            event("step/end", 4, json!({"turn": 1, "step": 1})),
            event(
                "turn/end",
                5,
                json!({"turn": 1, "reason": {"kind": "completed"}}),
            ),
            turn_start(2, 6),
            event("step/start", 7, json!({"turn": 2, "step": 1})),
            assistant_calls(2, 1, 8, &["new-call"]),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(kinds(&closers), ["tool/result", "step/end", "turn/end"]);
        assert_eq!(closers[0].data["message"]["source"]["callId"], "new-call");
    }

    #[test]
    fn answers_each_unanswered_call_in_log_order() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            assistant_calls(1, 1, 2, &["call-a", "call-b", "call-c"]),
            tool_result(1, 1, 3, "call-a"),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(
            kinds(&closers),
            ["tool/result", "tool/result", "step/end", "turn/end"]
        );
        let ids: Vec<_> = closers[..2]
            .iter()
            .map(|c| &c.data["message"]["id"])
            .collect();
        assert_eq!(
            ids,
            [
                "interrupted-tool-result-call-b-4",
                "interrupted-tool-result-call-c-5"
            ]
        );
    }

    #[test]
    fn a_started_call_is_answered_with_outcome_unknown_and_cites_its_tool_call() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            assistant_calls(1, 1, 2, &["call-1"]),
            tool_call(1, 1, 3, "call-1"),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(kinds(&closers), ["tool/result", "step/end", "turn/end"]);
        let result = &closers[0];
        assert_eq!(result.surface_op, Some(SurfaceOp::Append));
        assert_eq!(result.source_event_seqs, Some(vec![3]));
        assert_eq!(result.surface_key_order, SurfaceKeyOrder::OpFirst);
        assert_eq!(
            result.data["error"],
            json!({"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN})
        );
        let text = result.data["message"]["content"][0]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(text.contains("retry only if the operation is read-only or idempotent"));
        assert!(text.contains("first verify external state or ask the user"));
        let line = to_js_string(result);
        assert!(
            line.ends_with(r#""surfaceOp":"append","sourceEventSeqs":[3]}"#),
            "{line}"
        );
    }

    #[test]
    fn a_tool_call_without_an_assistant_request_needs_no_answer() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            tool_call(1, 1, 2, "orphan"),
        ];
        assert_eq!(
            kinds(&interrupted_turn_closers(&events)),
            ["step/end", "turn/end"]
        );
    }

    #[test]
    fn closers_round_trip_through_the_envelope_parser() {
        let events = [
            turn_start(1, 0),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            assistant_calls(1, 1, 2, &["a", "b"]),
            tool_call(1, 1, 3, "b"),
        ];
        for closer in interrupted_turn_closers(&events) {
            let line = to_js_string(&closer);
            let Value::Object(map) = serde_json::from_str(&line).unwrap() else {
                panic!()
            };
            assert_eq!(SessionEvent::from_json_map(map).unwrap(), closer, "{line}");
        }
    }

    #[test]
    fn works_over_shared_events_and_reuses_the_last_time() {
        let mut tail = event("plugin/marker", 2, json!({}));
        tail.time = 777;
        let events: Vec<Arc<SessionEvent>> = vec![
            Arc::new(turn_start(1, 0)),
            Arc::new(event("step/start", 1, json!({"turn": 1, "step": 1}))),
            Arc::new(tail),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(seqs(&closers), [3, 4]);
        assert!(closers.iter().all(|closer| closer.time == 777));
    }

    #[test]
    fn reads_payloads_the_way_javascript_does() {
        // A re-requested id keeps its first position; a missing turn is left out of the closers;
        // a numeric call id is named the way JavaScript prints it.
        let events = [
            event("turn/start", 0, json!({})),
            event("step/start", 1, json!({"turn": 1, "step": 1})),
            assistant_calls(1, 1, 2, &["x", "y"]),
            tool_call(1, 1, 3, "x"),
            assistant_calls(1, 1, 4, &["x"]),
            event(
                "assistant/message",
                5,
                json!({"step": 1, "message": {"content": [{"type": "tool-call", "id": 1.0}]}}),
            ),
        ];
        let closers = interrupted_turn_closers(&events);
        assert_eq!(
            kinds(&closers),
            [
                "tool/result",
                "tool/result",
                "tool/result",
                "step/end",
                "turn/end"
            ]
        );
        assert_eq!(
            closers[0].data["message"]["id"],
            "interrupted-tool-result-x-6"
        );
        assert_eq!(
            closers[0].source_event_seqs, None,
            "re-requesting forgets the start"
        );
        assert_eq!(
            closers[2].data["message"]["id"],
            "interrupted-tool-result-1-8"
        );
        assert!(
            closers
                .iter()
                .all(|closer| closer.data.get("turn").is_none())
        );

        // A null turn is no open turn at all.
        assert!(
            interrupted_turn_closers(&[event("turn/start", 0, json!({"turn": null}))]).is_empty()
        );
    }

    #[test]
    fn javascript_strings_of_values() {
        assert_eq!(js_template(None), "undefined");
        assert_eq!(js_template(Some(&json!(null))), "null");
        assert_eq!(js_template(Some(&json!(1.5))), "1.5");
        assert_eq!(js_template(Some(&json!(2.0))), "2");
        assert_eq!(
            js_template(Some(&json!([1, null, [2, "a"], {}]))),
            "1,,2,a,[object Object]"
        );
        assert_eq!(js_number(7), "7");
        assert!(js_strict_eq(Some(&json!(1)), Some(&json!(1.0))));
        assert!(!js_strict_eq(Some(&json!({})), Some(&json!({}))));
        assert!(!js_strict_eq(None, Some(&json!(null))));
    }
}
