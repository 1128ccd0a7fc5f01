//! Packed chunk rows: the lossless storage encoding of streamed delta runs.
//!
//! Providers stream token-sized deltas, so a log holds hundreds of near-identical
//! `assistant/chunk` lines whose envelopes dwarf their payloads. A run of at least [`MIN_RUN`]
//! consecutive deltas of one block is stored as one row instead, exactly as dsh 0.1 does:
//!
//! ```text
//! {"type":"text-chunks","seq0":N,"time0":T,"data":{"turn":..,"step":..,"index":..,"dt":[..],"texts":[..]}}
//! {"type":"tool-call-chunks","seq0":N,"time0":T,"data":{"turn":..,"step":..,"index":..,"dt":[..],"id":"..","name":"..","args":[..]}}
//! ```
//!
//! (`reasoning-chunks` rows look like `text-chunks` rows; `name` is present only when every
//! member carried it.) Member `k` decodes to seq `seq0 + k` and time `time0 + dt[0] + … +
//! dt[k-1]`. Rows are a storage vocabulary, never session events.
//!
//! [`pack_chunk_runs`] only packs events whose whole shape it recognizes, keys in the order dsh
//! writes them; anything else is stored verbatim, so an unusual event loses compression, never
//! data or bytes. (dsh 0.1 also packs deltas whose keys come in another order, rewriting them in
//! its own order on read; we keep them verbatim so every log reads back byte for byte.)
//! [`decode_record`] validates a row strictly before expanding it and refuses a malformed one
//! with dsh 0.1's message, rather than silently dropping a run.

use std::borrow::{Borrow, Cow};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};

use crate::data::{ChunkFields, EventData};
use crate::event::{EnvelopeError, SessionEvent, SurfaceKeyOrder, safe_i64};
use dsh_protocol::json::{MAX_SAFE_INTEGER, to_js_string};

/// The fewest members a run needs to be packed; shorter runs are stored event by event.
///
/// A format constant: both layouts decode the same, so changing it never invalidates a log.
pub const MIN_RUN: usize = 3;

/// The delta kind a row packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkKind {
    /// `text-delta` chunks, stored as a `text-chunks` row.
    Text,
    /// `reasoning-delta` chunks, stored as a `reasoning-chunks` row.
    Reasoning,
    /// `tool-call-delta` chunks of one call, stored as a `tool-call-chunks` row.
    ToolCall,
}

impl ChunkKind {
    /// The row's `type` tag: `text-chunks`, `reasoning-chunks` or `tool-call-chunks`.
    pub const fn tag(self) -> &'static str {
        match self {
            Self::Text => "text-chunks",
            Self::Reasoning => "reasoning-chunks",
            Self::ToolCall => "tool-call-chunks",
        }
    }

    /// The kind whose row tag is `tag`, if any.
    pub fn from_tag(tag: &str) -> Option<Self> {
        match tag {
            "text-chunks" => Some(Self::Text),
            "reasoning-chunks" => Some(Self::Reasoning),
            "tool-call-chunks" => Some(Self::ToolCall),
            _ => None,
        }
    }

    /// The `type` of the stream chunks a row of this kind holds, such as `text-delta`.
    pub const fn delta_type(self) -> &'static str {
        match self {
            Self::Text => "text-delta",
            Self::Reasoning => "reasoning-delta",
            Self::ToolCall => "tool-call-delta",
        }
    }
}

/// A run of delta chunk events stored as one row.
///
/// A row is always well formed: it has at least one member, one time gap fewer than members,
/// member seqs and times that stay safe integers, and a call id exactly when it is a tool-call
/// row. It borrows from the events it packs, or owns what it decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedRow<'a> {
    kind: ChunkKind,
    seq0: u64,
    time0: i64,
    turn: Number,
    step: Number,
    index: Number,
    dt: Vec<i64>,
    /// The call's `id` and optional `name` (tool-call rows only).
    call: Option<(Cow<'a, str>, Option<Cow<'a, str>>)>,
    /// Each member's `text` or `argumentsDelta`, never joined: token boundaries are data.
    members: Vec<Cow<'a, str>>,
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
                kind: Cow::Borrowed("assistant/chunk"),
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

/// One line of a JSONL log (or one physical row): an event stored verbatim, or a packed run.
///
/// Serializing it (with [`dsh_protocol::json::write_js`]) gives dsh's line text exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageRecord<'a> {
    /// An event stored as itself.
    Event(Cow<'a, SessionEvent>),
    /// A run of delta chunk events stored as one row.
    Packed(PackedRow<'a>),
}

impl StorageRecord<'_> {
    /// How many events the record stores.
    pub fn event_count(&self) -> usize {
        match self {
            Self::Event(_) => 1,
            Self::Packed(row) => row.member_count(),
        }
    }

    /// The seq of the record's first event.
    pub fn first_seq(&self) -> u64 {
        match self {
            Self::Event(event) => event.seq,
            Self::Packed(row) => row.seq0,
        }
    }

    /// A record that owns all its parts.
    pub fn into_owned(self) -> StorageRecord<'static> {
        match self {
            Self::Event(event) => StorageRecord::Event(Cow::Owned(event.into_owned())),
            Self::Packed(row) => StorageRecord::Packed(row.into_owned()),
        }
    }

    /// Appends the events the record stores to `out`, in log order.
    pub fn into_events(self, out: &mut Vec<SessionEvent>) {
        match self {
            Self::Event(event) => out.push(event.into_owned()),
            Self::Packed(row) => row.into_events(out),
        }
    }
}

impl Serialize for StorageRecord<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Event(event) => event.serialize(serializer),
            Self::Packed(row) => row.serialize(serializer),
        }
    }
}

/// A line that does not decode to events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkRowError {
    /// A value tagged as a chunk row is not a valid row (dsh 0.1's message).
    #[error("malformed {tag} storage row: {reason}")]
    Malformed {
        /// The row's tag, such as `text-chunks`.
        tag: &'static str,
        /// What is wrong, such as `dt length 2 does not match 2 members`.
        reason: Cow<'static, str>,
    },
    /// A value not tagged as a row is not a valid event envelope.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    /// The value is not a JSON object.
    #[error("storage record must be a JSON object")]
    NotAnObject,
}

/// A delta chunk event whose whole shape [`pack_chunk_runs`] recognized.
struct Delta<'a> {
    event: &'a SessionEvent,
    kind: ChunkKind,
    turn: &'a Number,
    step: &'a Number,
    index: &'a Number,
    /// The call's `id` and optional `name` (tool-call deltas only).
    call: Option<(&'a str, Option<&'a str>)>,
    /// `text` or `argumentsDelta`.
    payload: &'a str,
}

/// Recognizes a packable delta: envelope exactly `type, seq, time, data` with safe integers,
/// data exactly `{turn, step, chunk}`, and the chunk exactly `{type, index, text}` or
/// `{type, index, id, name?, argumentsDelta}`, numbers and strings where dsh writes them, keys
/// in dsh's order.
fn classify(event: &SessionEvent) -> Option<Delta<'_>> {
    if event.kind != "assistant/chunk"
        || event.source_event_seqs.is_some()
        || event.surface_op.is_some()
        || event.ignorable
        || event.seq > MAX_SAFE_INTEGER
        || event.time.unsigned_abs() > MAX_SAFE_INTEGER
    {
        return None;
    }
    let mut data = event.data.as_object()?.iter();
    let turn = entry(data.next(), "turn")?.as_number()?;
    let step = entry(data.next(), "step")?.as_number()?;
    let chunk = entry(data.next(), "chunk")?.as_object()?;
    if data.next().is_some() {
        return None;
    }
    let mut fields = chunk.iter();
    let delta_type = entry(fields.next(), "type")?.as_str()?;
    let index = entry(fields.next(), "index")?.as_number()?;
    let (kind, call, payload) = match delta_type {
        "text-delta" | "reasoning-delta" => {
            let text = entry(fields.next(), "text")?.as_str()?;
            let kind = if delta_type == "text-delta" {
                ChunkKind::Text
            } else {
                ChunkKind::Reasoning
            };
            (kind, None, text)
        }
        "tool-call-delta" => {
            let id = entry(fields.next(), "id")?.as_str()?;
            let (key, value) = fields.next()?;
            let (name, arguments) = match key.as_str() {
                "name" => (
                    Some(value.as_str()?),
                    entry(fields.next(), "argumentsDelta")?,
                ),
                "argumentsDelta" => (None, value),
                _ => return None,
            };
            (ChunkKind::ToolCall, Some((id, name)), arguments.as_str()?)
        }
        _ => return None,
    };
    if fields.next().is_some() {
        return None;
    }
    Some(Delta {
        event,
        kind,
        turn,
        step,
        index,
        call,
        payload,
    })
}

/// The value of a map entry if its key is `key`.
fn entry<'a>(entry: Option<(&'a String, &'a Value)>, key: &str) -> Option<&'a Value> {
    entry.and_then(|(name, value)| (name == key).then_some(value))
}

/// JavaScript's `a === b` between two numbers.
fn same_number(a: &Number, b: &Number) -> bool {
    a.as_f64() == b.as_f64()
}

/// Whether `next` extends a run ending in `prev` (same kind).
fn continues(prev: &Delta<'_>, next: &Delta<'_>) -> bool {
    // Two safe times can lie further apart than a double subtracts exactly; such a gap would
    // decode to another time, so it ends the run.
    prev.event.seq.checked_add(1) == Some(next.event.seq)
        && next.event.time.abs_diff(prev.event.time) <= MAX_SAFE_INTEGER
        && same_number(prev.turn, next.turn)
        && same_number(prev.step, next.step)
        && same_number(prev.index, next.index)
        // A tool-call run shares the id and the presence and value of `name`.
        && prev.call == next.call
}

/// Packs a batch of events for storage, in order.
///
/// Every run of at least [`MIN_RUN`] consecutive recognized delta chunk events with contiguous
/// seqs, the same kind, turn, step and block index (and, for tool calls, the same id and name),
/// whose time gaps are safe integers, becomes one [`PackedRow`]; every other event is stored as
/// itself. Stateless: a run split across two batches packs per batch. The records borrow from
/// `events`.
pub fn pack_chunk_runs<E: Borrow<SessionEvent>>(events: &[E]) -> Vec<StorageRecord<'_>> {
    let mut out = Vec::with_capacity(events.len());
    let mut run: Vec<Delta<'_>> = Vec::new();
    for event in events {
        let event: &SessionEvent = event.borrow();
        let Some(delta) = classify(event) else {
            flush_run(&mut run, &mut out);
            out.push(StorageRecord::Event(Cow::Borrowed(event)));
            continue;
        };
        let extends = run
            .last()
            .is_some_and(|last| last.kind == delta.kind && continues(last, &delta));
        if !extends {
            flush_run(&mut run, &mut out);
        }
        run.push(delta);
    }
    flush_run(&mut run, &mut out);
    out
}

/// Emits the finished run as one row, or event by event when it is too short, and empties it.
fn flush_run<'a>(run: &mut Vec<Delta<'a>>, out: &mut Vec<StorageRecord<'a>>) {
    if run.len() < MIN_RUN {
        out.extend(
            run.drain(..)
                .map(|delta| StorageRecord::Event(Cow::Borrowed(delta.event))),
        );
        return;
    }
    let Some(first) = run.first() else { return };
    let row = PackedRow {
        kind: first.kind,
        seq0: first.event.seq,
        time0: first.event.time,
        turn: first.turn.clone(),
        step: first.step.clone(),
        index: first.index.clone(),
        dt: run
            .iter()
            .zip(run.iter().skip(1))
            .map(|(a, b)| b.event.time - a.event.time)
            .collect(),
        call: first
            .call
            .map(|(id, name)| (Cow::Borrowed(id), name.map(Cow::Borrowed))),
        members: run
            .iter()
            .map(|delta| Cow::Borrowed(delta.payload))
            .collect(),
    };
    out.push(StorageRecord::Packed(row));
    run.clear();
}

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
fn decode_row(
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

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::event::SurfaceOp;
    use dsh_protocol::json::to_js_string;

    fn chunk_event(seq: u64, time: i64, chunk: Value) -> SessionEvent {
        chunk_at(seq, time, chunk, 1, 1)
    }

    fn chunk_at(seq: u64, time: i64, chunk: Value, turn: u64, step: u64) -> SessionEvent {
        SessionEvent::new(
            "assistant/chunk",
            seq,
            time,
            json!({"turn": turn, "step": step, "chunk": chunk}),
        )
    }

    /// `count` deltas of one kind, contiguous seqs, 10 ms apart.
    fn delta_run(kind: &str, count: u64, seq0: u64, index: u64) -> Vec<SessionEvent> {
        (0..count)
            .map(|k| {
                #[allow(clippy::cast_possible_wrap)]
                let time = 1000 + 10 * k as i64;
                chunk_event(
                    seq0 + k,
                    time,
                    json!({"type": kind, "index": index, "text": format!("t{k}")}),
                )
            })
            .collect()
    }

    fn tool_delta(seq: u64, time: i64, id: &str, name: Option<&str>, args: &str) -> SessionEvent {
        let mut chunk = json!({"type": "tool-call-delta", "index": 0, "id": id});
        if let Some(name) = name {
            chunk["name"] = json!(name);
        }
        chunk["argumentsDelta"] = json!(args);
        chunk_event(seq, time, chunk)
    }

    fn lines(records: &[StorageRecord<'_>]) -> Vec<String> {
        records.iter().map(to_js_string).collect()
    }

    /// Writes the records as JSONL text, parses each line back and decodes it.
    fn decode_all(records: &[StorageRecord<'_>]) -> Vec<SessionEvent> {
        let mut out = Vec::new();
        for line in lines(records) {
            let count = decode_record_into(serde_json::from_str(&line).unwrap(), &mut out).unwrap();
            assert!(count >= 1);
        }
        out
    }

    fn texts(events: &[SessionEvent]) -> Vec<String> {
        events.iter().map(to_js_string).collect()
    }

    /// Packing stored each event as itself.
    fn all_verbatim(events: &[SessionEvent]) -> bool {
        let records = pack_chunk_runs(events);
        records.len() == events.len()
            && records.iter().zip(events).all(|(record, event)| {
                matches!(record, StorageRecord::Event(stored) if std::ptr::eq(stored.as_ref(), event))
            })
    }

    #[test]
    fn packs_a_text_delta_run_into_one_row_and_round_trips_it() {
        let events = delta_run("text-delta", 5, 0, 0);
        let packed = pack_chunk_runs(&events);
        assert_eq!(packed.len(), 1);
        let StorageRecord::Packed(row) = &packed[0] else {
            panic!("not packed")
        };
        assert_eq!(
            (row.kind(), row.seq0(), row.time0(), row.member_count()),
            (ChunkKind::Text, 0, 1000, 5)
        );
        assert_eq!(
            to_js_string(&packed[0]),
            r#"{"type":"text-chunks","seq0":0,"time0":1000,"data":{"turn":1,"step":1,"index":0,"dt":[10,10,10,10],"texts":["t0","t1","t2","t3","t4"]}}"#
        );
        let decoded = decode_all(&packed);
        assert_eq!(decoded, events);
        assert_eq!(texts(&decoded), texts(&events));
    }

    #[test]
    fn packs_reasoning_and_tool_call_runs_under_their_own_tags() {
        let mut events = delta_run("reasoning-delta", 3, 0, 0);
        for seq in 4..=6 {
            let mut event = tool_delta(
                seq,
                1000 + seq as i64,
                "c1",
                Some("write"),
                &format!("a{seq}"),
            );
            event.data["chunk"]["index"] = json!(1);
            events.push(event);
        }
        // Seq 3 is missing: the runs are not contiguous with each other anyway.
        let packed = pack_chunk_runs(&events);
        let tags: Vec<_> = packed
            .iter()
            .map(|record| match record {
                StorageRecord::Packed(row) => row.kind().tag(),
                StorageRecord::Event(_) => "event",
            })
            .collect();
        assert_eq!(tags, ["reasoning-chunks", "tool-call-chunks"]);
        assert_eq!(
            to_js_string(&packed[1]),
            r#"{"type":"tool-call-chunks","seq0":4,"time0":1004,"data":{"turn":1,"step":1,"index":1,"dt":[1,1],"id":"c1","name":"write","args":["a4","a5","a6"]}}"#
        );
        assert_eq!(decode_all(&packed), events);
    }

    #[test]
    fn packs_a_nameless_tool_call_run_and_round_trips_the_absence() {
        let events: Vec<_> = (0..3)
            .map(|seq| tool_delta(seq, 1000, "c1", None, &format!("a{seq}")))
            .collect();
        let packed = pack_chunk_runs(&events);
        assert_eq!(packed.len(), 1);
        let line = to_js_string(&packed[0]);
        assert!(!line.contains("name"), "{line}");
        let decoded = decode_all(&packed);
        assert_eq!(decoded, events);
        assert!(
            decoded
                .iter()
                .all(|event| event.data["chunk"].get("name").is_none())
        );
    }

    #[test]
    fn leaves_runs_shorter_than_three_verbatim() {
        assert!(all_verbatim(&delta_run("text-delta", 2, 0, 0)));
    }

    #[test]
    fn leaves_non_delta_chunks_and_other_events_verbatim_between_runs() {
        let mut events = vec![chunk_event(
            0,
            1000,
            json!({"type": "block-start", "index": 0, "blockType": "text"}),
        )];
        events.extend(delta_run("text-delta", 3, 1, 0));
        events.push(chunk_event(
            4,
            1040,
            json!({"type": "block-end", "index": 0, "block": {"type": "text", "text": "t0t1t2"}}),
        ));
        events.push(SessionEvent::new(
            "step/end",
            5,
            1050,
            json!({"turn": 1, "step": 1}),
        ));
        let packed = pack_chunk_runs(&events);
        assert_eq!(packed.len(), 4);
        assert!(matches!(&packed[1], StorageRecord::Packed(row) if row.kind() == ChunkKind::Text));
        assert_eq!(decode_all(&packed), events);
    }

    #[test]
    fn breaks_a_run_on_a_seq_gap_kind_index_or_step_switch() {
        let mut seq_gap = delta_run("text-delta", 3, 0, 0);
        seq_gap[2].seq = 9;
        let mut kind_switch = delta_run("text-delta", 2, 0, 0);
        kind_switch.extend(delta_run("reasoning-delta", 1, 2, 0));
        let mut index_switch = delta_run("text-delta", 2, 0, 0);
        index_switch.extend(delta_run("text-delta", 1, 2, 7));
        let mut step_switch = delta_run("text-delta", 3, 0, 0);
        step_switch[2].data["step"] = json!(2);
        let mut turn_switch = delta_run("text-delta", 3, 0, 0);
        turn_switch[2].data["turn"] = json!(2);
        for (label, events) in [
            ("a seq gap", seq_gap),
            ("a kind switch", kind_switch),
            ("a block-index switch", index_switch),
            ("a step switch", step_switch),
            ("a turn switch", turn_switch),
        ] {
            assert!(all_verbatim(&events), "{label}");
        }
    }

    #[test]
    fn breaks_a_tool_call_run_on_a_call_id_or_name_change() {
        let id_switch = [
            tool_delta(0, 1000, "c1", Some("w"), "a"),
            tool_delta(1, 1000, "c1", Some("w"), "a"),
            tool_delta(2, 1000, "c2", Some("w"), "a"),
        ];
        assert!(all_verbatim(&id_switch));
        let name_presence = [
            tool_delta(0, 1000, "c1", Some("w"), "a"),
            tool_delta(1, 1000, "c1", Some("w"), "a"),
            tool_delta(2, 1000, "c1", None, "a"),
        ];
        assert!(all_verbatim(&name_presence));
        let name_value = [
            tool_delta(0, 1000, "c1", Some("w"), "a"),
            tool_delta(1, 1000, "c1", Some("w"), "a"),
            tool_delta(2, 1000, "c1", Some("r"), "a"),
        ];
        assert!(all_verbatim(&name_value));
    }

    #[test]
    fn stores_off_whitelist_deltas_verbatim() {
        let text = |seq| {
            chunk_event(
                seq,
                1000,
                json!({"type": "text-delta", "index": 0, "text": "x"}),
            )
        };
        let mut surface = text(0);
        surface.surface_op = Some(SurfaceOp::Append);
        let mut sources = text(1);
        sources.source_event_seqs = Some(vec![0]);
        let mut ignorable = text(2);
        ignorable.ignorable = true;
        let bad_text = chunk_event(
            3,
            1000,
            json!({"type": "text-delta", "index": 0, "text": 7}),
        );
        let mut other_kind = text(4);
        other_kind.kind = Cow::Borrowed("assistant/chunks");
        let mut unsafe_time = text(5);
        unsafe_time.time = i64::MAX;
        let mut unsafe_seq = text(6);
        unsafe_seq.seq = MAX_SAFE_INTEGER + 1;
        assert!(all_verbatim(&[
            surface,
            sources,
            ignorable,
            bad_text,
            other_kind,
            unsafe_time,
            unsafe_seq
        ]));
    }

    #[test]
    fn breaks_a_run_on_a_time_gap_beyond_safe_range() {
        let a = -(MAX_SAFE_INTEGER as i64);
        let b = MAX_SAFE_INTEGER as i64 - 1;
        let events = [
            chunk_event(0, a, json!({"type": "text-delta", "index": 0, "text": "x"})),
            chunk_event(1, b, json!({"type": "text-delta", "index": 0, "text": "y"})),
            chunk_event(
                2,
                b + 1,
                json!({"type": "text-delta", "index": 0, "text": "z"}),
            ),
        ];
        assert!(all_verbatim(&events));
        assert_eq!(decode_all(&pack_chunk_runs(&events)), events);
    }

    #[test]
    fn stores_deltas_with_off_whitelist_data_verbatim() {
        let mk = |seq, data: Value| SessionEvent::new("assistant/chunk", seq, 1000, data);
        let events = [
            mk(0, json!("not-an-object")),
            mk(
                1,
                json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}, "extra": 1}),
            ),
            mk(
                2,
                json!({"turn": "x", "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}),
            ),
            mk(3, json!({"turn": 1, "step": 1, "chunk": "not-an-object"})),
            mk(
                4,
                json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": "x", "text": "a"}}),
            ),
            mk(
                5,
                json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": 7, "argumentsDelta": "a"}}),
            ),
            mk(
                6,
                json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "name": 7, "argumentsDelta": "a"}}),
            ),
            mk(
                7,
                json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a", "extra": 1}}),
            ),
            mk(
                8,
                json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0}}),
            ),
            mk(
                9,
                json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "a", "name": "n"}}),
            ),
            mk(
                10,
                json!({"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": {}}}),
            ),
            mk(11, json!({"turn": 1, "step": 1})),
        ];
        assert!(all_verbatim(&events));
    }

    #[test]
    fn keeps_deltas_with_keys_in_another_order_verbatim() {
        // dsh 0.1 would pack these and read them back in its own key order; we keep the bytes.
        let reordered = |seq| {
            let data: Value = serde_json::from_str(
                r#"{"step":1,"turn":1,"chunk":{"index":0,"type":"text-delta","text":"a"}}"#,
            )
            .unwrap();
            SessionEvent::new("assistant/chunk", seq, 1000, data)
        };
        let events = [reordered(0), reordered(1), reordered(2)];
        assert!(all_verbatim(&events));
        assert_eq!(
            texts(&decode_all(&pack_chunk_runs(&events))),
            texts(&events)
        );
    }

    #[test]
    fn numbers_equal_in_javascript_share_a_run() {
        let mut events = delta_run("text-delta", 3, 0, 0);
        events[1].data["turn"] = json!(1.0);
        events[2].data["chunk"]["index"] = json!(0.0);
        let packed = pack_chunk_runs(&events);
        assert_eq!(packed.len(), 1);
        assert_eq!(texts(&decode_all(&packed)), texts(&events));
    }

    #[test]
    fn splits_runs_across_batches() {
        let events = delta_run("text-delta", 8, 0, 0);
        let first = pack_chunk_runs(&events[..4]);
        let second = pack_chunk_runs(&events[4..]);
        assert_eq!((first.len(), second.len()), (1, 1));
        assert_eq!(second[0].first_seq(), 4);
        let mut decoded = decode_all(&first);
        decoded.extend(decode_all(&second));
        assert_eq!(decoded, events);
    }

    #[test]
    fn passes_non_row_objects_through_as_events() {
        let line = r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#;
        let record = decode_record(serde_json::from_str(line).unwrap()).unwrap();
        assert!(matches!(&record, StorageRecord::Event(_)));
        assert_eq!(to_js_string(&record), line);
        assert_eq!(
            decode_record(json!("junk")),
            Err(ChunkRowError::NotAnObject)
        );
        assert_eq!(decode_record(json!(null)), Err(ChunkRowError::NotAnObject));
        assert_eq!(decode_record(json!([1])), Err(ChunkRowError::NotAnObject));
        let error = decode_record(json!({"type": "x/y", "seq": 0, "time": 1})).unwrap_err();
        assert_eq!(error.to_string(), "data is missing");
        // A tag that is not a string is no row tag.
        let error = decode_record(json!({"type": 7, "seq0": 0})).unwrap_err();
        assert_eq!(error.to_string(), "type must be a string");
    }

    #[test]
    fn reconstructs_times_through_negative_gaps() {
        let events = [
            chunk_event(
                0,
                1000,
                json!({"type": "text-delta", "index": 0, "text": "a"}),
            ),
            chunk_event(
                1,
                990,
                json!({"type": "text-delta", "index": 0, "text": "b"}),
            ),
            chunk_event(
                2,
                995,
                json!({"type": "text-delta", "index": 0, "text": "c"}),
            ),
        ];
        let packed = pack_chunk_runs(&events);
        assert!(to_js_string(&packed[0]).contains(r#""dt":[-10,5]"#));
        assert_eq!(decode_all(&packed), events);
    }

    #[test]
    fn decodes_rows_with_javascript_numbers() {
        let row = json!({"type": "text-chunks", "seq0": 2.0, "time0": -0.0, "data": {"dt": [1e3, -0.0], "texts": ["a", "b", "c"], "turn": 1.5, "step": 1, "index": 0}});
        let mut out = Vec::new();
        assert_eq!(decode_record_into(row, &mut out), Ok(3));
        assert_eq!(
            texts(&out),
            [
                r#"{"type":"assistant/chunk","seq":2,"time":0,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}"#,
                r#"{"type":"assistant/chunk","seq":3,"time":1000,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"b"}}}"#,
                r#"{"type":"assistant/chunk","seq":4,"time":1000,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"c"}}}"#,
            ]
        );
    }

    #[test]
    fn dsh_rows_decode_and_repack_byte_for_byte() {
        // Rows from dsh 0.1's packed-chunks scenario, with the envelope the fixture normalizes away.
        let rows = [
            r#"{"type":"reasoning-chunks","seq0":7,"time0":1754000000000,"data":{"turn":1,"step":1,"index":0,"dt":[0,0,1,0,0,28],"texts":["The"," user"," wants"," me"," to"," run","\n\u0001é"]}}"#,
            r#"{"type":"tool-call-chunks","seq0":14,"time0":1754000000058,"data":{"turn":1,"step":1,"index":1,"dt":[0,28,1,0],"id":"call_00_JliP571Bh0QQ8QExbSPk0080","name":"bash","args":["","{","\"","command","\""]}}"#,
            r#"{"type":"text-chunks","seq0":19,"time0":1754000000087,"data":{"turn":1,"step":2,"index":1,"dt":[29,0],"texts":["The"," tool"," returned"]}}"#,
        ];
        let mut events = Vec::new();
        for row in rows {
            let record = decode_record(serde_json::from_str(row).unwrap()).unwrap();
            assert_eq!(to_js_string(&record), row);
            record.into_events(&mut events);
        }
        assert_eq!(events.len(), 15);
        assert_eq!(lines(&pack_chunk_runs(&events)), rows);
    }

    #[test]
    fn refuses_malformed_rows() {
        let text =
            |data: Value| json!({"type": "text-chunks", "seq0": 0, "time0": 1, "data": data});
        let ok_data = json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]});
        let mut extra_key = text(ok_data.clone());
        extra_key["extra"] = json!(1);
        let mut no_data = text(ok_data.clone());
        no_data.as_object_mut().unwrap().remove("data");
        let mut negative_seq0 = text(ok_data.clone());
        negative_seq0["seq0"] = json!(-1);
        let mut unsafe_seq0 = text(ok_data.clone());
        unsafe_seq0["seq0"] = json!(MAX_SAFE_INTEGER + 1);
        let mut null_time0 = text(ok_data.clone());
        null_time0["time0"] = json!(null);
        let mut fractional_time0 = text(ok_data);
        fractional_time0["time0"] = json!(1.5);
        let tool =
            |data: Value| json!({"type": "tool-call-chunks", "seq0": 0, "time0": 1, "data": data});
        let cases = [
            (
                "a non-object data",
                text(json!("x")),
                "text-chunks",
                "data must be an object",
            ),
            (
                "an array data",
                text(json!([1])),
                "text-chunks",
                "data must be exactly {turn, step, index, dt, texts}",
            ),
            (
                "an envelope with extra keys",
                extra_key,
                "text-chunks",
                "envelope must be exactly {type, seq0, time0, data}",
            ),
            (
                "an envelope without data",
                no_data,
                "text-chunks",
                "envelope must be exactly {type, seq0, time0, data}",
            ),
            (
                "a negative seq0",
                negative_seq0,
                "text-chunks",
                "seq0 must be a non-negative safe integer",
            ),
            (
                "an unsafe seq0",
                unsafe_seq0,
                "text-chunks",
                "seq0 must be a non-negative safe integer",
            ),
            (
                "a null time0",
                null_time0,
                "text-chunks",
                "time0 must be a safe integer",
            ),
            (
                "a fractional time0",
                fractional_time0,
                "text-chunks",
                "time0 must be a safe integer",
            ),
            (
                "a data shape mismatch",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]})),
                "text-chunks",
                "data must be exactly {turn, step, index, dt, texts}",
            ),
            (
                "a non-string member",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": [7]})),
                "text-chunks",
                "texts must be a non-empty string array",
            ),
            (
                "an empty member list",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": []})),
                "text-chunks",
                "texts must be a non-empty string array",
            ),
            (
                "a dt arity mismatch",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b"]})),
                "text-chunks",
                "dt length 2 does not match 2 members",
            ),
            (
                "a null dt gap",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [null], "texts": ["a", "b"]})),
                "text-chunks",
                "dt must be an array of safe integers",
            ),
            (
                "a fractional dt gap",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": [0.5], "texts": ["a", "b"]})),
                "text-chunks",
                "dt must be an array of safe integers",
            ),
            (
                "a non-array dt",
                text(json!({"turn": 1, "step": 1, "index": 0, "dt": 0, "texts": ["a"]})),
                "text-chunks",
                "dt must be an array of safe integers",
            ),
            (
                "a member seq leaving safe range",
                json!({"type": "text-chunks", "seq0": MAX_SAFE_INTEGER, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]}}),
                "text-chunks",
                "member seqs must stay safe integers",
            ),
            (
                "a member time leaving safe range",
                json!({"type": "text-chunks", "seq0": 0, "time0": MAX_SAFE_INTEGER, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}}),
                "text-chunks",
                "member times must stay safe integers",
            ),
            (
                "a non-numeric turn",
                text(json!({"turn": "x", "step": 1, "index": 0, "dt": [], "texts": ["a"]})),
                "text-chunks",
                "turn/step/index must be numbers",
            ),
            (
                "a reasoning row with args",
                json!({"type": "reasoning-chunks", "seq0": 0, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]}}),
                "reasoning-chunks",
                "data must be exactly {turn, step, index, dt, texts}",
            ),
            (
                "a tool-call row without id",
                tool(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]})),
                "tool-call-chunks",
                "data must be exactly {turn, step, index, id, name?, dt, args}",
            ),
            (
                "a tool-call row with non-string id",
                tool(json!({"turn": 1, "step": 1, "index": 0, "id": 7, "dt": [], "args": ["a"]})),
                "tool-call-chunks",
                "id (and name when present) must be strings",
            ),
            (
                "a tool-call row with non-string name",
                tool(
                    json!({"turn": 1, "step": 1, "index": 0, "id": "c", "name": 7, "dt": [], "args": ["a"]}),
                ),
                "tool-call-chunks",
                "id (and name when present) must be strings",
            ),
            (
                "a tool-call row with empty args",
                tool(json!({"turn": 1, "step": 1, "index": 0, "id": "c", "dt": [], "args": []})),
                "tool-call-chunks",
                "args must be a non-empty string array",
            ),
        ];
        for (label, row, tag, reason) in cases {
            let mut out = vec![SessionEvent::new("x/y", 0, 0, json!({}))];
            let error = decode_record_into(row, &mut out).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("malformed {tag} storage row: {reason}"),
                "{label}"
            );
            assert_eq!(out.len(), 1, "{label}: nothing is appended on error");
        }
    }

    // --- Property: decode ∘ JSONL ∘ pack is the identity, byte for byte ---

    fn delta_chunk() -> impl Strategy<Value = Value> {
        let text = ".{0,6}";
        prop_oneof![
            (0u8..3, text).prop_map(|(index, text)| json!({"type": "text-delta", "index": index, "text": text})),
            (0u8..3, text).prop_map(|(index, text)| json!({"type": "reasoning-delta", "index": index, "text": text})),
            (0u8..3, prop::sample::select(vec!["c1", "c2"]), text).prop_map(|(index, id, args)| {
                json!({"type": "tool-call-delta", "index": index, "id": id, "argumentsDelta": args})
            }),
            (0u8..3, prop::sample::select(vec!["c1", "c2"]), prop::sample::select(vec!["write", "read"]), text)
                .prop_map(|(index, id, name, args)| {
                    json!({"type": "tool-call-delta", "index": index, "id": id, "name": name, "argumentsDelta": args})
                }),
        ]
    }

    fn other_chunk() -> impl Strategy<Value = Value> {
        prop_oneof![
            (0u8..3).prop_map(
                |index| json!({"type": "block-start", "index": index, "blockType": "text"})
            ),
            Just(json!({"type": "finish", "reason": {"kind": "stop"}})),
            // Off-whitelist deltas: an extra key, a fractional index, keys in another order.
            Just(json!({"type": "text-delta", "index": 0, "text": "x", "extra": true})),
            Just(json!({"type": "text-delta", "index": 0.5, "text": "x"})),
            Just(
                serde_json::from_str::<Value>(r#"{"index":0,"type":"text-delta","text":"x"}"#)
                    .unwrap()
            ),
        ]
    }

    /// One event before seqs and times are placed.
    #[derive(Debug, Clone)]
    enum Draft {
        Chunk {
            chunk: Value,
            turn: u8,
            step: u8,
            float_turn: bool,
        },
        Other {
            kind: &'static str,
            ignorable: bool,
            surface: bool,
        },
    }

    fn draft() -> impl Strategy<Value = Draft> {
        prop_oneof![
            8 => (delta_chunk(), 0u8..2, 0u8..2, prop::bool::weighted(0.1)).prop_map(|(chunk, turn, step, float_turn)| {
                Draft::Chunk { chunk, turn, step, float_turn }
            }),
            1 => (other_chunk(), 0u8..2, 0u8..2).prop_map(|(chunk, turn, step)| Draft::Chunk { chunk, turn, step, float_turn: false }),
            1 => (prop::sample::select(vec!["step/end", "assistant/chunk", "plugin/x"]), any::<bool>(), any::<bool>())
                .prop_map(|(kind, ignorable, surface)| Draft::Other { kind, ignorable, surface }),
        ]
    }

    fn time() -> impl Strategy<Value = i64> {
        let safe = MAX_SAFE_INTEGER as i64;
        prop_oneof![8 => 995i64..9000, 1 => -safe..=safe]
    }

    /// A member's own payload: the `text` or `argumentsDelta` of a repeated delta.
    fn with_payload(mut chunk: Value, payload: &str) -> Value {
        for key in ["text", "argumentsDelta"] {
            if chunk.get(key).is_some_and(Value::is_string) {
                chunk[key] = json!(payload);
            }
        }
        chunk
    }

    /// Batches of segments: one drafted event repeated with its own payloads, times and seq
    /// steps, so runs of every length occur (and break on seq gaps and unsafe time gaps).
    fn batch() -> impl Strategy<Value = Vec<SessionEvent>> {
        let member = (
            time(),
            prop_oneof![8 => Just(1u64), 1 => Just(0u64), 1 => Just(2u64)],
            ".{0,4}",
        );
        let segment = (draft(), prop::collection::vec(member, 1..7));
        let base = prop_oneof![Just(0u64), Just(MAX_SAFE_INTEGER - 300)];
        (base, prop::collection::vec(segment, 0..12)).prop_map(|(base, segments)| {
            let mut seq = base;
            let mut events = Vec::new();
            for (draft, members) in segments {
                for (time, seq_step, payload) in members {
                    seq += seq_step;
                    events.push(match &draft {
                        Draft::Chunk {
                            chunk,
                            turn,
                            step,
                            float_turn,
                        } => {
                            let turn = if *float_turn {
                                json!(f64::from(*turn))
                            } else {
                                json!(turn)
                            };
                            let chunk = with_payload(chunk.clone(), &payload);
                            let data = json!({"turn": turn, "step": step, "chunk": chunk});
                            SessionEvent::new("assistant/chunk", seq, time, data)
                        }
                        Draft::Other {
                            kind,
                            ignorable,
                            surface,
                        } => {
                            let mut event =
                                SessionEvent::new(kind, seq, time, json!({"turn": 1, "step": 1}));
                            event.ignorable = *ignorable;
                            if *surface {
                                event.surface_op = Some(SurfaceOp::Append);
                                event.source_event_seqs = Some(vec![0]);
                            }
                            event
                        }
                    });
                }
            }
            events
        })
    }

    #[test]
    fn the_batch_strategy_packs_rows_of_every_kind() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let mut kinds = std::collections::HashSet::new();
        let mut rows = 0;
        for _ in 0..200 {
            let events = batch().new_tree(&mut runner).unwrap().current();
            for record in pack_chunk_runs(&events) {
                if let StorageRecord::Packed(row) = record {
                    kinds.insert(row.kind());
                    rows += 1;
                }
            }
        }
        assert_eq!(kinds.len(), 3);
        assert!(rows > 100, "{rows} rows");
    }

    #[test]
    fn a_slice_is_the_row_of_its_members_and_data_rebuilds_it() {
        let events: Vec<SessionEvent> = (0..6)
            .map(|k| {
                tool_delta(
                    10 + k,
                    100 + 7 * i64::try_from(k).unwrap(),
                    "call_1",
                    Some("bash"),
                    &format!("a{k}"),
                )
            })
            .collect();
        let records = pack_chunk_runs(&events);
        let [StorageRecord::Packed(row)] = records.as_slice() else {
            panic!("one row: {records:?}");
        };
        let middle = row.slice(2, 3).unwrap();
        assert_eq!(
            to_js_string(&middle),
            to_js_string(&pack_chunk_runs(&events[2..5])[0])
        );
        assert_eq!(
            middle.data_json(),
            r#"{"turn":1,"step":1,"index":0,"dt":[7,7],"id":"call_1","name":"bash","args":["a2","a3","a4"]}"#
        );
        assert!(row.slice(4, 3).is_none() && row.slice(0, 0).is_none());

        let data = serde_json::from_str(&middle.data_json()).unwrap();
        let rebuilt = PackedRow::from_data(ChunkKind::ToolCall, 12, 114, data).unwrap();
        let mut out = Vec::new();
        rebuilt.into_events(&mut out);
        assert_eq!(texts(&out), texts(&events[2..5]));
        let error = PackedRow::from_data(ChunkKind::Text, 0, 0, json!({"turn": 1})).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("malformed text-chunks storage row")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn pack_then_decode_reproduces_every_batch_byte_for_byte(events in batch()) {
            let packed = pack_chunk_runs(&events);
            let decoded = decode_all(&packed);
            prop_assert_eq!(texts(&decoded), texts(&events));
            prop_assert!(packed.len() <= events.len());
            for record in &packed {
                if let StorageRecord::Packed(row) = record {
                    prop_assert!(row.member_count() >= MIN_RUN);
                }
            }
            // Packing what was decoded writes the same lines again.
            prop_assert_eq!(lines(&pack_chunk_runs(&decoded)), lines(&packed));
            // Owned records write the same lines as borrowed ones.
            let owned: Vec<_> = packed.iter().cloned().map(StorageRecord::into_owned).collect();
            prop_assert_eq!(lines(&owned), lines(&packed));
        }

        #[test]
        fn every_long_enough_run_packs(count in 0u64..12, kind in prop::sample::select(vec!["text-delta", "reasoning-delta"])) {
            let events = delta_run(kind, count, 0, 0);
            let packed = pack_chunk_runs(&events);
            let expected = if count as usize >= MIN_RUN { 1 } else { count as usize };
            prop_assert_eq!(packed.len(), expected);
            prop_assert_eq!(decode_all(&packed), events);
        }
    }
}
