//! One physical `events` row: read from SQLite, turned into events, or built from them.
//!
//! A *scalar* row is one event: `data` is its payload's JSON, `surface_op` the JSON of its
//! surface op, `source_event_seqs` a varint list, `ignorable` 1 or NULL. A *packed* row is a
//! run of streamed deltas: `type` is a chunk-row tag, `seq`/`time` are the first member's,
//! `data` is the row's data object, the surface columns are NULL and `ignorable = 0` marks it.
//! A row with `ignorable = 0` and any other type is malformed, so an event whose type happens
//! to be a tag name stays scalar and readable.

use std::borrow::Cow;

use dsh_persistence::chunk_rows::{ChunkKind, PackedRow};
use dsh_persistence::record::data_from_json_text;
use dsh_protocol::json::{MAX_SAFE_INTEGER, to_js_string};
use dsh_protocol::kinds;
use dsh_session::event::event_kind;
use dsh_session::{SessionEvent, SurfaceKeyOrder, SurfaceOp};
use rusqlite::Row;
use rusqlite::types::{Value as SqlValue, ValueRef};

use crate::data_column::{DataColumn, decode_data};
use crate::packing::{MAX_PACKED_DATA_BYTES, MAX_PACKED_ROW_MEMBERS, MIN_PACKED_ROW_MEMBERS};
use crate::varint::{decode_seqs, encode_seqs};

/// The `ignorable` value that marks a packed row.
const PACKED_ROW_SENTINEL: i64 = 0;

/// A row of `events` as stored, columns checked for type but not yet interpreted.
#[derive(Debug, Clone)]
pub(crate) struct EventRow {
    pub seq: u64,
    pub kind: String,
    pub time: i64,
    pub data: SqlValue,
    pub sources: Option<Vec<u8>>,
    pub surface_op: Option<String>,
    pub ignorable: Option<i64>,
}

impl EventRow {
    /// Reads `seq, type, time, data, source_event_seqs, surface_op, ignorable`.
    ///
    /// The outer error is SQLite's; the inner one a column that breaks the schema's types.
    pub fn read(row: &Row<'_>) -> rusqlite::Result<Result<Self, String>> {
        let seq: i64 = row.get(0)?;
        let kind = row.get_ref(1)?;
        let time: i64 = row.get(2)?;
        let data = row.get_ref(3)?;
        let sources = row.get_ref(4)?;
        let surface_op = row.get_ref(5)?;
        let ignorable: Option<i64> = row.get(6)?;
        Ok(Self::check(
            seq, kind, time, data, sources, surface_op, ignorable,
        ))
    }

    fn check(
        seq: i64,
        kind: ValueRef<'_>,
        time: i64,
        data: ValueRef<'_>,
        sources: ValueRef<'_>,
        surface_op: ValueRef<'_>,
        ignorable: Option<i64>,
    ) -> Result<Self, String> {
        let seq = u64::try_from(seq)
            .ok()
            .filter(|seq| *seq <= MAX_SAFE_INTEGER)
            .ok_or_else(|| format!("stored seq {seq} must be a non-negative safe integer"))?;
        let kind = match kind {
            ValueRef::Text(text) if !text.is_empty() => String::from_utf8(text.to_vec())
                .map_err(|_| format!("stored type at seq {seq} is not UTF-8"))?,
            _ => {
                return Err(format!(
                    "stored type at seq {seq} must be a non-empty string"
                ));
            }
        };
        if time.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(format!("stored time at seq {seq} must be a safe integer"));
        }
        let data = match data {
            ValueRef::Text(_) | ValueRef::Blob(_) => SqlValue::from(data),
            _ => return Err(format!("stored data at seq {seq} must be a string or blob")),
        };
        let sources = match sources {
            ValueRef::Null => None,
            ValueRef::Blob(bytes) => Some(bytes.to_vec()),
            _ => {
                return Err(format!(
                    "stored source_event_seqs at seq {seq} must be a blob or null"
                ));
            }
        };
        let surface_op = match surface_op {
            ValueRef::Null => None,
            ValueRef::Text(text) => Some(
                String::from_utf8(text.to_vec())
                    .map_err(|_| format!("stored surface_op at seq {seq} is not UTF-8"))?,
            ),
            _ => {
                return Err(format!(
                    "stored surface_op at seq {seq} must be a string or null"
                ));
            }
        };
        if ignorable.is_some_and(|flag| flag != 0 && flag != 1) {
            return Err(format!(
                "stored ignorable at seq {seq} must be 0, 1, or null"
            ));
        }
        Ok(Self {
            seq,
            kind,
            time,
            data,
            sources,
            surface_op,
            ignorable,
        })
    }

    /// Whether this is a packed row.
    pub fn is_packed(&self) -> bool {
        self.ignorable == Some(PACKED_ROW_SENTINEL)
    }

    /// Whether the row, if it decodes, holds a `turn/end`.
    pub fn may_close_turn(&self) -> bool {
        !self.is_packed() && self.kind == kinds::TURN_END
    }

    fn data_ref(&self) -> ValueRef<'_> {
        ValueRef::from(&self.data)
    }

    /// Appends the events the row stores to `out`; on error nothing is appended.
    pub fn decode_into(&self, out: &mut Vec<SessionEvent>) -> Result<(), String> {
        if self.is_packed() {
            self.decode_packed(out)
        } else {
            out.push(self.decode_scalar()?);
            Ok(())
        }
    }

    fn decode_packed(&self, out: &mut Vec<SessionEvent>) -> Result<(), String> {
        let malformed = |reason: &str| format!("malformed {} storage row: {reason}", self.kind);
        let Some(kind) = ChunkKind::from_tag(&self.kind) else {
            return Err(malformed("packed discriminator requires a chunk tag"));
        };
        if self.sources.is_some() || self.surface_op.is_some() {
            return Err(malformed("packed surface fields must be null"));
        }
        let text = decode_data(self.data_ref(), Some(MAX_PACKED_DATA_BYTES))
            .map_err(|reason| malformed(&reason))?;
        if text.len() > MAX_PACKED_DATA_BYTES {
            return Err(malformed(&format!(
                "data exceeds {MAX_PACKED_DATA_BYTES} UTF-8 bytes"
            )));
        }
        let data = serde_json::from_str(&text)
            .map_err(|error| malformed(&format!("data is not JSON: {error}")))?;
        // The seq was checked to be a safe integer when it was read, so it fits an i64.
        let row = PackedRow::from_data(kind, self.seq as i64, self.time, data)
            .map_err(|error| error.to_string())?;
        if !(MIN_PACKED_ROW_MEMBERS..=MAX_PACKED_ROW_MEMBERS).contains(&row.member_count()) {
            let key = if kind == ChunkKind::ToolCall {
                "args"
            } else {
                "texts"
            };
            return Err(malformed(&format!(
                "{key} must contain {MIN_PACKED_ROW_MEMBERS}..{MAX_PACKED_ROW_MEMBERS} strings"
            )));
        }
        row.into_events(out);
        Ok(())
    }

    fn decode_scalar(&self) -> Result<SessionEvent, String> {
        let at = |reason: String| format!("event at seq {}: {reason}", self.seq);
        let data = decode_data(self.data_ref(), None).map_err(at)?;
        let data = data_from_json_text(data).map_err(at)?;
        let source_event_seqs = self
            .sources
            .as_deref()
            .map(decode_seqs)
            .transpose()
            .map_err(|error| at(error.to_string()))?;
        let surface_op = self
            .surface_op
            .as_deref()
            .map(|text| {
                let value = serde_json::from_str(text)
                    .map_err(|_| "stored surface_op is not JSON".to_owned())?;
                SurfaceOp::from_json(&value).map_err(|error| error.reason)
            })
            .transpose()
            .map_err(at)?;
        Ok(SessionEvent {
            kind: event_kind(self.kind.clone()),
            seq: self.seq,
            time: self.time,
            data,
            source_event_seqs,
            surface_op,
            ignorable: self.ignorable == Some(1),
            surface_key_order: SurfaceKeyOrder::SourcesFirst,
        })
    }
}

/// Column values for one insert.
#[derive(Debug)]
pub(crate) struct BoundRow<'a> {
    pub seq: u64,
    pub kind: Cow<'a, str>,
    pub time: i64,
    pub data: DataColumn,
    pub sources: Option<Vec<u8>>,
    pub surface_op: Option<String>,
    pub ignorable: Option<i64>,
}

impl<'a> BoundRow<'a> {
    /// A scalar row for one event.
    pub fn scalar(event: &'a SessionEvent) -> Self {
        Self {
            seq: event.seq,
            kind: Cow::Borrowed(&event.kind),
            time: event.time,
            data: DataColumn::encode(to_js_string(&event.data)),
            sources: event.source_event_seqs.as_deref().map(encode_seqs),
            surface_op: event.surface_op.as_ref().map(to_js_string),
            ignorable: event.ignorable.then_some(1),
        }
    }

    /// A packed row, with its data object already serialized.
    pub fn packed(row: &PackedRow<'_>, data_json: String) -> Self {
        Self {
            seq: row.seq0(),
            kind: Cow::Borrowed(row.kind().tag()),
            time: row.time0(),
            data: DataColumn::encode(data_json),
            sources: None,
            surface_op: None,
            ignorable: Some(PACKED_ROW_SENTINEL),
        }
    }

    /// Inserts the row with `INSERT_EVENT`.
    pub fn insert(
        &self,
        statement: &mut rusqlite::Statement<'_>,
        id: &str,
    ) -> rusqlite::Result<()> {
        // Seqs are safe integers (below 2^53), so they fit an i64.
        let seq = self.seq as i64;
        statement.execute(rusqlite::params![
            id,
            seq,
            self.kind.as_ref(),
            self.time,
            self.data.to_sql(),
            self.sources.as_deref(),
            self.surface_op.as_deref(),
            self.ignorable,
        ])?;
        Ok(())
    }
}
