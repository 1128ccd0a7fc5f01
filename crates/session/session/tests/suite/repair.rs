//! Crash closers: what dsh 0.1 appends to close a turn a crash left open, byte for byte.

use std::sync::Arc;

use dsh_protocol::json::to_js_string;
use dsh_session::repair::{
    NOT_STARTED_TEXT, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, interrupted_turn_closers,
};
use dsh_session::{SessionEvent, SurfaceKeyOrder, SurfaceOp};
use serde_json::{Value, json};

fn event(kind: &str, seq: u64, data: Value) -> SessionEvent {
    SessionEvent::new(kind, seq, seq as i64, data)
}

fn turn_start(turn: u64, seq: u64) -> SessionEvent {
    event("turn/start", seq, json!({ "turn": turn }))
}

fn assistant_calls(turn: u64, step: u64, seq: u64, ids: &[&str]) -> SessionEvent {
    let mut content = vec![json!({"type": "text", "text": "calling a tool"})];
    content.extend(
        ids.iter()
            .map(|id| json!({"type": "tool-call", "id": id, "name": "bash", "arguments": "{}"})),
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
    assert!(interrupted_turn_closers(&[event("turn/start", 0, json!({"turn": null}))]).is_empty());
}
