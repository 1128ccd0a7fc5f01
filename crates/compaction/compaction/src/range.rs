//! Range selection (`selectCompactableRange`): the head-anchored prefix a compaction may
//! shadow, never cutting inside an open tool pair.

use crate::pairing::ToolPairing;
use crate::types::SurfaceSpan;

/// One surface node with its estimated token price (the token meter's per-node price).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PricedNode {
    /// The node's seq.
    pub seq: u64,
    /// Its estimated tokens.
    pub tokens: u64,
}

/// Why no range could be selected at all (as opposed to "nothing safe to compact").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// The priced nodes are not the session's current surface.
    #[error("compaction: token-meter surface does not match the current session surface")]
    SurfaceMismatch,
}

/// A selected range: the span to shadow and where the retained tail starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactableRange {
    /// The span to shadow: from the head node to the node before the cut.
    pub span: SurfaceSpan,
    /// Surface position of the first retained node (the cut is before it).
    pub keep_from: usize,
}

/// Selects the compactable head of a surface.
///
/// `priced` must list exactly the current surface `nodes` (same seqs, same order), and
/// `pairing` their balance. Walking from the tail, the retained tail starts at the first
/// node where the accumulated price reaches `retain_tokens`; the cut is then moved
/// head-ward until it is tool-pairing balanced. `None` when that leaves nothing to
/// compact (an empty surface, a tail that needs everything, or no balanced cut).
pub fn select_compactable_range(
    priced: &[PricedNode],
    nodes: &[u64],
    pairing: &ToolPairing,
    retain_tokens: u64,
) -> Result<Option<CompactableRange>, RangeError> {
    if priced.is_empty() {
        return Ok(None);
    }
    if priced.len() != nodes.len()
        || priced.iter().zip(nodes).any(|(node, seq)| node.seq != *seq)
        || pairing.node_count() != nodes.len()
    {
        return Err(RangeError::SurfaceMismatch);
    }
    let mut accumulated: u64 = 0;
    let mut keep_from = 0;
    for (index, node) in priced.iter().enumerate().rev() {
        accumulated = accumulated.saturating_add(node.tokens);
        if accumulated >= retain_tokens {
            keep_from = index;
            break;
        }
    }
    while keep_from > 0 && pairing.balanced_at(keep_from) != Some(true) {
        keep_from -= 1;
    }
    let (Some(first), Some(last)) = (
        priced.first(),
        keep_from.checked_sub(1).and_then(|i| priced.get(i)),
    ) else {
        return Ok(None);
    };
    Ok(Some(CompactableRange {
        span: SurfaceSpan {
            start: first.seq,
            end: last.seq,
        },
        keep_from,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(tokens: &[u64]) -> Vec<PricedNode> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, &tokens)| PricedNode {
                seq: i as u64 * 2,
                tokens,
            })
            .collect()
    }

    fn select(tokens: &[u64], deltas: &[i64], retain: u64) -> Option<CompactableRange> {
        let priced = priced(tokens);
        let nodes: Vec<u64> = priced.iter().map(|n| n.seq).collect();
        let pairing = ToolPairing::from_deltas(&nodes, |seq| {
            deltas.get(usize::try_from(seq / 2).ok()?).copied()
        })
        .ok()?;
        select_compactable_range(&priced, &nodes, &pairing, retain).ok()?
    }

    #[test]
    fn spec_example() {
        let balanced = select(&[100, 80, 60, 40], &[0, 0, 0, 0], 90);
        assert_eq!(
            balanced.map(|r| (r.span, r.keep_from)),
            Some((SurfaceSpan { start: 0, end: 2 }, 2))
        );
        // n1 opens a call answered by n2: the cut before n2 is unbalanced.
        let split = select(&[100, 80, 60, 40], &[0, 1, -1, 0], 90);
        assert_eq!(
            split.map(|r| (r.span, r.keep_from)),
            Some((SurfaceSpan { start: 0, end: 0 }, 1))
        );
    }

    #[test]
    fn nothing_to_compact() {
        assert_eq!(select(&[], &[], 0), None);
        assert_eq!(select(&[10, 10], &[0, 0], 100), None);
        // Retain 0 keeps the newest node; a surface that is one tool pair yields none.
        assert_eq!(select(&[10, 10], &[1, -1], 0), None);
        assert_eq!(
            select(&[10, 10, 10], &[0, 1, -1], 0).map(|r| r.keep_from),
            Some(1)
        );
    }

    #[test]
    fn mismatch_is_an_error() {
        let priced = priced(&[1, 2]);
        let pairing = ToolPairing::from_deltas(&[0, 2], |_| Some(0)).unwrap_or_default();
        let error = select_compactable_range(&priced, &[0, 4], &pairing, 0).err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("compaction: token-meter surface does not match the current session surface")
        );
    }
}
