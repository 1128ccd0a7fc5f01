//! The relational invariants: well-formed turns pass, each broken relation is refused with
//! dsh 0.1's text and leaves the trace unchanged.

use dsh_session::event::is_surface_type;
use dsh_session::invariant::{InvariantChecker, InvariantError};
use dsh_session::repair::{TOOL_NOT_STARTED, interrupted_turn_closers};
use dsh_session::{SessionEvent, SurfaceOp};
use serde_json::{Value, json};

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
        if is_surface_type(kind) {
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
                assert!(error.starts_with("invariant violated by \"@deepseek-ai/dsh-session\": "));
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
        .ok(
            "assistant/chunk",
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "h"}}),
        )
        .ok(
            "assistant/message",
            assistant(
                1,
                1,
                json!([{"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"}]),
            ),
        )
        .ok("tool/call", tool_call(1, 1, "c1"))
        .ok("tool/result", tool_result(1, 1, "c1", false))
        .ok("step/end", json!({"turn": 1, "step": 1}))
        .ok(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        );
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
    event.data["message"]["content"][0]["content"] = json!([{"type": "text", "text": "pruned"}]);
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
    // No turn is open: a `turn/end` now finds the open turn empty (`null`).
    let end = log.next(
        "turn/end",
        json!({"turn": 1, "reason": {"kind": "completed"}}),
    );
    assert_eq!(
        log.checker.validate(&end).unwrap_err().message,
        "turn/end 1 does not match open turn null"
    );
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
