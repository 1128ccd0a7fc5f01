//! [`PackedRow`]: a run of delta chunk events held as one row, and its `data` object.

use std::borrow::Cow;

use dsh_protocol::json::to_js_string;
use dsh_protocol::kinds;
use dsh_session::data::ChunkFields;
use dsh_session::event::SurfaceKeyOrder;
use dsh_session::{EventData, SessionEvent};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};

use super::decode::decode_row;
use super::{ChunkKind, ChunkRowError};

/// A run of delta chunk events stored as one row.
///
/// A row is always well formed: it has at least one member, one time gap fewer than members,
/// member seqs and times that stay safe integers, and a call id exactly when it is a tool-call
/// row. It borrows from the events it packs, or owns what it decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedRow<'a> {
    pub(super) kind: ChunkKind,
    pub(super) seq0: u64,
    pub(super) time0: i64,
    pub(super) turn: Number,
    pub(super) step: Number,
    pub(super) index: Number,
    pub(super) dt: Vec<i64>,
    /// The call's `id` and optional `name` (tool-call rows only).
    pub(super) call: Option<(Cow<'a, str>, Option<Cow<'a, str>>)>,
    /// Each member's `text` or `argumentsDelta`, never joined: token boundaries are data.
    pub(super) members: Vec<Cow<'a, str>>,
}

impl PackedRow<'_> {
    /// The delta kind of every member.
    pub fn kind(&self) -> ChunkKind {
        self.kind
    }

    /// The first member's seq; member `k` has seq `seq0 + k`.
    pub fn seq0(&self) -> u64 {
        self.seq0
    }

    /// The first member's time.
    pub fn time0(&self) -> i64 {
        self.time0
    }

    /// How many events the row stores (at least one).
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// The row's `data` object as `JSON.stringify` writes it (what a database column holds).
    pub fn data_json(&self) -> String {
        to_js_string(&RowData(self))
    }

    /// The `len` members from `start` as a row of their own, borrowing this one; `None` when
    /// the range is empty or out of bounds.
    pub fn slice(&self, start: usize, len: usize) -> Option<PackedRow<'_>> {
        let end = start
            .checked_add(len)
            .filter(|end| len > 0 && *end <= self.members.len())?;
        let skipped: i64 = self.dt.get(..start)?.iter().sum();
        Some(PackedRow {
            kind: self.kind,
            seq0: self.seq0 + start as u64,
            time0: self.time0 + skipped,
            turn: self.turn.clone(),
            step: self.step.clone(),
            index: self.index.clone(),
            dt: self.dt.get(start..end - 1)?.to_vec(),
            call: self.call.as_ref().map(|(id, name)| {
                (
                    Cow::Borrowed(id.as_ref()),
                    name.as_ref().map(|name| Cow::Borrowed(name.as_ref())),
                )
            }),
            members: self
                .members
                .get(start..end)?
                .iter()
                .map(|member| Cow::Borrowed(member.as_ref()))
                .collect(),
        })
    }

    /// A row from its parts as a database stores them: the tag's kind, `seq0`, `time0` and the
    /// parsed `data` object, validated as strictly as a JSONL row.
    pub fn from_data(
        kind: ChunkKind,
        seq0: i64,
        time0: i64,
        data: Value,
    ) -> Result<PackedRow<'static>, ChunkRowError> {
        let mut map = Map::with_capacity(4);
        map.insert("type".into(), Value::String(kind.tag().into()));
        map.insert("seq0".into(), Value::from(seq0));
        map.insert("time0".into(), Value::from(time0));
        map.insert("data".into(), data);
        decode_row(kind, map)
    }

    /// A row that owns all its parts.
    pub fn into_owned(self) -> PackedRow<'static> {
        PackedRow {
            kind: self.kind,
            seq0: self.seq0,
            time0: self.time0,
            turn: self.turn,
            step: self.step,
            index: self.index,
            dt: self.dt,
            call: self.call.map(|(id, name)| {
                (
                    Cow::Owned(id.into_owned()),
                    name.map(|name| Cow::Owned(name.into_owned())),
                )
            }),
            members: self
                .members
                .into_iter()
                .map(|member| Cow::Owned(member.into_owned()))
                .collect(),
        }
    }

    /// Appends the exact `assistant/chunk` events the row stores to `out`, in log order.
    pub fn into_events(self, out: &mut Vec<SessionEvent>) {
        let (turn, step, index) = (self.turn, self.step, self.index);
        let call = self
            .call
            .map(|(id, name)| (id.into_owned(), name.map(Cow::into_owned)));
        let delta_type = self.kind.delta_type();
        out.reserve(self.members.len());
        let mut seq = self.seq0;
        let mut time = self.time0;
        let gaps = std::iter::once(0).chain(self.dt);
        for (member, gap) in self.members.into_iter().zip(gaps) {
            time = time.saturating_add(gap);
            let fields = ChunkFields {
                turn: turn.clone(),
                step: step.clone(),
                delta_type,
                index: index.clone(),
                call: call.clone(),
                text: member.into_owned(),
            };
            out.push(SessionEvent {
                kind: Cow::Borrowed(kinds::ASSISTANT_CHUNK),
                seq,
                time,
                data: EventData::from_chunk(fields),
                source_event_seqs: None,
                surface_op: None,
                ignorable: false,
                surface_key_order: SurfaceKeyOrder::SourcesFirst,
            });
            seq = seq.saturating_add(1);
        }
    }
}

impl Serialize for PackedRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("type", self.kind.tag())?;
        map.serialize_entry("seq0", &self.seq0)?;
        map.serialize_entry("time0", &self.time0)?;
        map.serialize_entry("data", &RowData(self))?;
        map.end()
    }
}

/// A row's `data` object: `turn, step, index, dt`, then `texts` or `id, name?, args`.
struct RowData<'r, 'a>(&'r PackedRow<'a>);

impl Serialize for RowData<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let row = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("turn", &row.turn)?;
        map.serialize_entry("step", &row.step)?;
        map.serialize_entry("index", &row.index)?;
        map.serialize_entry("dt", &row.dt)?;
        match &row.call {
            Some((id, name)) => {
                map.serialize_entry("id", id)?;
                if let Some(name) = name {
                    map.serialize_entry("name", name)?;
                }
                map.serialize_entry("args", &row.members)?;
            }
            None => map.serialize_entry("texts", &row.members)?,
        }
        map.end()
    }
}
