//! [`EventData`]: an event's payload, parsed only when someone looks at it.
//!
//! A long session holds tens of thousands of events, most of which nothing reads after loading
//! (streamed chunks, old tool output). Building a JSON tree for each would dominate load time
//! and memory, so loaded payloads stay as their JSON text (or, for chunks expanded from a packed
//! row, as their few fields) and become a [`Value`] on first access. Payloads built in memory
//! are plain values. Either way the payload reads as a [`Value`] through `Deref`.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use dsh_protocol::json::{LosslessError, check_lossless, check_lossless_text};

/// One streamed chunk expanded from a packed row: `{turn, step, chunk: {type, index, ...}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkFields {
    /// Turn number, as written.
    pub turn: Number,
    /// Step number, as written.
    pub step: Number,
    /// `text-delta`, `reasoning-delta` or `tool-call-delta`.
    pub delta_type: &'static str,
    /// Block index, as written.
    pub index: Number,
    /// Tool call id and optional name (tool-call deltas only).
    pub call: Option<(String, Option<String>)>,
    /// The text or arguments delta.
    pub text: String,
}

impl ChunkFields {
    fn to_value(&self) -> Value {
        let mut chunk = Map::with_capacity(5);
        chunk.insert("type".into(), Value::from(self.delta_type));
        chunk.insert("index".into(), Value::Number(self.index.clone()));
        match &self.call {
            Some((id, name)) => {
                chunk.insert("id".into(), Value::String(id.clone()));
                if let Some(name) = name {
                    chunk.insert("name".into(), Value::String(name.clone()));
                }
                chunk.insert("argumentsDelta".into(), Value::String(self.text.clone()));
            }
            None => {
                chunk.insert("text".into(), Value::String(self.text.clone()));
            }
        }
        let mut data = Map::with_capacity(3);
        data.insert("turn".into(), Value::Number(self.turn.clone()));
        data.insert("step".into(), Value::Number(self.step.clone()));
        data.insert("chunk".into(), Value::Object(chunk));
        Value::Object(data)
    }
}

impl Serialize for ChunkFields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Chunk<'a>(&'a ChunkFields);
        impl Serialize for Chunk<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let fields = self.0;
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", fields.delta_type)?;
                map.serialize_entry("index", &fields.index)?;
                match &fields.call {
                    Some((id, name)) => {
                        map.serialize_entry("id", id)?;
                        if let Some(name) = name {
                            map.serialize_entry("name", name)?;
                        }
                        map.serialize_entry("argumentsDelta", &fields.text)?;
                    }
                    None => map.serialize_entry("text", &fields.text)?,
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("turn", &self.turn)?;
        map.serialize_entry("step", &self.step)?;
        map.serialize_entry("chunk", &Chunk(self))?;
        map.end()
    }
}

/// Where a lazy payload comes from, and its value once read.
struct Lazy {
    source: Source,
    value: OnceLock<Value>,
}

enum Source {
    /// Valid JSON text.
    Text(Box<RawValue>),
    /// Chunk fields from a packed row.
    Chunk(Box<ChunkFields>),
}

impl Lazy {
    fn value(&self) -> &Value {
        self.value.get_or_init(|| self.materialize())
    }

    fn materialize(&self) -> Value {
        match &self.source {
            Source::Text(raw) => parse(raw),
            Source::Chunk(fields) => fields.to_value(),
        }
    }

    fn into_value(self) -> Value {
        let Self { source, value } = self;
        value.into_inner().unwrap_or_else(|| {
            Self {
                source,
                value: OnceLock::new(),
            }
            .materialize()
        })
    }
}

/// An event's payload: reads as a [`Value`], stored as compactly as it arrived.
pub struct EventData {
    /// The payload when it is a plain value (`Null` while `lazy` is set).
    owned: Value,
    lazy: Option<Box<Lazy>>,
}

impl EventData {
    fn lazy(source: Source) -> Self {
        Self {
            owned: Value::Null,
            lazy: Some(Box::new(Lazy {
                source,
                value: OnceLock::new(),
            })),
        }
    }

    /// A payload from JSON text already checked to be valid (a slice of a parsed line).
    pub fn from_raw(raw: Box<RawValue>) -> Self {
        Self::lazy(Source::Text(raw))
    }

    /// A chunk payload expanded from a packed row.
    pub fn from_chunk(fields: ChunkFields) -> Self {
        Self::lazy(Source::Chunk(Box::new(fields)))
    }

    /// The payload as a value, parsed (and kept) on first use.
    pub fn value(&self) -> &Value {
        match &self.lazy {
            None => &self.owned,
            Some(lazy) => lazy.value(),
        }
    }

    /// Calls `read` with the payload as a value without keeping a parsed copy of text (for
    /// checks that read a payload once).
    pub fn with_value<R>(&self, read: impl FnOnce(&Value) -> R) -> R {
        match self.lazy.as_deref() {
            Some(Lazy {
                source: Source::Text(raw),
                value,
            }) if value.get().is_none() => read(&parse(raw)),
            _ => read(self.value()),
        }
    }

    /// The JSON text the payload was read from, when it was read from text and never changed.
    pub fn raw_text(&self) -> Option<&str> {
        match self.lazy.as_deref() {
            Some(Lazy {
                source: Source::Text(raw),
                ..
            }) => Some(raw.get()),
            _ => None,
        }
    }

    /// The chunk fields, when the payload came from a packed row and was never changed.
    pub fn chunk_fields(&self) -> Option<&ChunkFields> {
        match self.lazy.as_deref() {
            Some(Lazy {
                source: Source::Chunk(fields),
                ..
            }) => Some(fields),
            _ => None,
        }
    }

    /// Takes the payload as a value.
    pub fn into_value(self) -> Value {
        match self.lazy {
            None => self.owned,
            Some(lazy) => lazy.into_value(),
        }
    }

    /// Checks the payload survives a JSON round trip (no `-0`), without building a tree for
    /// text payloads.
    pub fn check_lossless(&self) -> Result<(), LosslessError> {
        match self.lazy.as_deref() {
            None => check_lossless(&self.owned),
            Some(Lazy {
                source: Source::Text(raw),
                ..
            }) => check_lossless_text(raw.get()),
            Some(Lazy {
                source: Source::Chunk(fields),
                ..
            }) => {
                for number in [&fields.turn, &fields.step, &fields.index] {
                    check_lossless(&Value::Number(number.clone()))?;
                }
                Ok(())
            }
        }
    }
}

fn parse(raw: &RawValue) -> Value {
    // The text was parsed once already, so this cannot fail; `null` keeps it total.
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

impl From<Value> for EventData {
    fn from(value: Value) -> Self {
        Self {
            owned: value,
            lazy: None,
        }
    }
}

impl Deref for EventData {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl DerefMut for EventData {
    /// Changing a payload turns it into a plain value.
    fn deref_mut(&mut self) -> &mut Value {
        if let Some(lazy) = self.lazy.take() {
            self.owned = lazy.into_value();
        }
        &mut self.owned
    }
}

impl Clone for EventData {
    fn clone(&self) -> Self {
        match self.lazy.as_deref() {
            None => Self::from(self.owned.clone()),
            Some(Lazy {
                source: Source::Text(raw),
                ..
            }) => Self::from_raw(raw.clone()),
            Some(Lazy {
                source: Source::Chunk(fields),
                ..
            }) => Self::lazy(Source::Chunk(fields.clone())),
        }
    }
}

impl PartialEq for EventData {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(a), Some(b)) = (self.chunk_fields(), other.chunk_fields()) {
            return a == b;
        }
        if let (Some(a), Some(b)) = (self.raw_text(), other.raw_text())
            && a == b
        {
            return true;
        }
        self.with_value(|a| other.with_value(|b| a == b))
    }
}

impl PartialEq<Value> for EventData {
    fn eq(&self, other: &Value) -> bool {
        self.with_value(|value| value == other)
    }
}

impl fmt::Debug for EventData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_value(|value| fmt::Debug::fmt(value, f))
    }
}

impl Serialize for EventData {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.lazy.as_deref() {
            None => self.owned.serialize(serializer),
            Some(Lazy {
                source: Source::Chunk(fields),
                ..
            }) => fields.serialize(serializer),
            // Re-printed from the value, so the text is what `JSON.stringify` would write even
            // if the file was not (whitespace, number spellings).
            Some(Lazy {
                source: Source::Text(_),
                ..
            }) => self.with_value(|value| value.serialize(serializer)),
        }
    }
}
