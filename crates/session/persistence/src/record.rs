//! Reading one stored line (a JSONL line) into events without building a tree for payloads.
//!
//! The envelope is read field by field; `data` stays JSON text ([`EventData::from_raw`]) until
//! something reads it, and packed chunk rows expand into compact chunk payloads. This is what
//! makes loading a long session cheap in time and memory.

use dsh_protocol::kinds;
use dsh_session::event::safe_u64;
use dsh_session::fields::{field_value, object_fields_of_bytes};
use dsh_session::{EventData, SessionEvent};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::chunk_rows::{ChunkKind, decode_record_into};

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

/// Decodes one line (without its newline) and appends its events to `out`.
pub fn decode_line_into(line: &[u8], out: &mut Vec<SessionEvent>) -> LineDecode {
    let Some(fields) = object_fields_of_bytes(line) else {
        return LineDecode::Unreadable;
    };
    let kind = fields
        .iter()
        .find(|(key, _)| key == "type")
        .map(|(_, raw)| field_value(raw));
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
        .and_then(|(_, raw)| safe_u64(&field_value(raw)))
    else {
        return LineDecode::Unreadable;
    };
    let closes_turn = kind.as_ref().and_then(Value::as_str) == Some(kinds::TURN_END);
    match SessionEvent::from_raw_fields(fields) {
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
