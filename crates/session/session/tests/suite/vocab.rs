//! The typed views: messages keep their extra fields, core events read as types.

use dsh_protocol::json::to_js_string;
use dsh_session::SessionEvent;
use dsh_session::vocab::{
    AbortCause, ContentBlock, CoreEvent, Message, MessageSource, TurnEndReason,
};
use serde::Deserialize;
use serde_json::json;

#[test]
fn messages_round_trip_with_their_extra_fields() {
    // In the key order dsh's constructors write (the order the view writes back).
    let value = json!({
        "role": "assistant",
        "content": [{"type": "text", "text": "hi"}, {"type": "plugin-x", "z": 1},
                    {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}],
        "source": {"kind": "model", "provider": "deepseek", "model": "m", "replayState": {"a": 1}},
        "id": "m1"
    });
    let message = Message::deserialize(&value).unwrap();
    assert!(matches!(
        &message.source,
        MessageSource::Model { provider, .. } if provider == "deepseek"
    ));
    assert!(matches!(
        message.content.get(1),
        Some(ContentBlock::Other(_))
    ));
    assert_eq!(to_js_string(&message), to_js_string(&value));
}

#[test]
fn core_events_read_as_types() {
    let end = SessionEvent::new(
        "turn/end",
        3,
        0,
        json!({"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "hook", "reason": "no"}}}),
    );
    let Some(Ok(CoreEvent::TurnEnd { turn: 1, reason })) = CoreEvent::read(&end) else {
        panic!("not a turn end");
    };
    assert_eq!(
        reason,
        TurnEndReason::Aborted {
            reason: AbortCause::Hook {
                reason: "no".into()
            }
        }
    );
    let chunk = SessionEvent::new(
        "assistant/chunk",
        4,
        0,
        json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "{"}}),
    );
    assert!(matches!(
        CoreEvent::read(&chunk),
        Some(Ok(CoreEvent::AssistantChunk { .. }))
    ));
    let finish = SessionEvent::new(
        "assistant/chunk",
        5,
        0,
        json!({"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}),
    );
    assert!(
        matches!(
            CoreEvent::read(&finish),
            Some(Ok(CoreEvent::AssistantChunk { .. }))
        ),
        "a real finish chunk reads"
    );
    assert!(CoreEvent::read(&SessionEvent::new("goal/change", 5, 0, json!({}))).is_none());
    let bad = SessionEvent::new("turn/start", 6, 0, json!({"turn": "x"}));
    assert!(
        CoreEvent::read(&bad)
            .unwrap()
            .unwrap_err()
            .to_string()
            .contains("event 6 (turn/start)")
    );
}
