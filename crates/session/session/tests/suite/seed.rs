//! Seed checks: retired shapes and malformed messages or request headers are refused.

use dsh_session::SessionEvent;
use dsh_session::seed::{check_not_retired, check_seed_event};
use serde_json::{Value, json};

fn event(kind: &str, data: Value) -> SessionEvent {
    SessionEvent::new(kind, 0, 0, data)
}

#[test]
fn retired_shapes_are_refused() {
    assert!(check_not_retired("request/header-delta", &json!({}).into()).is_err());
    assert!(check_not_retired("mode/set", &json!({}).into()).is_err());
    assert!(check_not_retired("request/header", &json!({"reason": "fallback"}).into()).is_err());
    assert!(check_not_retired("request/header", &json!({"reason": "initial"}).into()).is_ok());
}

#[test]
fn message_shapes_are_checked() {
    let user = json!({"id": "u", "role": "user", "content": [], "source": {"kind": "user"}});
    assert!(check_seed_event(&event("user/message", user)).is_ok());
    let assistant = json!({"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant",
        "content": [], "source": {"kind": "model", "provider": "p", "model": ""}}});
    assert!(check_seed_event(&event("assistant/message", assistant)).is_err());
    let result = json!({"turn": 1, "step": 1, "message": {"id": "r", "role": "user",
        "content": [{"type": "tool-result", "toolCallId": "c", "content": []}],
        "source": {"kind": "tool", "callId": "c"}}});
    assert!(check_seed_event(&event("tool/result", result)).is_ok());
    let mismatched = json!({"turn": 1, "step": 1, "message": {"id": "r", "role": "user",
        "content": [{"type": "tool-result", "toolCallId": "d", "content": []}],
        "source": {"kind": "tool", "callId": "c"}}});
    assert!(check_seed_event(&event("tool/result", mismatched)).is_err());
}

#[test]
fn request_headers_need_provider_and_model() {
    let good = json!({"header": {"config": {"provider": "p", "model": "m", "maxTokens": 5},
        "adapterDefaults": {"maxTokens": true}}, "reason": "initial"});
    assert!(check_seed_event(&event("request/header", good)).is_ok());
    let bad = json!({"header": {"config": {"provider": "p", "model": "m"},
        "adapterDefaults": {"maxTokens": true}}, "reason": "initial"});
    assert!(check_seed_event(&event("request/header", bad)).is_err());
}
