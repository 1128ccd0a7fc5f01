//! The compaction lock is the durable bracket: an unmatched `compaction/start` in the log
//! means a compaction is live, unless a later `session/end-seed` proves it stale.

use dsh_protocol::kinds::{
    COMPACTION_END, COMPACTION_START, SESSION_END_SEED, TURN_END, TURN_START,
};
use dsh_session::SessionEvent;
use serde_json::Value;

use crate::types::ManualCompactionError;

/// What the log's tail says about compaction at entry (`inspectCompactionEntryState`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryState {
    /// Seq of the latest `session/end-seed`.
    pub latest_end_seed: Option<u64>,
    /// Seq of the nearest `compaction/start` when it is nearer than any `compaction/end`.
    pub unmatched_start: Option<u64>,
    /// The open turn's number when the nearest of `turn/start|turn/end` is a start
    /// (`Some(None)` when that start carries no readable number).
    pub open_turn: Option<Option<u64>>,
}

impl EntryState {
    /// Scans `events` backwards from the tail, finding each fact independently.
    pub fn inspect<E: AsRef<SessionEvent>>(events: &[E]) -> Self {
        let mut state = Self::default();
        let (mut bracket_seen, mut turn_seen) = (false, false);
        for event in events.iter().rev().map(AsRef::as_ref) {
            let kind = event.kind.as_ref();
            if state.latest_end_seed.is_none() && kind == SESSION_END_SEED {
                state.latest_end_seed = Some(event.seq);
            }
            if !bracket_seen && (kind == COMPACTION_START || kind == COMPACTION_END) {
                bracket_seen = true;
                if kind == COMPACTION_START {
                    state.unmatched_start = Some(event.seq);
                }
            }
            if !turn_seen && (kind == TURN_START || kind == TURN_END) {
                turn_seen = true;
                if kind == TURN_START {
                    let turn = event
                        .data
                        .with_value(|data| data.get("turn").and_then(Value::as_u64));
                    state.open_turn = Some(turn);
                }
            }
            if state.latest_end_seed.is_some() && bracket_seen && turn_seen {
                break;
            }
        }
        state
    }

    /// Whether a compaction is live: an unmatched start with no later end-seed.
    pub fn busy(&self) -> bool {
        match (self.unmatched_start, self.latest_end_seed) {
            (Some(start), Some(seed)) => start > seed,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// Fails with the `busy` error for `stage` (`compaction`, `automatic pressure
/// compaction`) while the log's compaction lock is live.
pub fn assert_no_active_compaction<E: AsRef<SessionEvent>>(
    events: &[E],
    stage: &str,
) -> Result<(), ManualCompactionError> {
    if EntryState::inspect(events).busy() {
        Err(ManualCompactionError::busy(stage))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(kinds: &[&str]) -> Vec<SessionEvent> {
        kinds
            .iter()
            .enumerate()
            .map(|(seq, kind)| SessionEvent::new(kind, seq as u64, 0, json!({"turn": 2})))
            .collect()
    }

    #[test]
    fn live_orphan_is_busy_stale_one_is_not() {
        let live = log(&[TURN_START, COMPACTION_START]);
        let state = EntryState::inspect(&live);
        assert_eq!(state.unmatched_start, Some(1));
        assert_eq!(state.open_turn, Some(Some(2)));
        assert!(state.busy());
        let error = assert_no_active_compaction(&live, "compaction").err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some(
                "compaction: compaction already in progress; the session compaction lock is already active"
            )
        );
        let stale = log(&[COMPACTION_START, TURN_END, SESSION_END_SEED]);
        let state = EntryState::inspect(&stale);
        assert_eq!(state.latest_end_seed, Some(2));
        assert_eq!(state.open_turn, None);
        assert!(!state.busy());
        let closed = log(&[COMPACTION_START, COMPACTION_END]);
        assert!(assert_no_active_compaction(&closed, "compaction").is_ok());
    }
}
