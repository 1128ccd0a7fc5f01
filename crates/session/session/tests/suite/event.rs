//! The envelope: lines round-trip byte for byte, the canonical order, refusals, and safe
//! integers read as JavaScript reads them.

use dsh_protocol::json::{MAX_SAFE_INTEGER, to_js_string};
use dsh_session::event::{Canonical, EnvelopeError, SessionEvent, safe_i64, safe_u64};
use serde_json::Value;

fn parse(text: &str) -> Result<SessionEvent, EnvelopeError> {
    let Value::Object(map) = serde_json::from_str(text).unwrap() else {
        unreachable!()
    };
    SessionEvent::from_json_map(map)
}

#[test]
fn envelopes_round_trip_byte_for_byte() {
    for line in [
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"tool/result","seq":5,"time":-3,"data":{},"sourceEventSeqs":[1,2],"surfaceOp":"append"}"#,
        r#"{"type":"tool/result","seq":5,"time":3,"data":{},"surfaceOp":"append","sourceEventSeqs":[4]}"#,
        r#"{"type":"user/message","seq":9,"time":3,"data":null,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":1,"end":4}}"#,
        r#"{"type":"x/y","seq":1,"time":3,"data":[1.5,"é"],"ignorable":true}"#,
    ] {
        assert_eq!(to_js_string(&parse(line).unwrap()), line);
    }
}

#[test]
fn canonical_order_puts_sources_before_the_surface_op() {
    let closer = r#"{"type":"tool/result","seq":5,"time":3,"data":{},"surfaceOp":"append","sourceEventSeqs":[4]}"#;
    assert_eq!(
        to_js_string(&Canonical(&parse(closer).unwrap())),
        r#"{"type":"tool/result","seq":5,"time":3,"data":{},"sourceEventSeqs":[4],"surfaceOp":"append"}"#
    );
}

#[test]
fn bad_envelopes_are_refused() {
    for (line, reason) in [
        (
            r#"{"type":1,"seq":0,"time":1,"data":{}}"#,
            "type must be a string",
        ),
        (
            r#"{"type":"a","seq":-1,"time":1,"data":{}}"#,
            "seq must be a non-negative safe integer",
        ),
        (
            r#"{"type":"a","seq":0,"time":1.5,"data":{}}"#,
            "time must be a safe integer",
        ),
        (r#"{"type":"a","seq":0,"time":1}"#, "data is missing"),
        (
            r#"{"type":"a","seq":0,"time":1,"data":{},"extra":1}"#,
            "unexpected envelope key \"extra\"",
        ),
        (
            r#"{"type":"a","seq":0,"time":1,"data":{},"ignorable":false}"#,
            "ignorable may only be true",
        ),
        (
            r#"{"type":"a","seq":0,"time":1,"data":{},"surfaceOp":{"op":"replace","start":1}}"#,
            "surfaceOp must be \"append\" or {op:\"replace\",start,end}",
        ),
    ] {
        assert_eq!(parse(line).unwrap_err().reason, reason, "{line}");
    }
}

#[test]
fn safe_integers_follow_javascript() {
    assert_eq!(
        safe_u64(&serde_json::json!(9_007_199_254_740_991_u64)),
        Some(MAX_SAFE_INTEGER)
    );
    assert_eq!(
        safe_u64(&serde_json::json!(9_007_199_254_740_992_u64)),
        None
    );
    assert_eq!(safe_u64(&serde_json::json!(2.0)), Some(2));
    assert_eq!(safe_i64(&serde_json::json!(-7)), Some(-7));
    assert_eq!(
        safe_i64(&serde_json::from_str::<Value>("-0").unwrap()),
        None
    );
}
