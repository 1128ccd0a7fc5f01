//! The top-level fields of a JSON object, read as text without building a tree.
//!
//! Checks on stored events look at a few keys of large payloads (a message's `id`, `role`,
//! `source` and block types); reading the object's fields as slices of its text keeps them from
//! parsing, or copying, the text of the rest.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// An object's top-level fields in written order: each key and its value's JSON text.
pub type RawFields<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// Deserializes an object into its [`RawFields`].
struct Fields<'a>(RawFields<'a>);

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
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// The top-level fields of a JSON object's text; `None` when the text is not an object.
pub fn object_fields(text: &str) -> Option<RawFields<'_>> {
    serde_json::from_str::<Fields<'_>>(text)
        .ok()
        .map(|Fields(fields)| fields)
}

/// The top-level fields of a JSON object held as bytes (a stored line); `None` when the bytes
/// are not one JSON object.
pub fn object_fields_of_bytes(bytes: &[u8]) -> Option<RawFields<'_>> {
    serde_json::from_slice::<Fields<'_>>(bytes)
        .ok()
        .map(|Fields(fields)| fields)
}

/// A field's value parsed into a tree (for the small fields: `type`, `seq`, ...); `null` when
/// it does not parse, which text already read as JSON always does.
pub fn field_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
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
                message.insert(key.into_owned(), field_value(raw));
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
        .map(|(key, raw)| (key.into_owned(), field_value(raw)))
        .collect();
    Value::Object(kept)
}
