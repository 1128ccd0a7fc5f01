//! Decoding a stored line: a row is validated strictly, in dsh 0.1's order, before it expands.

use std::borrow::Cow;

use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_session::SessionEvent;
use dsh_session::event::safe_i64;
use serde_json::{Map, Value};

use super::{ChunkKind, ChunkRowError, PackedRow, StorageRecord};

/// Reads one parsed log line: a packed row (validated strictly) or an event envelope.
///
/// An object whose `type` is a row tag must be a valid row, or this fails with dsh 0.1's
/// `malformed <tag> storage row: <reason>`; any other object is read with
/// [`SessionEvent::from_json_map`]. The value is consumed, so no string is copied.
pub fn decode_record(value: Value) -> Result<StorageRecord<'static>, ChunkRowError> {
    let Value::Object(map) = value else {
        return Err(ChunkRowError::NotAnObject);
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .and_then(ChunkKind::from_tag);
    match kind {
        Some(kind) => decode_row(kind, map).map(StorageRecord::Packed),
        None => Ok(StorageRecord::Event(Cow::Owned(
            SessionEvent::from_json_map(map)?,
        ))),
    }
}

/// Reads one parsed log line and appends the events it stores to `out`; returns how many.
///
/// On error nothing is appended. See [`decode_record`].
pub fn decode_record_into(
    value: Value,
    out: &mut Vec<SessionEvent>,
) -> Result<usize, ChunkRowError> {
    let record = decode_record(value)?;
    let count = record.event_count();
    record.into_events(out);
    Ok(count)
}

/// JavaScript's `Number.isSafeInteger(value)`, which also admits `-0` (read as 0).
fn js_safe_integer(value: &Value) -> Option<i64> {
    safe_i64(value).or_else(|| value.as_f64().filter(|float| *float == 0.0).map(|_| 0))
}

/// Validates a row-tagged object in dsh 0.1's order and takes it apart.
pub(super) fn decode_row(
    kind: ChunkKind,
    mut map: Map<String, Value>,
) -> Result<PackedRow<'static>, ChunkRowError> {
    let tag = kind.tag();
    let malformed = |reason: &'static str| ChunkRowError::Malformed {
        tag,
        reason: Cow::Borrowed(reason),
    };
    if !has_exact_keys(&map, &["type", "seq0", "time0", "data"]) {
        return Err(malformed(
            "envelope must be exactly {type, seq0, time0, data}",
        ));
    }
    let seq0 = map
        .get("seq0")
        .and_then(js_safe_integer)
        .and_then(|seq0| u64::try_from(seq0).ok())
        .ok_or_else(|| malformed("seq0 must be a non-negative safe integer"))?;
    let time0 = map
        .get("time0")
        .and_then(js_safe_integer)
        .ok_or_else(|| malformed("time0 must be a safe integer"))?;
    let mut data = match map.remove("data") {
        Some(Value::Object(data)) => data,
        // JavaScript sees an array as an object, which then fails the exact-keys check.
        Some(Value::Array(_)) => Map::new(),
        _ => return Err(malformed("data must be an object")),
    };
    let (call, payload_key) = if kind == ChunkKind::ToolCall {
        let with_name = has_exact_keys(
            &data,
            &["turn", "step", "index", "id", "name", "dt", "args"],
        );
        if !with_name && !has_exact_keys(&data, &["turn", "step", "index", "id", "dt", "args"]) {
            return Err(malformed(
                "data must be exactly {turn, step, index, id, name?, dt, args}",
            ));
        }
        let id = take_string(&mut data, "id");
        let name = if with_name {
            take_string(&mut data, "name").map(Some)
        } else {
            Some(None)
        };
        let (Some(id), Some(name)) = (id, name) else {
            return Err(malformed("id (and name when present) must be strings"));
        };
        (Some((Cow::Owned(id), name.map(Cow::Owned))), "args")
    } else {
        if !has_exact_keys(&data, &["turn", "step", "index", "dt", "texts"]) {
            return Err(malformed(
                "data must be exactly {turn, step, index, dt, texts}",
            ));
        }
        (None, "texts")
    };

    let mut number = |key: &str| match data.remove(key) {
        Some(Value::Number(number)) => Some(number),
        _ => None,
    };
    let (Some(turn), Some(step), Some(index)) = (number("turn"), number("step"), number("index"))
    else {
        return Err(malformed("turn/step/index must be numbers"));
    };
    let members = match data.remove(payload_key) {
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_string) => {
            items
                .into_iter()
                .filter_map(|item| match item {
                    Value::String(text) => Some(Cow::Owned(text)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        }
        _ => {
            return Err(ChunkRowError::Malformed {
                tag,
                reason: Cow::Owned(format!("{payload_key} must be a non-empty string array")),
            });
        }
    };
    let dt = match data.get("dt") {
        Some(Value::Array(gaps)) => gaps.iter().map(js_safe_integer).collect::<Option<Vec<_>>>(),
        _ => None,
    }
    .ok_or_else(|| malformed("dt must be an array of safe integers"))?;
    if dt.len() + 1 != members.len() {
        return Err(ChunkRowError::Malformed {
            tag,
            reason: Cow::Owned(format!(
                "dt length {} does not match {} members",
                dt.len(),
                members.len()
            )),
        });
    }
    // Within safe range every step is exact, so the first departure is always caught.
    let last_seq = u64::try_from(members.len() - 1)
        .ok()
        .and_then(|n| seq0.checked_add(n));
    if last_seq.is_none_or(|last| last > MAX_SAFE_INTEGER) {
        return Err(malformed("member seqs must stay safe integers"));
    }
    let mut time = time0;
    for gap in &dt {
        time += gap;
        if time.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(malformed("member times must stay safe integers"));
        }
    }
    Ok(PackedRow {
        kind,
        seq0,
        time0,
        turn,
        step,
        index,
        dt,
        call,
        members,
    })
}

/// Whether `map` has exactly the keys `keys`, in any order.
fn has_exact_keys(map: &Map<String, Value>, keys: &[&str]) -> bool {
    map.len() == keys.len() && keys.iter().all(|key| map.contains_key(*key))
}

/// Removes and returns `map[key]` if it is a string.
fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        },
        _ => None,
    }
}
