//! Reading rows into a log: a damaged or discontinuous row after the last committed
//! `turn/end` is a torn tail (repairable); one at or before it is corruption.

use dsh_session::SessionEvent;

use crate::rows::EventRow;

/// The events read and where a torn tail starts.
#[derive(Debug, Default)]
pub(crate) struct Scanned {
    /// Every event of the contiguous prefix, in order.
    pub events: Vec<SessionEvent>,
    /// The seq of the first row to delete before the next write, when the tail is torn.
    pub torn_from: Option<u64>,
}

/// A row at or before the last `turn/end` that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt session log: invalid committed physical row at seq {seq} ({reason})")]
pub(crate) struct CommittedRowError {
    /// The row's `seq` column.
    pub seq: u64,
    /// What is wrong.
    pub reason: String,
}

/// Reads `rows` (ordered by seq), whose first event must have seq `base`.
pub(crate) fn scan_rows(rows: &[EventRow], base: u64) -> Result<Scanned, CommittedRowError> {
    let last_turn_end = last_turn_end_row(rows);
    let mut events = Vec::with_capacity(rows.len() * 2);
    let mut expected = base;
    for (index, row) in rows.iter().enumerate() {
        let start = events.len();
        let outcome = row.decode_into(&mut events).and_then(|()| {
            let contiguous = events
                .get(start..)
                .unwrap_or_default()
                .iter()
                .zip(expected..)
                .all(|(event, seq)| event.seq == seq);
            if contiguous {
                Ok(())
            } else {
                Err(format!("it does not continue the log at seq {expected}"))
            }
        });
        match outcome {
            Ok(()) => expected += (events.len() - start) as u64,
            Err(reason) => {
                events.truncate(start);
                if last_turn_end.is_some_and(|last| index <= last) {
                    return Err(CommittedRowError {
                        seq: row.seq,
                        reason,
                    });
                }
                return Ok(Scanned {
                    events,
                    torn_from: Some(row.seq),
                });
            }
        }
    }
    Ok(Scanned {
        events,
        torn_from: None,
    })
}

/// The index of the last row that reads as a `turn/end`.
fn last_turn_end_row(rows: &[EventRow]) -> Option<usize> {
    let mut scratch = Vec::with_capacity(1);
    rows.iter().rposition(|row| {
        scratch.clear();
        row.may_close_turn() && row.decode_into(&mut scratch).is_ok()
    })
}
