//! Tool-pairing balance over the current surface (upstream `tool-pairing.ts`).
//!
//! Balance is a count, not a call-id match: walking the surface in order, an
//! `assistant/message` adds its number of `tool-call` blocks, a `tool/result` subtracts
//! one, anything else adds nothing. N nodes have N+1 cuts; cut `i` (before node `i`) is
//! balanced when the running count is zero, and cut 0 always is.

use std::collections::HashMap;

use dsh_protocol::kinds::{ASSISTANT_MESSAGE, TOOL_RESULT};
use dsh_protocol::model::block_types::TOOL_CALL;
use dsh_session::{Session, SessionEvent};
use serde_json::Value;

/// A surface the balance fold cannot read (dsh's error texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolPairingError {
    /// A surface seq names no event of the log.
    #[error(
        "tool-pairing balance: surface seq {0} has no matching session event (corrupt surface)"
    )]
    MissingEvent(u64),
    /// A `tool/result` with no open tool call before it.
    #[error(
        "tool-pairing balance: tool/result at surface seq {0} has no matching tool-call (corrupt surface)"
    )]
    UnmatchedResult(u64),
    /// The asked seq is not on the current surface.
    #[error("tool-pairing balance: surface seq {0} not found")]
    NotFound(u64),
}

/// How one surface event changes the count of open tool calls.
pub fn tool_call_delta(event: &SessionEvent) -> i64 {
    if event.kind == ASSISTANT_MESSAGE {
        event.data.with_value(|data| {
            let calls = data
                .pointer("/message/content")
                .and_then(Value::as_array)
                .map_or(0, |blocks| {
                    blocks
                        .iter()
                        .filter(|block| {
                            block.get("type").and_then(Value::as_str) == Some(TOOL_CALL)
                        })
                        .count()
                });
            i64::try_from(calls).unwrap_or(i64::MAX)
        })
    } else if event.kind == TOOL_RESULT {
        -1
    } else {
        0
    }
}

/// The balance of every cut of one surface, in surface order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPairing {
    /// Entry `i` is the cut before node `i`; the last entry is the cut after the tail.
    cuts: Vec<bool>,
    /// Surface position of each node seq.
    index_by_seq: HashMap<u64, usize>,
    /// Open tool calls after the tail.
    open_calls: i64,
}

impl Default for ToolPairing {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolPairing {
    /// The balance of the empty surface: one balanced cut.
    pub fn new() -> Self {
        Self {
            cuts: vec![true],
            index_by_seq: HashMap::new(),
            open_calls: 0,
        }
    }

    /// Folds `nodes` (seqs in surface order), asking `delta` for each node's change of
    /// the open-call count (`None` = no such event).
    pub fn from_deltas(
        nodes: &[u64],
        delta: impl FnMut(u64) -> Option<i64>,
    ) -> Result<Self, ToolPairingError> {
        let mut pairing = Self::new();
        pairing.extend(nodes, delta)?;
        Ok(pairing)
    }

    /// Folds a session's current surface, reading each node's event from its log.
    pub fn of_session(session: &Session) -> Result<Self, ToolPairingError> {
        Self::from_deltas(session.surface().nodes(), session_delta(session))
    }

    /// Folds `tail` (nodes appended after those already folded). A failing fold leaves
    /// `self` untouched.
    pub fn extend(
        &mut self,
        tail: &[u64],
        mut delta: impl FnMut(u64) -> Option<i64>,
    ) -> Result<(), ToolPairingError> {
        let mut open = self.open_calls;
        let mut pending = Vec::with_capacity(tail.len());
        for &seq in tail {
            open = open.saturating_add(delta(seq).ok_or(ToolPairingError::MissingEvent(seq))?);
            if open < 0 {
                return Err(ToolPairingError::UnmatchedResult(seq));
            }
            pending.push(open == 0);
        }
        let processed = self.node_count();
        for (offset, &seq) in tail.iter().enumerate() {
            self.index_by_seq.insert(seq, processed + offset);
        }
        self.cuts.extend(pending);
        self.open_calls = open;
        Ok(())
    }

    /// How many surface nodes have been folded.
    pub fn node_count(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    /// Every cut's balance: `cuts()[i]` is the cut before node `i`.
    pub fn cuts(&self) -> &[bool] {
        &self.cuts
    }

    /// Whether the cut before surface position `index` is balanced (`index ==
    /// node_count()` is the cut after the tail); `None` past the end.
    pub fn balanced_at(&self, index: usize) -> Option<bool> {
        self.cuts.get(index).copied()
    }

    /// Open tool calls after the surface tail.
    pub fn open_calls(&self) -> i64 {
        self.open_calls
    }

    fn cut(&self, seq: u64, offset: usize) -> Result<bool, ToolPairingError> {
        self.index_by_seq
            .get(&seq)
            .and_then(|index| self.cuts.get(index + offset))
            .copied()
            .ok_or(ToolPairingError::NotFound(seq))
    }

    /// Whether the cut just before `seq` is balanced (`toolPairingBalancedBefore`).
    pub fn balanced_before(&self, seq: u64) -> Result<bool, ToolPairingError> {
        self.cut(seq, 0)
    }

    /// Whether the cut just after `seq` is balanced (`toolPairingBalancedAfter`).
    pub fn balanced_after(&self, seq: u64) -> Result<bool, ToolPairingError> {
        self.cut(seq, 1)
    }
}

/// A node's delta read from the session's log: the event at index `seq`, which must
/// carry that seq.
pub fn session_delta(session: &Session) -> impl FnMut(u64) -> Option<i64> + '_ {
    let events = session.events();
    move |seq| {
        usize::try_from(seq)
            .ok()
            .and_then(|index| events.get(index))
            .filter(|event| event.seq == seq)
            .map(|event| tool_call_delta(event))
    }
}

/// The balance of one session kept across calls: log-only growth folds only the new
/// tail; a new `replace_generation` or a shrunken surface rebuilds.
#[derive(Debug, Clone, Default)]
pub struct ToolPairingCache {
    state: Option<(u64, ToolPairing)>,
}

impl ToolPairingCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the cache in line with `nodes` at `generation` and returns the balance.
    /// A failing fold leaves the cache as it was.
    pub fn sync(
        &mut self,
        generation: u64,
        nodes: &[u64],
        delta: impl FnMut(u64) -> Option<i64>,
    ) -> Result<&ToolPairing, ToolPairingError> {
        let state = match self.state.take() {
            Some((cached, mut pairing))
                if cached == generation && pairing.node_count() <= nodes.len() =>
            {
                let tail = nodes.get(pairing.node_count()..).unwrap_or_default();
                if let Err(error) = pairing.extend(tail, delta) {
                    self.state = Some((cached, pairing));
                    return Err(error);
                }
                (cached, pairing)
            }
            previous => match ToolPairing::from_deltas(nodes, delta) {
                Ok(pairing) => (generation, pairing),
                Err(error) => {
                    self.state = previous;
                    return Err(error);
                }
            },
        };
        Ok(&self.state.insert(state).1)
    }

    /// [`sync`](Self::sync) against a session's current surface.
    pub fn sync_session(&mut self, session: &Session) -> Result<&ToolPairing, ToolPairingError> {
        let surface = session.surface();
        self.sync(
            surface.replace_generation(),
            surface.nodes(),
            session_delta(session),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deltas(map: &[(u64, i64)]) -> impl FnMut(u64) -> Option<i64> + '_ {
        |seq| map.iter().find(|(s, _)| *s == seq).map(|(_, d)| *d)
    }

    #[test]
    fn cuts_follow_the_count() {
        let table = [(1, 0), (2, 2), (3, -1), (4, -1), (5, 0)];
        let pairing = ToolPairing::from_deltas(&[1, 2, 3, 4, 5], deltas(&table));
        let pairing = pairing.unwrap_or_default();
        assert_eq!(pairing.cuts(), &[true, true, false, false, true, true]);
        assert_eq!(pairing.balanced_before(3), Ok(false));
        assert_eq!(pairing.balanced_after(4), Ok(true));
        assert_eq!(
            pairing.balanced_before(9),
            Err(ToolPairingError::NotFound(9))
        );
    }

    #[test]
    fn error_texts() {
        let table = [(1, -1)];
        let error = ToolPairing::from_deltas(&[1], deltas(&table)).err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some(
                "tool-pairing balance: tool/result at surface seq 1 has no matching tool-call (corrupt surface)"
            )
        );
        let error = ToolPairing::from_deltas(&[7], deltas(&table)).err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some(
                "tool-pairing balance: surface seq 7 has no matching session event (corrupt surface)"
            )
        );
    }

    #[test]
    fn cache_extends_rebuilds_and_survives_failure() {
        let table = [(1, 1), (2, -1), (3, 0), (4, -1)];
        let mut cache = ToolPairingCache::new();
        let pairing = cache.sync(0, &[1, 2], deltas(&table));
        assert_eq!(pairing.map(ToolPairing::node_count), Ok(2));
        // Tail growth reads only the new node.
        let mut reads = Vec::new();
        let grown = cache.sync(0, &[1, 2, 3], |seq| {
            reads.push(seq);
            Some(0)
        });
        assert_eq!(grown.map(ToolPairing::node_count), Ok(3));
        assert_eq!(reads, vec![3]);
        // A corrupt tail leaves the cache as it was.
        assert!(cache.sync(0, &[1, 2, 3, 4], deltas(&table)).is_err());
        let kept = cache.sync(0, &[1, 2, 3], |_| None);
        assert_eq!(kept.map(ToolPairing::node_count), Ok(3));
        // A new generation rebuilds from scratch.
        let rebuilt = cache.sync(1, &[3], deltas(&table));
        assert_eq!(rebuilt.map(ToolPairing::node_count), Ok(1));
    }

    #[test]
    fn delta_counts_tool_call_blocks() {
        let message = SessionEvent::new(
            ASSISTANT_MESSAGE,
            1,
            0,
            json!({"message": {"role": "assistant", "content": [
                {"type": "text", "text": "x"},
                {"type": "tool-call", "id": "a", "name": "t", "arguments": "{}"},
                {"type": "tool-call", "id": "b", "name": "t", "arguments": "{}"}]}}),
        );
        assert_eq!(tool_call_delta(&message), 2);
        let result = SessionEvent::new(TOOL_RESULT, 2, 0, json!({}));
        assert_eq!(tool_call_delta(&result), -1);
        let user = SessionEvent::new("user/message", 3, 0, json!({}));
        assert_eq!(tool_call_delta(&user), 0);
    }
}
