//! Reading one stored line (a JSONL line) into events without building a tree for payloads.
//!
//! The envelope is read field by field; `data` stays JSON text ([`EventData::from_raw`]) until
//! something reads it, and packed chunk rows expand into compact chunk payloads. This is what
//! makes loading a long session cheap in time and memory.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::chunk_rows::{ChunkKind, decode_record_into};
use crate::data::EventData;
use crate::event::{EnvelopeBuilder, EnvelopeError, SessionEvent, safe_u64};

/// What one line holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineDecode {
    /// It held this many events, now appended to the output.
    Events(usize),
    /// Not JSON, not an object, a malformed packed row, or an event without a usable `seq`:
    /// the reader treats it as a torn or damaged record.
    Unreadable,
    /// A JSON event whose envelope breaks the rules (an unknown key, a bad `time`, ...) or
    /// whose payload this harness cannot hold (a lone UTF-16 surrogate, nesting beyond 128).
    BadEnvelope {
        /// Its `seq`.
        seq: u64,
        /// Whether its `type` is `turn/end`.
        closes_turn: bool,
        /// What is wrong.
        reason: String,
    },
}

/// The top-level fields of a line, in order, values left as text.
struct Fields<'a>(Vec<(std::borrow::Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::with_capacity(7);
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

fn small(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The top-level fields of a JSON object's text, in order, values left as text; `None` when
/// the text is not an object.
pub fn object_fields(text: &str) -> Option<Vec<(std::borrow::Cow<'_, str>, &RawValue)>> {
    serde_json::from_str::<Fields<'_>>(text)
        .ok()
        .map(|Fields(fields)| fields)
}

/// A message reduced to what shape checks read: `id`, `role`, `source`, and each content
/// block's `type` and `toolCallId`. Large text is never copied.
pub fn message_skeleton(text: &str) -> Value {
    let Some(fields) = object_fields(text) else {
        return Value::Null;
    };
    let mut message = serde_json::Map::new();
    for (key, raw) in fields {
        match key.as_ref() {
            "id" | "role" | "source" => {
                message.insert(key.into_owned(), small(raw));
            }
            "content" => {
                let blocks = serde_json::from_str::<Vec<&RawValue>>(raw.get()).map(|blocks| {
                    blocks
                        .into_iter()
                        .map(block_skeleton)
                        .collect::<Vec<Value>>()
                });
                message.insert(key.into_owned(), blocks.map_or(Value::Null, Value::Array));
            }
            _ => {}
        }
    }
    Value::Object(message)
}

fn block_skeleton(raw: &RawValue) -> Value {
    let Some(fields) = object_fields(raw.get()) else {
        return Value::Null;
    };
    let kept = fields
        .into_iter()
        .filter(|(key, _)| key == "type" || key == "toolCallId")
        .map(|(key, raw)| (key.into_owned(), small(raw)))
        .collect();
    Value::Object(kept)
}

/// Decodes one line (without its newline) and appends its events to `out`.
pub fn decode_line_into(line: &[u8], out: &mut Vec<SessionEvent>) -> LineDecode {
    let Ok(Fields(fields)) = serde_json::from_slice::<Fields<'_>>(line) else {
        return LineDecode::Unreadable;
    };
    let kind = fields
        .iter()
        .find(|(key, _)| key == "type")
        .map(|(_, raw)| small(raw));
    if kind
        .as_ref()
        .and_then(Value::as_str)
        .and_then(ChunkKind::from_tag)
        .is_some()
    {
        // A packed row: strict validation on its (small) tree, then compact expansion.
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
            return LineDecode::Unreadable;
        };
        return match decode_record_into(value, out) {
            Ok(count) => LineDecode::Events(count),
            Err(_) => LineDecode::Unreadable,
        };
    }
    let Some(seq) = fields
        .iter()
        .find(|(key, _)| key == "seq")
        .and_then(|(_, raw)| safe_u64(&small(raw)))
    else {
        return LineDecode::Unreadable;
    };
    let closes_turn = kind.as_ref().and_then(Value::as_str) == Some("turn/end");
    match envelope(fields) {
        Ok(event) => {
            if let Some(text) = event.data.raw_text()
                && !parses_as_value(text)
            {
                return LineDecode::BadEnvelope {
                    seq,
                    closes_turn,
                    reason: UNHOLDABLE_DATA.to_owned(),
                };
            }
            out.push(event);
            LineDecode::Events(1)
        }
        Err(error) => LineDecode::BadEnvelope {
            seq,
            closes_turn,
            reason: error.reason,
        },
    }
}

/// Why a payload that is valid JSON cannot be held.
const UNHOLDABLE_DATA: &str = "its data cannot be held: a lone UTF-16 surrogate escape or \
                               nesting deeper than 128 levels";

/// A payload from its stored JSON text (a database column), kept as text until read.
///
/// Fails when the text is not one JSON value, or holds what this harness cannot (a lone
/// UTF-16 surrogate escape, nesting deeper than 128 levels).
pub fn data_from_json_text(text: String) -> Result<EventData, String> {
    let raw =
        RawValue::from_string(text).map_err(|error| format!("its data is not JSON: {error}"))?;
    if !parses_as_value(raw.get()) {
        return Err(UNHOLDABLE_DATA.to_owned());
    }
    Ok(EventData::from_raw(raw))
}

/// Whether JSON `text` also parses into a [`Value`], which refuses lone surrogate escapes and
/// nesting deeper than 128. Checked exactly only when the text has a surrogate escape or more
/// than 128 brackets, which ordinary payloads do not.
fn parses_as_value(text: &str) -> bool {
    let bytes = text.as_bytes();
    let surrogate_escape = memchr::memmem::find_iter(bytes, b"\\u").any(|at| {
        matches!(bytes.get(at + 2), Some(b'd' | b'D'))
            && matches!(
                bytes.get(at + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    });
    let brackets = memchr::memchr2_iter(b'[', b'{', bytes).count();
    if !surrogate_escape && brackets <= 128 {
        return true;
    }
    serde_json::from_str::<Value>(text).is_ok()
}

fn envelope(
    fields: Vec<(std::borrow::Cow<'_, str>, &RawValue)>,
) -> Result<SessionEvent, EnvelopeError> {
    let mut envelope = EnvelopeBuilder::default();
    for (key, raw) in fields {
        if key == "data" {
            envelope.data(EventData::from_raw(raw.to_owned()));
        } else {
            envelope.field(&key, small(raw))?;
        }
    }
    envelope.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use dsh_protocol::json::to_js_string;

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
}
