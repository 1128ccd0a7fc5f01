//! The line decoder: events read back byte for byte, packed rows expanded, damaged and
//! refused lines told apart, column text checked.

use dsh_persistence::record::{LineDecode, data_from_json_text, decode_line_into};
use dsh_protocol::json::to_js_string;
use dsh_session::SessionEvent;

/// Why a payload that is valid JSON cannot be held.
const UNHOLDABLE_DATA: &str = "its data cannot be held: a lone UTF-16 surrogate escape or \
                               nesting deeper than 128 levels";

fn decode(line: &str) -> (LineDecode, Vec<SessionEvent>) {
    let mut out = Vec::new();
    let outcome = decode_line_into(line.as_bytes(), &mut out);
    (outcome, out)
}

#[test]
fn events_read_back_byte_for_byte_with_lazy_payloads() {
    for line in [
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"tool/result","seq":5,"time":-3,"data":{"z":[1.5,"é",null],"a":{}},"sourceEventSeqs":[1,2],"surfaceOp":"append"}"#,
        r#"{"type":"tool/result","seq":5,"time":3,"data":{},"surfaceOp":"append","sourceEventSeqs":[4]}"#,
        r#"{"type":"x/y","seq":1,"time":3,"data":[1e+21,"\u0001"],"ignorable":true}"#,
    ] {
        let (outcome, events) = decode(line);
        assert_eq!(outcome, LineDecode::Events(1), "{line}");
        assert_eq!(to_js_string(&events[0]), line);
    }
}

#[test]
fn packed_rows_expand_into_chunk_payloads() {
    let line = r#"{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[1,2],"texts":["a","b","c"]}}"#;
    let (outcome, events) = decode(line);
    assert_eq!(outcome, LineDecode::Events(3));
    assert_eq!(
        to_js_string(&events[2]),
        r#"{"type":"assistant/chunk","seq":5,"time":13,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"c"}}}"#
    );
    assert!(events[2].data.chunk_fields().is_some());
    assert_eq!(events[2].data["chunk"]["text"], "c");
}

#[test]
fn unreadable_and_bad_lines_are_told_apart() {
    assert_eq!(decode("not json").0, LineDecode::Unreadable);
    assert_eq!(decode("[1,2]").0, LineDecode::Unreadable);
    assert_eq!(
        decode(r#"{"type":"a","time":1,"data":{}}"#).0,
        LineDecode::Unreadable
    );
    assert_eq!(
        decode(r#"{"type":"text-chunks","seq0":0,"time0":0,"data":{}}"#).0,
        LineDecode::Unreadable
    );
    assert_eq!(
        decode(r#"{"type":"a","seq":4,"time":1,"data":{},"extra":1}"#).0,
        LineDecode::BadEnvelope {
            seq: 4,
            closes_turn: false,
            reason: "unexpected envelope key \"extra\"".into()
        }
    );
    assert_eq!(
        decode(r#"{"type":"turn/end","seq":4,"time":1}"#).0,
        LineDecode::BadEnvelope {
            seq: 4,
            closes_turn: true,
            reason: "data is missing".into()
        }
    );
    let lone = r#"{"type":"goal/change","seq":4,"time":1,"data":{"t":"a\ud83d"}}"#;
    assert!(matches!(
        decode(lone).0,
        LineDecode::BadEnvelope { seq: 4, .. }
    ));
    let pair = r#"{"type":"goal/change","seq":4,"time":1,"data":{"t":"a\ud83d\ude00"}}"#;
    assert_eq!(decode(pair).0, LineDecode::Events(1));
    let deep = format!(
        r#"{{"type":"goal/change","seq":4,"time":1,"data":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(matches!(
        decode(&deep).0,
        LineDecode::BadEnvelope { seq: 4, .. }
    ));
}

#[test]
fn data_text_from_a_column_is_checked_and_kept_as_text() {
    let data = data_from_json_text(r#"{"b":1,"a":[2.50,"x"]}"#.to_owned()).unwrap();
    assert_eq!(data.raw_text(), Some(r#"{"b":1,"a":[2.50,"x"]}"#));
    assert_eq!(data["a"][1], "x");
    assert!(
        data_from_json_text("{".to_owned())
            .unwrap_err()
            .starts_with("its data is not JSON")
    );
    assert_eq!(
        data_from_json_text(r#"["\ud800"]"#.to_owned()).unwrap_err(),
        UNHOLDABLE_DATA
    );
}
