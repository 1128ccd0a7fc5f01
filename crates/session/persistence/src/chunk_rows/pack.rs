//! Packing a batch of events: runs of recognized deltas become rows, the rest stays verbatim.

use std::borrow::{Borrow, Cow};

use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_protocol::kinds;
use dsh_session::SessionEvent;
use serde_json::{Number, Value};

use super::{ChunkKind, MIN_RUN, PackedRow, StorageRecord};

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
    if event.kind != kinds::ASSISTANT_CHUNK
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
