//! Which rows a batch becomes: runs of streamed deltas packed into bounded rows.
//!
//! The runs are the JSONL backend's ([`pack_chunk_runs`]); schema 17 also bounds each row to
//! [`MAX_PACKED_ROW_MEMBERS`] members and [`MAX_PACKED_DATA_BYTES`] bytes of data JSON. A run
//! is cut the way dsh 0.1 cuts it: the longest prefix (at most 1,024 members) that fits, found
//! by binary search; a member too large for any row of three is stored alone; fewer than three
//! members left over are stored one by one. Only the new batch is packed: a row once written is
//! never rewritten or merged.

use std::borrow::Borrow;

use dsh_persistence::chunk_rows::{PackedRow, StorageRecord, pack_chunk_runs};
use dsh_session::SessionEvent;

use crate::rows::BoundRow;

/// The fewest members of a packed row.
pub const MIN_PACKED_ROW_MEMBERS: usize = 3;
/// The most members of a packed row.
pub const MAX_PACKED_ROW_MEMBERS: usize = 1024;
/// The most UTF-8 bytes of a packed row's data JSON (before compression).
pub const MAX_PACKED_DATA_BYTES: usize = 1_048_576;

/// The rows that store `batch`, in order.
///
/// Fails only if the packer's records do not cover the batch exactly, which would be a bug;
/// the append is then refused rather than storing fewer events.
pub(crate) fn rows_for_batch<E: Borrow<SessionEvent>>(
    batch: &[E],
) -> Result<Vec<BoundRow<'_>>, String> {
    let mut events = batch.iter().map(Borrow::borrow);
    let mut rows = Vec::with_capacity(batch.len());
    let mut covered = 0;
    for record in pack_chunk_runs(batch) {
        let count = record.event_count();
        let members: Vec<&SessionEvent> = events.by_ref().take(count).collect();
        covered += members.len();
        match record {
            StorageRecord::Event(_) => rows.extend(members.into_iter().map(BoundRow::scalar)),
            StorageRecord::Packed(run) => bound_run(&run, &members, &mut rows),
        }
    }
    if covered != batch.len() {
        return Err(format!(
            "internal error: packing covered {covered} of {} events",
            batch.len()
        ));
    }
    Ok(rows)
}

/// Cuts one run (whose events are `members`) into rows within the bounds.
fn bound_run<'e>(run: &PackedRow<'_>, members: &[&'e SessionEvent], rows: &mut Vec<BoundRow<'e>>) {
    let total = run.member_count();
    let mut offset = 0;
    while total - offset >= MIN_PACKED_ROW_MEMBERS {
        let high = (total - offset).min(MAX_PACKED_ROW_MEMBERS);
        if let Some((row, json)) = fitting(run, offset, high) {
            rows.push(BoundRow::packed(&row, json));
            offset += high;
            continue;
        }
        let (mut low, mut high) = (MIN_PACKED_ROW_MEMBERS, high - 1);
        let mut accepted = None;
        while low <= high {
            let middle = usize::midpoint(low, high);
            match fitting(run, offset, middle) {
                Some((row, json)) => {
                    accepted = Some((middle, BoundRow::packed(&row, json)));
                    low = middle + 1;
                }
                None => high = middle - 1,
            }
        }
        let count = accepted.as_ref().map_or(1, |(count, _)| *count);
        match accepted {
            Some((_, row)) => rows.push(row),
            None => rows.extend(members.get(offset).copied().map(BoundRow::scalar)),
        }
        offset += count;
    }
    rows.extend(
        members
            .get(offset..)
            .unwrap_or_default()
            .iter()
            .copied()
            .map(BoundRow::scalar),
    );
}

/// The members `offset..offset + count` as one row and its data JSON, if within the byte bound.
fn fitting<'r>(
    run: &'r PackedRow<'_>,
    offset: usize,
    count: usize,
) -> Option<(PackedRow<'r>, String)> {
    let row = run.slice(offset, count)?;
    let json = row.data_json();
    (json.len() <= MAX_PACKED_DATA_BYTES).then_some((row, json))
}
