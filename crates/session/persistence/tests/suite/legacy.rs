//! Legacy upgrades: old shapes take their current form as dsh writes them; retired ones are
//! refused with dsh's text.

use std::borrow::Cow;

use dsh_persistence::legacy::normalize_stored_events;
use dsh_protocol::json::to_js_string;
use dsh_session::SessionEvent;
use serde_json::{Value, json};

/// Parses JSONL lines into events.
fn events(lines: &[&str]) -> Vec<SessionEvent> {
    lines
        .iter()
        .map(|line| {
            let Value::Object(map) = serde_json::from_str(line).unwrap() else {
                panic!("not an object: {line}")
            };
            SessionEvent::from_json_map(map).unwrap()
        })
        .collect()
}

/// Normalizes `lines` and prints them back.
fn normalized(id: &str, lines: &[&str]) -> Vec<String> {
    let mut log = events(lines);
    normalize_stored_events(id, &mut log).unwrap();
    log.iter().map(to_js_string).collect()
}

/// The error for `lines`.
fn refusal(id: &str, lines: &[&str]) -> String {
    normalize_stored_events(id, &mut events(lines)).unwrap_err()
}

fn one(line: &str) -> String {
    normalized("s", &[line]).remove(0)
}

/// dsh's `eventMessageId`: the string `id` of a `user/message`'s data, or of any other event's
/// `data.message`.
fn event_message_id(event: &SessionEvent) -> Option<&str> {
    let data = event.data.as_object();
    let message = if event.kind == "user/message" {
        data
    } else {
        data?.get("message")?.as_object()
    };
    message?.get("id")?.as_str()
}

#[test]
fn retired_event_types_are_refused() {
    assert_eq!(
        refusal(
            "legacy-header-delta",
            &[
                r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
                r#"{"type":"request/header-delta","seq":1,"time":2,"data":{"config":{"model":"legacy"}}}"#,
            ]
        ),
        r#"session "legacy-header-delta" contains unsupported legacy request/header-delta event at seq 1"#
    );
    assert_eq!(
        refusal(
            "legacy-mode-load",
            &[r#"{"type":"mode/set","seq":0,"time":1,"data":{"mode":"plan"}}"#]
        ),
        r#"session "legacy-mode-load" contains unsupported legacy mode/set event at seq 0"#
    );
    assert_eq!(
        refusal(
            "legacy-fallback-load",
            &[
                r#"{"type":"request/header","seq":0,"time":1,"data":{"header":{"config":{"model":"legacy"}},"reason":"fallback"}}"#
            ]
        ),
        r#"session "legacy-fallback-load" contains unsupported legacy request/header reason "fallback" at seq 0"#
    );
}

#[test]
fn retired_types_are_checked_one_kind_at_a_time_before_any_upgrade() {
    // A malformed legacy event earlier in the log does not hide a retired type.
    let log = [
        r#"{"type":"turn/end","seq":0,"time":1,"data":{"turn":0,"reason":null}}"#,
        r#"{"type":"request/header","seq":1,"time":1,"data":{"reason":"fallback"}}"#,
        r#"{"type":"mode/set","seq":2,"time":1,"data":{}}"#,
        r#"{"type":"request/header-delta","seq":3,"time":1,"data":{}}"#,
    ];
    assert!(refusal("s", &log).ends_with("legacy request/header-delta event at seq 3"));
    assert!(refusal("s", &log[..3]).ends_with("legacy mode/set event at seq 2"));
    assert!(refusal("s", &log[..2]).ends_with("reason \"fallback\" at seq 1"));
    assert!(refusal("s", &log[..1]).ends_with("malformed pre-react-loop turn/end at seq 0"));
    // Other header reasons pass; a `null` header payload fails as dsh's unguarded read does.
    one(r#"{"type":"request/header","seq":0,"time":1,"data":{"reason":"initial"}}"#);
    one(r#"{"type":"request/header","seq":0,"time":1,"data":[1]}"#);
    assert_eq!(
        refusal(
            "s",
            &[
                r#"{"type":"request/header","seq":0,"time":1,"data":null}"#,
                r#"{"type":"request/header","seq":1,"time":1,"data":{"reason":"fallback"}}"#,
            ]
        ),
        "Cannot read properties of null (reading 'reason')"
    );
}

#[test]
fn turn_start_drops_its_trigger() {
    assert_eq!(
        one(
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"trigger":{"kind":"retry"},"turn":2}}"#
        ),
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":2}}"#
    );
    assert_eq!(
        one(
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#
        ),
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#
    );
}

#[test]
fn malformed_turn_starts_are_refused() {
    for data in [
        r#"{"turn":1,"trigger":null}"#,
        r#"{"turn":1,"trigger":{}}"#,
        r#"{"turn":1,"trigger":{"kind":""}}"#,
        r#"{"turn":1,"trigger":{"kind":3}}"#,
        r#"{"turn":1,"trigger":[]}"#,
        r#"{"turn":0,"trigger":{"kind":"retry"}}"#,
        r#"{"turn":1.5,"trigger":{"kind":"retry"}}"#,
        r#"{"turn":"1","trigger":{"kind":"retry"}}"#,
        r#"{"turn":9007199254740992,"trigger":{"kind":"retry"}}"#,
        r#"{"trigger":{"kind":"retry"}}"#,
        r#"{"turn":1,"trigger":{"kind":"retry"},"extra":true}"#,
    ] {
        let line = format!(r#"{{"type":"turn/start","seq":7,"time":1,"data":{data}}}"#);
        assert_eq!(
            refusal("invalid-old-turn-start", &[&line]),
            r#"session "invalid-old-turn-start" contains malformed pre-react-loop turn/start at seq 7"#,
            "{data}"
        );
    }
    // Without a trigger the event is current and left to validation.
    for data in [r#"{"turn":0}"#, r#"{"turn":1,"extra":true}"#, "null", "[1]"] {
        let line = format!(r#"{{"type":"turn/start","seq":0,"time":1,"data":{data}}}"#);
        assert_eq!(one(&line), line);
    }
}

#[test]
fn turn_end_reasons_take_their_current_form() {
    let end = |data: &str| format!(r#"{{"type":"turn/end","seq":5,"time":6,"data":{data}}}"#);
    for (old, new) in [
        (
            r#"{"turn":3,"reason":{"kind":"aborted"}}"#,
            r#"{"turn":3,"reason":{"kind":"aborted","reason":{"kind":"legacy"}}}"#,
        ),
        (
            r#"{"reason":{"kind":"disposed"},"turn":4}"#,
            r#"{"reason":{"kind":"aborted","reason":{"kind":"disposed"}},"turn":4}"#,
        ),
        (
            r#"{"turn":2,"reason":{"kind":"error","step":1,"failure":{"message":"old provider failure","code":"SERVER"}}}"#,
            r#"{"turn":2,"reason":{"kind":"error","error":{"message":"old provider failure","code":"SERVER"}}}"#,
        ),
        (
            r#"{"turn":5,"reason":{"step":1,"message":"old thrown value","kind":"error"}}"#,
            r#"{"turn":5,"reason":{"kind":"error","error":{"message":"old thrown value","code":"UNKNOWN"}}}"#,
        ),
        (
            r#"{"turn":6,"reason":{"kind":"error","step":0,"failure":{"code":"RATE_LIMIT","requestId":"request-1","message":"old detailed provider failure","status":429,"providerRetryAfterMs":1000}}}"#,
            r#"{"turn":6,"reason":{"kind":"error","error":{"code":"RATE_LIMIT","requestId":"request-1","message":"old detailed provider failure","status":429,"providerRetryAfterMs":1000}}}"#,
        ),
        (
            r#"{"turn":7,"reason":{"kind":"error","step":0,"message":"old coded error","code":"CODED"}}"#,
            r#"{"turn":7,"reason":{"kind":"error","error":{"message":"old coded error","code":"CODED"}}}"#,
        ),
        // A `failure` key rules out the message form, so a failure that does not fit fails.
        (
            r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"m","failure":3}}"#,
            "",
        ),
        // `-0` is a safe integer that is not below 0, as in JavaScript.
        (
            r#"{"turn":1,"reason":{"kind":"error","step":-0,"message":"m"}}"#,
            r#"{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"UNKNOWN"}}}"#,
        ),
    ] {
        if new.is_empty() {
            assert!(refusal("s", &[&end(old)]).contains("malformed"), "{old}");
        } else {
            assert_eq!(one(&end(old)), end(new), "{old}");
        }
    }
}

#[test]
fn current_and_unknown_turn_end_reasons_stay_as_they_are() {
    for data in [
        r#"{"turn":1,"reason":{"kind":"completed"}}"#,
        r#"{"turn":1,"reason":{"kind":"blocked"}}"#,
        r#"{"turn":1,"reason":{"kind":"max-tokens"}}"#,
        r#"{"reason":{"kind":"interrupted"},"turn":1}"#,
        r#"{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}"#,
        r#"{"turn":1,"reason":{"reason":{"kind":"signal"},"kind":"aborted","x":1}}"#,
        r#"{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"C"}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","error":1,"step":-1}}"#,
        r#"{"turn":1,"reason":{"kind":"extension-reason"}}"#,
        r#"{"turn":1,"reason":{"kind":"extension-reason","extra":[1]}}"#,
        "null",
        "[]",
        r#""text""#,
    ] {
        let line = format!(r#"{{"type":"turn/end","seq":1,"time":2,"data":{data}}}"#);
        assert_eq!(one(&line), line);
    }
}

#[test]
fn malformed_turn_ends_are_refused() {
    for data in [
        r#"{"turn":1,"reason":{"kind":"completed","extra":true}}"#,
        r#"{"turn":1,"reason":null}"#,
        r#"{"turn":1,"reason":[]}"#,
        r#"{"turn":1,"reason":{}}"#,
        r#"{"turn":1,"reason":{"kind":7}}"#,
        r#"{"turn":1}"#,
        r#"{"turn":1,"step":1,"reason":{"kind":"completed"}}"#,
        r#"{"turn":0,"reason":{"kind":"completed"}}"#,
        r#"{"turn":"1","reason":{"kind":"completed"}}"#,
        r#"{"reason":{"kind":"completed"}}"#,
        r#"{"turn":1,"reason":{"kind":"blocked","why":"x"}}"#,
        r#"{"turn":1,"reason":{"kind":"aborted","extra":true}}"#,
        r#"{"turn":1,"reason":{"kind":"disposed","extra":true}}"#,
        r#"{"turn":1,"reason":{"kind":"disposed","reason":{"kind":"x"}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":-1,"message":"bad step"}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":1.5,"message":"m"}}"#,
        r#"{"turn":1,"reason":{"kind":"error","message":"m"}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"bad code","code":1}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"m","code":null}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"message":1}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"m","x":1}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m"}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":"C","status":"429"}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":"C","status":null}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":"C","providerRetryAfterMs":"1"}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":"C","requestId":1}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":"C","x":1}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"failure":{"message":"m","code":1}}}"#,
        r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"m","code":"C","failure":{"message":"m","code":"C"}}}"#,
    ] {
        let line = format!(r#"{{"type":"turn/end","seq":5,"time":1,"data":{data}}}"#);
        assert_eq!(
            refusal("invalid-old-turn-end", &[&line]),
            r#"session "invalid-old-turn-end" contains malformed pre-react-loop turn/end at seq 5"#,
            "{data}"
        );
    }
}

#[test]
fn wrapped_steering_becomes_the_user_message_it_carries() {
    assert_eq!(
        one(
            r#"{"type":"steering/message","seq":3,"time":4,"data":{"message":{"id":"m-1","role":"user","content":[{"type":"text","text":"old steering"}],"source":{"kind":"user"}},"turn":1},"surfaceOp":"append"}"#
        ),
        r#"{"type":"user/message","seq":3,"time":4,"data":{"id":"m-1","role":"user","content":[{"type":"text","text":"old steering"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#
    );
}

#[test]
fn flat_steering_gains_an_identity() {
    let event = events(&[
        r#"{"type":"steering/message","seq":0,"time":1,"data":{"source":{"kind":"user"},"turn":1,"content":[{"type":"text","text":"flat steering"}]},"surfaceOp":"append","sourceEventSeqs":[]}"#,
    ])
    .remove(0);
    let mut log = vec![event.clone()];
    normalize_stored_events("pre-react-loop-flat-steering", &mut log).unwrap();
    let [migrated] = &log[..] else { unreachable!() };
    assert_eq!(migrated.kind, "user/message");
    assert!(matches!(migrated.kind, Cow::Borrowed(_)));
    assert_eq!(
        to_js_string(migrated),
        r#"{"type":"user/message","seq":0,"time":1,"data":{"source":{"kind":"user"},"content":[{"type":"text","text":"flat steering"}],"id":"legacy-message:pre-react-loop-flat-steering:0","role":"user"},"surfaceOp":"append","sourceEventSeqs":[]}"#
    );
    // The envelope keeps its fields and their order.
    assert_eq!(migrated.surface_op, event.surface_op);
    assert_eq!(migrated.surface_key_order, event.surface_key_order);
    assert_eq!(migrated.source_event_seqs, event.source_event_seqs);
}

#[test]
fn malformed_steering_is_refused() {
    for data in [
        r#"{"turn":1,"content":[],"source":{"kind":"user"},"extra":true}"#,
        "null",
        "[]",
        r#""text""#,
        r#"{"turn":1,"content":[]}"#,
        r#"{"content":[],"source":{"kind":"user"}}"#,
        r#"{"turn":"1","content":[],"source":{"kind":"user"}}"#,
        r#"{"turn":1,"message":null}"#,
        r#"{"turn":1,"message":[]}"#,
        r#"{"message":{"id":"m"}}"#,
        r#"{"turn":1,"message":{"id":"m"},"extra":1}"#,
        r#"{"turn":1,"message":{"id":"m"},"content":[],"source":{}}"#,
    ] {
        let line = format!(
            r#"{{"type":"steering/message","seq":0,"time":1,"data":{data},"surfaceOp":"append"}}"#
        );
        assert_eq!(
            refusal("invalid-old-steering", &[&line]),
            r#"session "invalid-old-steering" contains malformed pre-react-loop steering/message at seq 0"#,
            "{data}"
        );
    }
    // Any safe integer turn is accepted, as dsh checks no bound here.
    let line = r#"{"type":"steering/message","seq":0,"time":1,"data":{"turn":-4,"content":[],"source":{}},"surfaceOp":"append"}"#;
    assert!(
        one(line).contains(
            r#""data":{"content":[],"source":{},"id":"legacy-message:s:0","role":"user"}"#
        )
    );
}

#[test]
fn wrapped_steering_without_an_identity_is_then_upgraded_as_a_message() {
    assert_eq!(
        one(
            r#"{"type":"steering/message","seq":2,"time":1,"data":{"turn":1,"message":{"content":[],"source":{"kind":"user"}}},"surfaceOp":"append"}"#
        ),
        r#"{"type":"user/message","seq":2,"time":1,"data":{"content":[],"source":{"kind":"user"},"id":"legacy-message:s:2","role":"user"},"surfaceOp":"append"}"#
    );
}

#[test]
fn pre_identity_user_messages_gain_id_and_role() {
    assert_eq!(
        one(
            r#"{"type":"user/message","seq":1,"time":2,"data":{"source":{"kind":"user"},"content":[{"type":"text","text":"hi"}],"extra":1},"surfaceOp":"append"}"#
        ),
        r#"{"type":"user/message","seq":1,"time":2,"data":{"source":{"kind":"user"},"content":[{"type":"text","text":"hi"}],"extra":1,"id":"legacy-message:s:1","role":"user"},"surfaceOp":"append"}"#
    );
    // Current or current-looking malformed messages are left to validation.
    for data in [
        r#"{"id":"m","role":"user","content":[],"source":{"kind":"user"}}"#,
        r#"{"id":"wrong-role","role":"assistant","content":[],"source":{"kind":"user"}}"#,
        r#"{"role":"user","content":[],"source":{}}"#,
        r#"{"message":{},"content":[],"source":{}}"#,
        r#"{"content":[]}"#,
        r#"{"source":{}}"#,
        "{}",
        "null",
    ] {
        let line = format!(
            r#"{{"type":"user/message","seq":0,"time":1,"data":{data},"surfaceOp":"append"}}"#
        );
        assert_eq!(one(&line), line);
    }
}

#[test]
fn pre_identity_assistant_messages_are_wrapped() {
    assert_eq!(
        one(
            r#"{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"content":[{"type":"text","text":"a"}],"step":1,"provenance":{"kind":"old","provider":"mock","model":"mock"}},"surfaceOp":"append"}"#
        ),
        r#"{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"message":{"id":"legacy-message:s:3","role":"assistant","content":[{"type":"text","text":"a"}],"source":{"kind":"model","provider":"mock","model":"mock"}}},"surfaceOp":"append"}"#
    );
    // A provenance that is not a record spreads nothing.
    for provenance in ["null", "[1]", r#""mock""#] {
        let line = format!(
            r#"{{"type":"assistant/message","seq":0,"time":1,"data":{{"content":"c","provenance":{provenance}}},"surfaceOp":"append"}}"#
        );
        assert!(
            one(&line).contains(
                r#""data":{"message":{"id":"legacy-message:s:0","role":"assistant","content":"c","source":{"kind":"model"}}}"#
            ),
            "{provenance}"
        );
    }
    for data in [
        r#"{"message":{"id":"m"},"content":[],"provenance":{}}"#,
        r#"{"content":[]}"#,
        r#"{"provenance":{}}"#,
        "{}",
    ] {
        let line = format!(
            r#"{{"type":"assistant/message","seq":0,"time":1,"data":{data},"surfaceOp":"append"}}"#
        );
        assert_eq!(one(&line), line);
    }
}

#[test]
fn pre_identity_tool_results_are_wrapped() {
    assert_eq!(
        one(
            r#"{"type":"tool/result","seq":5,"time":6,"data":{"isError":false,"turn":1,"callId":"call-1","step":1,"content":[{"type":"text","text":"r"}]},"surfaceOp":"append","sourceEventSeqs":[4]}"#
        ),
        r#"{"type":"tool/result","seq":5,"time":6,"data":{"turn":1,"step":1,"message":{"id":"legacy-message:s:5","role":"user","content":[{"type":"tool-result","toolCallId":"call-1","content":[{"type":"text","text":"r"}],"isError":false}],"source":{"kind":"tool","callId":"call-1"}}},"surfaceOp":"append","sourceEventSeqs":[4]}"#
    );
    for data in [
        r#"{"message":null,"callId":"c","content":[],"isError":false}"#,
        r#"{"callId":"c","content":[]}"#,
        r#"{"callId":"c","isError":true}"#,
        r#"{"content":[],"isError":true}"#,
    ] {
        let line = format!(
            r#"{{"type":"tool/result","seq":0,"time":1,"data":{data},"surfaceOp":"append"}}"#
        );
        assert_eq!(one(&line), line);
    }
}

#[test]
fn replacing_tool_results_inherit_the_replaced_message_id() {
    let out = normalized(
        "s",
        &[
            r#"{"type":"tool/result","seq":0,"time":1,"data":{"message":{"id":"kept"}},"surfaceOp":"append"}"#,
            r#"{"type":"tool/result","seq":1,"time":1,"data":{"callId":"c","content":"x","isError":true},"sourceEventSeqs":[0],"surfaceOp":{"op":"replace","start":0,"end":0}}"#,
            r#"{"type":"turn/start","seq":2,"time":1,"data":{"turn":1}}"#,
            r#"{"type":"tool/result","seq":3,"time":1,"data":{"callId":"c","content":"y","isError":false},"surfaceOp":{"op":"replace","start":2,"end":2}}"#,
            r#"{"type":"tool/result","seq":4,"time":1,"data":{"callId":"c","content":"z","isError":false},"surfaceOp":{"op":"replace","start":1,"end":1},"sourceEventSeqs":[1]}"#,
            r#"{"type":"tool/result","seq":5,"time":1,"data":{"callId":"c","content":"w","isError":false},"surfaceOp":{"op":"replace","start":6,"end":6}}"#,
            r#"{"type":"user/message","seq":6,"time":1,"data":{"content":[],"source":{}},"surfaceOp":"append"}"#,
        ],
    );
    assert_eq!(
        out[1],
        r#"{"type":"tool/result","seq":1,"time":1,"data":{"message":{"id":"kept","role":"user","content":[{"type":"tool-result","toolCallId":"c","content":"x","isError":true}],"source":{"kind":"tool","callId":"c"}}},"sourceEventSeqs":[0],"surfaceOp":{"op":"replace","start":0,"end":0}}"#
    );
    // The replaced event carries no id, so `id: undefined` is dropped from the JSON.
    assert_eq!(
        out[3],
        r#"{"type":"tool/result","seq":3,"time":1,"data":{"message":{"role":"user","content":[{"type":"tool-result","toolCallId":"c","content":"y","isError":false}],"source":{"kind":"tool","callId":"c"}}},"surfaceOp":{"op":"replace","start":2,"end":2}}"#
    );
    // The id of an upgraded replacement is inherited in turn; a later seq is not known yet.
    assert!(out[4].contains(r#""message":{"id":"kept","role":"user""#));
    assert!(out[5].contains(r#""message":{"role":"user""#));
}

#[test]
fn the_latest_event_with_an_id_at_the_replaced_seq_wins() {
    let mut log = events(&[
        r#"{"type":"user/message","seq":0,"time":1,"data":{"id":"first"},"surfaceOp":"append"}"#,
        r#"{"type":"user/message","seq":0,"time":1,"data":{"id":"second"},"surfaceOp":"append"}"#,
        r#"{"type":"user/message","seq":0,"time":1,"data":{"id":3},"surfaceOp":"append"}"#,
        r#"{"type":"tool/result","seq":3,"time":1,"data":{"callId":"c","content":"y","isError":false},"surfaceOp":{"op":"replace","start":0,"end":0}}"#,
    ]);
    normalize_stored_events("s", &mut log).unwrap();
    assert_eq!(log[3].data["message"]["id"], "second");
    // Any event type's `data.message.id` counts, as in dsh's `eventMessageId`.
    let mut log = events(&[
        r#"{"type":"x/y","seq":0,"time":1,"data":{"message":{"id":"plugin"}},"ignorable":true}"#,
        r#"{"type":"tool/result","seq":1,"time":1,"data":{"callId":"c","content":"y","isError":false},"surfaceOp":{"op":"replace","start":0,"end":0}}"#,
    ]);
    normalize_stored_events("s", &mut log).unwrap();
    assert_eq!(log[1].data["message"]["id"], "plugin");
}

/// dsh's `legacyMessageLog` contract case.
#[test]
fn a_pre_identity_log_gets_stable_identities() {
    let id = "legacy-message-load";
    let mut log = events(&[
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
        r#"{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","id":"call-1","name":"read","arguments":"{}"}],"provenance":{"provider":"mock","model":"mock"}},"surfaceOp":"append"}"#,
        r#"{"type":"tool/call","seq":4,"time":5,"data":{"turn":1,"step":1,"callId":"call-1","name":"read","arguments":"{}"}}"#,
        r#"{"type":"tool/result","seq":5,"time":6,"data":{"turn":1,"step":1,"callId":"call-1","content":[{"type":"text","text":"full result"}],"isError":false},"sourceEventSeqs":[4],"surfaceOp":"append"}"#,
        r#"{"type":"tool/result","seq":6,"time":8,"data":{"turn":1,"step":1,"callId":"call-1","content":[{"type":"text","text":"pruned"}],"isError":false},"sourceEventSeqs":[5],"surfaceOp":{"op":"replace","start":5,"end":5}}"#,
        r#"{"type":"step/end","seq":7,"time":9,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"turn/end","seq":8,"time":10,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
    ]);
    normalize_stored_events(id, &mut log).unwrap();
    let ids: Vec<&str> = log.iter().filter_map(event_message_id).collect();
    assert_eq!(
        ids,
        [
            "legacy-message:legacy-message-load:1",
            "legacy-message:legacy-message-load:3",
            "legacy-message:legacy-message-load:5",
            "legacy-message:legacy-message-load:5",
        ]
    );
    assert_eq!(
        to_js_string(&log[6]),
        r#"{"type":"tool/result","seq":6,"time":8,"data":{"turn":1,"step":1,"message":{"id":"legacy-message:legacy-message-load:5","role":"user","content":[{"type":"tool-result","toolCallId":"call-1","content":[{"type":"text","text":"pruned"}],"isError":false}],"source":{"kind":"tool","callId":"call-1"}}},"sourceEventSeqs":[5],"surfaceOp":{"op":"replace","start":5,"end":5}}"#
    );
    // Normalizing again changes nothing: the upgraded log is current.
    let once: Vec<String> = log.iter().map(to_js_string).collect();
    normalize_stored_events(id, &mut log).unwrap();
    assert_eq!(log.iter().map(to_js_string).collect::<Vec<_>>(), once);
}

/// dsh's `preReactLoopLog` contract case.
#[test]
fn a_pre_react_loop_log_reads_as_current() {
    let mut log = events(&[
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"user/message","seq":1,"time":2,"data":{"id":"prompt-id","role":"user","content":[{"type":"text","text":"old prompt"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
        r#"{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"steering/message","seq":3,"time":4,"data":{"turn":1,"message":{"id":"steering-id","role":"user","content":[{"type":"text","text":"old steering"}],"source":{"kind":"user"}}},"surfaceOp":"append"}"#,
        r#"{"type":"step/end","seq":4,"time":5,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"turn/end","seq":5,"time":6,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
        r#"{"type":"turn/start","seq":6,"time":7,"data":{"turn":2,"trigger":{"kind":"retry"}}}"#,
        r#"{"type":"step/start","seq":7,"time":8,"data":{"turn":2,"step":1}}"#,
        r#"{"type":"step/end","seq":8,"time":9,"data":{"turn":2,"step":1}}"#,
        r#"{"type":"turn/end","seq":9,"time":10,"data":{"turn":2,"reason":{"kind":"error","step":1,"failure":{"message":"old provider failure","code":"SERVER"}}}}"#,
        r#"{"type":"turn/start","seq":10,"time":11,"data":{"turn":3,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"turn/end","seq":11,"time":12,"data":{"turn":3,"reason":{"kind":"aborted"}}}"#,
        r#"{"type":"turn/start","seq":12,"time":13,"data":{"turn":4,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"turn/end","seq":13,"time":14,"data":{"turn":4,"reason":{"kind":"disposed"}}}"#,
        r#"{"type":"turn/start","seq":14,"time":15,"data":{"turn":5,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"step/start","seq":15,"time":16,"data":{"turn":5,"step":1}}"#,
        r#"{"type":"step/end","seq":16,"time":17,"data":{"turn":5,"step":1}}"#,
        r#"{"type":"turn/end","seq":17,"time":18,"data":{"turn":5,"reason":{"kind":"error","step":1,"message":"old thrown value"}}}"#,
        r#"{"type":"turn/start","seq":18,"time":19,"data":{"turn":6,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"turn/end","seq":19,"time":20,"data":{"turn":6,"reason":{"kind":"error","step":0,"failure":{"message":"old detailed provider failure","code":"RATE_LIMIT","status":429,"providerRetryAfterMs":1000,"requestId":"request-1"}}}}"#,
        r#"{"type":"turn/start","seq":20,"time":21,"data":{"turn":7,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"turn/end","seq":21,"time":22,"data":{"turn":7,"reason":{"kind":"error","step":0,"message":"old coded error","code":"CODED"}}}"#,
    ]);
    normalize_stored_events("pre-react-loop-load", &mut log).unwrap();
    assert!(log.iter().all(|event| event.kind != "steering/message"));
    let data_of = |kind: &str| -> Vec<Value> {
        log.iter()
            .filter(|event| event.kind == kind)
            .map(|event| event.data.value().clone())
            .collect()
    };
    assert_eq!(
        data_of("turn/start"),
        (1..=7)
            .map(|turn| json!({ "turn": turn }))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        data_of("turn/end"),
        [
            json!({"turn": 1, "reason": {"kind": "completed"}}),
            json!({"turn": 2, "reason": {"kind": "error",
                "error": {"message": "old provider failure", "code": "SERVER"}}}),
            json!({"turn": 3, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}),
            json!({"turn": 4, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}),
            json!({"turn": 5, "reason": {"kind": "error",
                "error": {"message": "old thrown value", "code": "UNKNOWN"}}}),
            json!({"turn": 6, "reason": {"kind": "error", "error": {
                "message": "old detailed provider failure", "code": "RATE_LIMIT",
                "status": 429, "providerRetryAfterMs": 1000, "requestId": "request-1"}}}),
            json!({"turn": 7, "reason": {"kind": "error",
                "error": {"message": "old coded error", "code": "CODED"}}}),
        ]
    );
    assert_eq!(
        to_js_string(&log[3]),
        r#"{"type":"user/message","seq":3,"time":4,"data":{"id":"steering-id","role":"user","content":[{"type":"text","text":"old steering"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#
    );
    assert!(
        log.iter()
            .filter(|event| event.kind == "turn/end")
            .all(|event| { !event.data.as_object().unwrap().contains_key("step") })
    );
}

/// dsh's agent-loop `resume.spec.ts` pre-identity case, with flat steering.
#[test]
fn a_pre_identity_log_with_flat_steering_resumes_with_stable_ids() {
    let mut log = events(&[
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}"#,
        r#"{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"old question"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
        r#"{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"old answer"}],"provenance":{"provider":"mock","model":"mock"}},"surfaceOp":"append"}"#,
        r#"{"type":"steering/message","seq":4,"time":5,"data":{"turn":1,"content":[{"type":"text","text":"old steering"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
        r#"{"type":"step/end","seq":5,"time":6,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"turn/end","seq":6,"time":7,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
    ]);
    normalize_stored_events("pre-identity-resume", &mut log).unwrap();
    let messages: Vec<(&str, &str)> = log
        .iter()
        .filter_map(|event| {
            let message = if event.kind == "user/message" {
                &event.data
            } else {
                event.data.get("message")?
            };
            Some((message["id"].as_str()?, message["role"].as_str()?))
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("legacy-message:pre-identity-resume:1", "user"),
            ("legacy-message:pre-identity-resume:3", "assistant"),
            ("legacy-message:pre-identity-resume:4", "user"),
        ]
    );
}

#[test]
fn current_events_are_untouched_byte_for_byte() {
    let lines = [
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"request/header","seq":1,"time":2,"data":{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}}"#,
        r#"{"type":"user/message","seq":2,"time":2,"data":{"source":{"kind":"user"},"id":"u1","content":[{"type":"text","text":"hi"}],"role":"user"},"sourceEventSeqs":[],"surfaceOp":"append"}"#,
        r#"{"type":"step/start","seq":3,"time":3,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"assistant/chunk","seq":4,"time":3,"data":{"turn":1,"step":1,"delta":"x"}}"#,
        r#"{"type":"assistant/message","seq":5,"time":4,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}"#,
        r#"{"type":"tool/call","seq":6,"time":5,"data":{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}}"#,
        r#"{"type":"tool/result","seq":7,"time":6,"data":{"turn":1,"step":1,"message":{"id":"t1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false}],"source":{"kind":"tool","callId":"c1"}}},"surfaceOp":"append","sourceEventSeqs":[6]}"#,
        r#"{"type":"tool/result","seq":8,"time":6,"data":{"message":{"id":"t1","role":"user","content":[],"source":{"kind":"tool","callId":"c1"}}},"sourceEventSeqs":[7],"surfaceOp":{"op":"replace","start":7,"end":7}}"#,
        r#"{"type":"step/end","seq":9,"time":7,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"turn/end","seq":10,"time":8,"data":{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}"#,
        r#"{"type":"turn/start","seq":11,"time":9,"data":{"turn":2}}"#,
        r#"{"type":"turn/end","seq":12,"time":10,"data":{"turn":2,"reason":{"kind":"error","error":{"message":"m","code":"C","status":500}}}}"#,
        r#"{"type":"goal/change","seq":13,"time":11,"data":null,"ignorable":true}"#,
        r#"{"type":"session/end-seed","seq":14,"time":12,"data":{}}"#,
    ];
    let mut log = events(&lines);
    let before = log.clone();
    normalize_stored_events("current", &mut log).unwrap();
    assert_eq!(log, before);
    assert_eq!(log.iter().map(to_js_string).collect::<Vec<_>>(), lines);
    let mut empty: [SessionEvent; 0] = [];
    normalize_stored_events("empty", &mut empty).unwrap();
}

#[test]
fn hand_built_events_are_upgraded_too() {
    let mut log = [SessionEvent::new(
        "turn/start",
        0,
        1,
        json!({ "turn": 1, "trigger": { "kind": "message" } }),
    )];
    normalize_stored_events("s", &mut log).unwrap();
    assert_eq!(log[0].data, json!({ "turn": 1 }));
}
