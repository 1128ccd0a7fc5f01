//! Tool-pairing balance and range selection over a live `Session`.

use dsh_compaction::{
    PricedNode, SurfaceSpan, ToolPairing, ToolPairingCache, ToolPairingError,
    select_compactable_range,
};
use dsh_session::{Session, SessionHeader, SurfaceIntent};
use serde_json::{Value, json};

fn user(text: &str) -> Value {
    json!({"id": text, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}})
}

fn assistant(calls: &[&str]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(|id| json!({"type": "tool-call", "id": id, "name": "t", "arguments": "{}"}))
        .collect();
    json!({"message": {"id": "a", "role": "assistant", "content": content}})
}

fn result(id: &str) -> Value {
    json!({"message": {"id": id, "role": "tool", "content": [
        {"type": "tool-result", "toolCallId": id, "content": [{"type": "text", "text": "ok"}]}]}})
}

fn session() -> Session {
    let mut session = Session::new(SessionHeader::new("s", 1)).unwrap();
    let append = |session: &mut Session, kind: &str, data: Value| {
        session
            .append_at(kind, data, SurfaceIntent::append(), 1)
            .unwrap();
    };
    append(&mut session, "user/message", user("hi"));
    append(&mut session, "assistant/message", assistant(&["a", "b"]));
    // A log-only event between results is not on the surface.
    session
        .append_at(
            "turn/start",
            json!({"turn": 1}),
            SurfaceIntent {
                op: None,
                source_event_seqs: None,
            },
            1,
        )
        .unwrap();
    append(&mut session, "tool/result", result("a"));
    append(&mut session, "tool/result", result("b"));
    append(&mut session, "user/message", user("next"));
    session
}

#[test]
fn balance_over_a_session_surface() {
    let session = session();
    assert_eq!(session.surface().nodes(), &[0, 1, 3, 4, 5]);
    let pairing = ToolPairing::of_session(&session).unwrap();
    assert_eq!(pairing.cuts(), &[true, true, false, false, true, true]);
    assert_eq!(pairing.balanced_before(3), Ok(false));
    assert_eq!(pairing.balanced_after(4), Ok(true));
    assert_eq!(
        pairing.balanced_before(2),
        Err(ToolPairingError::NotFound(2))
    );
    let mut cache = ToolPairingCache::new();
    assert_eq!(cache.sync_session(&session).unwrap(), &pairing);
}

#[test]
fn selection_over_a_session_surface() {
    let session = session();
    let nodes = session.surface().nodes();
    let pairing = ToolPairing::of_session(&session).unwrap();
    let priced: Vec<PricedNode> = nodes
        .iter()
        .map(|&seq| PricedNode { seq, tokens: 10 })
        .collect();
    // Retaining 25 tokens wants the cut before seq 3, inside the pair: it moves to seq 1.
    let range = select_compactable_range(&priced, nodes, &pairing, 25)
        .unwrap()
        .unwrap();
    assert_eq!(range.span, SurfaceSpan { start: 0, end: 0 });
    assert_eq!(range.keep_from, 1);
    // Retaining nothing keeps the newest node.
    let range = select_compactable_range(&priced, nodes, &pairing, 0)
        .unwrap()
        .unwrap();
    assert_eq!(range.span, SurfaceSpan { start: 0, end: 4 });
}
