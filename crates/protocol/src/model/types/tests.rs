//! The vocabulary's JSON: known and plugin kinds round-trip, keys are written in dsh's order.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::*;

fn round_trip<T: Serialize + for<'de> Deserialize<'de>>(value: Value) -> Value {
    let typed: T = serde_json::from_value(value).unwrap();
    serde_json::to_value(&typed).unwrap()
}

#[test]
fn known_blocks_and_plugin_blocks_round_trip() {
    for value in [
        json!({"type": "text", "text": "hi"}),
        json!({"type": "image", "attachment": {"attachmentId": "sha256:ab"}}),
        json!({"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}], "isError": true}),
        json!({"type": "tool-result", "toolCallId": "c", "content": []}),
        json!({"type": "video", "url": "u"}),
        json!({"type": "text", "text": "hi", "cache": true}),
    ] {
        assert_eq!(round_trip::<ContentBlock>(value.clone()), value);
    }
    assert!(matches!(
        serde_json::from_value::<ContentBlock>(
            json!({"type": "text", "text": "hi", "cache": true})
        )
        .unwrap(),
        ContentBlock::Other(_)
    ));
    let error = serde_json::from_value::<ContentBlock>(json!({"type": "text"})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "content block \"text\" needs a string \"text\""
    );
}

#[test]
fn sources_round_trip_with_their_extra_fields() {
    for value in [
        json!({"kind": "user"}),
        json!({"kind": "model", "provider": "p", "model": "m", "replayState": {"a": 1}}),
        json!({"kind": "tool", "callId": "c"}),
        json!({"kind": "plugin", "plugin": "x", "form": "notice", "summary": "s"}),
        json!({"kind": "compaction", "upTo": 3}),
        json!({"kind": "user", "via": "acp"}),
    ] {
        assert_eq!(round_trip::<MessageSource>(value.clone()), value);
    }
}

#[test]
fn messages_write_keys_in_dsh_constructor_order() {
    let assistant = Message {
        id: "a".into(),
        role: Role::Assistant,
        content: vec![ContentBlock::text("t")],
        source: MessageSource::model("p", "m"),
    };
    assert_eq!(
        serde_json::to_string(&assistant).unwrap(),
        r#"{"role":"assistant","content":[{"type":"text","text":"t"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}"#
    );
    let mut result = Message::tool_result("c1", vec![ContentBlock::text("ok")], false);
    result.id = "r".into();
    assert_eq!(
        serde_json::to_string(&result).unwrap(),
        r#"{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}],"isError":false}],"role":"user","id":"r"}"#
    );
}

#[test]
fn finish_reasons() {
    for value in [
        json!({"kind": "stop"}),
        json!({"kind": "error", "failure": {"message": "m", "code": "SERVER", "status": 500}}),
        json!({"kind": "content-filter"}),
    ] {
        assert_eq!(round_trip::<FinishReason>(value.clone()), value);
    }
}

#[test]
fn token_deltas() {
    assert!(
        StreamChunk::TextDelta {
            index: 0,
            text: "a".into()
        }
        .is_token_delta()
    );
    assert!(
        !StreamChunk::TextDelta {
            index: 0,
            text: String::new()
        }
        .is_token_delta()
    );
    assert!(
        StreamChunk::ToolCallDelta {
            index: 0,
            id: "c".into(),
            name: Some("n".into()),
            arguments_delta: String::new()
        }
        .is_token_delta()
    );
    assert!(!StreamChunk::finish(FinishReason::Stop).is_token_delta());
}
