//! The event envelope: `{type, seq, time, data, sourceEventSeqs?, surfaceOp?, ignorable?}`.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::data::EventData;
use crate::fields::{RawFields, field_value};
use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_protocol::kinds;
use dsh_protocol::known::known_type;

/// The event types that make up the model-visible surface.
pub const SURFACE_EVENT_TYPES: [&str; 3] = [
    kinds::USER_MESSAGE,
    kinds::ASSISTANT_MESSAGE,
    kinds::TOOL_RESULT,
];

/// Whether events of `kind` belong to the surface and so must carry a [`SurfaceOp`].
pub fn is_surface_type(kind: &str) -> bool {
    SURFACE_EVENT_TYPES.contains(&kind)
}

/// How a surface event changes the model's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceOp {
    /// Adds the event at the end (`"append"`).
    Append,
    /// Replaces the surface nodes from `start` to `end` (seqs, inclusive, by surface position).
    Replace {
        /// Seq of the first shadowed node.
        start: u64,
        /// Seq of the last shadowed node.
        end: u64,
    },
}

impl Serialize for SurfaceOp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Append => serializer.serialize_str("append"),
            Self::Replace { start, end } => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("op", "replace")?;
                map.serialize_entry("start", start)?;
                map.serialize_entry("end", end)?;
                map.end()
            }
        }
    }
}

impl SurfaceOp {
    /// Reads `"append"` or exactly `{op:"replace", start, end}`.
    pub fn from_json(value: &Value) -> Result<Self, EnvelopeError> {
        match value {
            Value::String(text) if text == "append" => Ok(Self::Append),
            Value::Object(map)
                if map.len() == 3 && map.get("op").and_then(Value::as_str) == Some("replace") =>
            {
                let start = map.get("start").and_then(safe_u64);
                let end = map.get("end").and_then(safe_u64);
                match (start, end) {
                    (Some(start), Some(end)) => Ok(Self::Replace { start, end }),
                    _ => Err(EnvelopeError::new(
                        "surfaceOp replace needs non-negative safe integer start and end",
                    )),
                }
            }
            _ => Err(EnvelopeError::new(
                "surfaceOp must be \"append\" or {op:\"replace\",start,end}",
            )),
        }
    }
}

/// Which of the two surface keys an event writes first.
///
/// `append` writes `sourceEventSeqs` first; dsh's crash closers write `surfaceOp` first. Keeping
/// the order makes a re-serialized log byte-identical to the one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SurfaceKeyOrder {
    /// `sourceEventSeqs, surfaceOp` (what `append` writes).
    #[default]
    SourcesFirst,
    /// `surfaceOp, sourceEventSeqs` (what crash recovery writes).
    OpFirst,
}

/// One entry of the session log.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEvent {
    /// The event type, such as `turn/start` or a plugin's `goal/change`.
    pub kind: Cow<'static, str>,
    /// Position in the log: equal to the event's index.
    pub seq: u64,
    /// Epoch milliseconds at append (any safe integer on read).
    pub time: i64,
    /// The payload, exactly as written; plugin payloads are never reshaped. Reads as a
    /// [`Value`]; loaded payloads are parsed on first access.
    pub data: EventData,
    /// The events this one was derived from (surface events only).
    pub source_event_seqs: Option<Vec<u64>>,
    /// The surface change (mandatory on surface events, absent elsewhere).
    pub surface_op: Option<SurfaceOp>,
    /// `true` when a reader that does not know the type may skip it.
    pub ignorable: bool,
    /// Key order of the two surface fields on the wire.
    pub surface_key_order: SurfaceKeyOrder,
}

/// A malformed event envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct EnvelopeError {
    /// What is wrong.
    pub reason: String,
}

impl EnvelopeError {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

/// Reads a non-negative safe integer (JavaScript's `Number.isSafeInteger(n) && n >= 0`).
pub fn safe_u64(value: &Value) -> Option<u64> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(n) = number.as_u64() {
        return (n <= MAX_SAFE_INTEGER).then_some(n);
    }
    if number.as_i64().is_some() {
        return None;
    }
    let float = number.as_f64()?;
    let whole = float as u64;
    (float.fract() == 0.0
        && float >= 0.0
        && !(float == 0.0 && float.is_sign_negative())
        && float <= MAX_SAFE_INTEGER as f64)
        .then_some(whole)
}

/// Reads a safe integer of either sign.
pub fn safe_i64(value: &Value) -> Option<i64> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(n) = number.as_i64() {
        return (n.unsigned_abs() <= MAX_SAFE_INTEGER).then_some(n);
    }
    if number.as_u64().is_some() {
        return None;
    }
    let float = number.as_f64()?;
    let whole = float as i64;
    (float.fract() == 0.0
        && !(float == 0.0 && float.is_sign_negative())
        && float.abs() <= MAX_SAFE_INTEGER as f64)
        .then_some(whole)
}

/// The type of an event, sharing the static name when the type is known.
pub fn event_kind(kind: String) -> Cow<'static, str> {
    match known_type(&kind) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(kind),
    }
}

impl SessionEvent {
    /// A plain event with no surface fields.
    pub fn new(kind: &str, seq: u64, time: i64, data: Value) -> Self {
        let kind = match known_type(kind) {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(kind.to_owned()),
        };
        Self {
            kind,
            seq,
            time,
            data: data.into(),
            source_event_seqs: None,
            surface_op: None,
            ignorable: false,
            surface_key_order: SurfaceKeyOrder::SourcesFirst,
        }
    }

    /// Reads an envelope from a parsed JSON object, taking ownership of `data`.
    ///
    /// Only `type, seq, time, data, surfaceOp, sourceEventSeqs, ignorable` are allowed. Surface
    /// rules (which types may carry the surface keys) are checked by the surface fold.
    pub fn from_json_map(map: Map<String, Value>) -> Result<Self, EnvelopeError> {
        let mut envelope = EnvelopeBuilder::default();
        for (key, value) in map {
            if key == "data" {
                envelope.data(value.into());
            } else {
                envelope.field(&key, value)?;
            }
        }
        envelope.finish()
    }

    /// Reads an envelope from its top-level fields as text (see [`crate::fields`]), keeping
    /// `data` as its text until something reads it. The same rules as
    /// [`SessionEvent::from_json_map`] apply.
    pub fn from_raw_fields(fields: RawFields<'_>) -> Result<Self, EnvelopeError> {
        let mut envelope = EnvelopeBuilder::default();
        for (key, raw) in fields {
            if key == "data" {
                envelope.data(EventData::from_raw(raw.to_owned()));
            } else {
                envelope.field(&key, field_value(raw))?;
            }
        }
        envelope.finish()
    }
}

/// Collects an envelope's fields in their written order and checks each; `data` comes
/// separately so a reader can keep it as text.
#[derive(Debug, Default)]
struct EnvelopeBuilder {
    kind: Option<Cow<'static, str>>,
    seq: Option<u64>,
    time: Option<i64>,
    data: Option<EventData>,
    sources: Option<Vec<u64>>,
    surface_op: Option<SurfaceOp>,
    ignorable: bool,
    op_first: bool,
}

impl EnvelopeBuilder {
    /// Sets `data`.
    fn data(&mut self, data: EventData) {
        self.data = Some(data);
    }

    /// Checks and sets one field other than `data`.
    fn field(&mut self, key: &str, value: Value) -> Result<(), EnvelopeError> {
        match key {
            "type" => match value {
                Value::String(text) => self.kind = Some(event_kind(text)),
                _ => return Err(EnvelopeError::new("type must be a string")),
            },
            "seq" => {
                self.seq = Some(safe_u64(&value).ok_or_else(|| {
                    EnvelopeError::new("seq must be a non-negative safe integer")
                })?);
            }
            "time" => {
                self.time = Some(
                    safe_i64(&value)
                        .ok_or_else(|| EnvelopeError::new("time must be a safe integer"))?,
                );
            }
            "sourceEventSeqs" => self.sources = Some(read_sources(&value)?),
            "surfaceOp" => {
                self.op_first = self.sources.is_none();
                self.surface_op = Some(SurfaceOp::from_json(&value)?);
            }
            "ignorable" => {
                if value != Value::Bool(true) {
                    return Err(EnvelopeError::new("ignorable may only be true"));
                }
                self.ignorable = true;
            }
            other => {
                return Err(EnvelopeError::new(format!(
                    "unexpected envelope key \"{other}\""
                )));
            }
        }
        Ok(())
    }

    /// The event, once every required field is there.
    fn finish(self) -> Result<SessionEvent, EnvelopeError> {
        let both = self.surface_op.is_some() && self.sources.is_some();
        Ok(SessionEvent {
            kind: self
                .kind
                .ok_or_else(|| EnvelopeError::new("type is missing"))?,
            seq: self
                .seq
                .ok_or_else(|| EnvelopeError::new("seq is missing"))?,
            time: self
                .time
                .ok_or_else(|| EnvelopeError::new("time is missing"))?,
            data: self
                .data
                .ok_or_else(|| EnvelopeError::new("data is missing"))?,
            source_event_seqs: self.sources,
            surface_op: self.surface_op,
            ignorable: self.ignorable,
            surface_key_order: if both && self.op_first {
                SurfaceKeyOrder::OpFirst
            } else {
                SurfaceKeyOrder::SourcesFirst
            },
        })
    }
}

fn read_sources(value: &Value) -> Result<Vec<u64>, EnvelopeError> {
    let Value::Array(items) = value else {
        return Err(EnvelopeError::new("sourceEventSeqs must be an array"));
    };
    items
        .iter()
        .map(|item| {
            safe_u64(item).ok_or_else(|| {
                EnvelopeError::new("sourceEventSeqs must hold non-negative safe integers")
            })
        })
        .collect()
}

impl Serialize for SessionEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_in(self.surface_key_order, serializer)
    }
}

/// An event serialized in the canonical key order `type, seq, time, data, sourceEventSeqs,
/// surfaceOp, ignorable`, whatever order it was read in (what `dsh sessions export` prints).
#[derive(Debug, Clone, Copy)]
pub struct Canonical<'a>(pub &'a SessionEvent);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_in(SurfaceKeyOrder::SourcesFirst, serializer)
    }
}

impl SessionEvent {
    fn serialize_in<S: Serializer>(
        &self,
        order: SurfaceKeyOrder,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.kind.as_ref())?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("time", &self.time)?;
        map.serialize_entry("data", &self.data)?;
        match order {
            SurfaceKeyOrder::SourcesFirst => {
                if let Some(sources) = &self.source_event_seqs {
                    map.serialize_entry("sourceEventSeqs", sources)?;
                }
                if let Some(op) = &self.surface_op {
                    map.serialize_entry("surfaceOp", op)?;
                }
            }
            SurfaceKeyOrder::OpFirst => {
                if let Some(op) = &self.surface_op {
                    map.serialize_entry("surfaceOp", op)?;
                }
                if let Some(sources) = &self.source_event_seqs {
                    map.serialize_entry("sourceEventSeqs", sources)?;
                }
            }
        }
        if self.ignorable {
            map.serialize_entry("ignorable", &true)?;
        }
        map.end()
    }
}
