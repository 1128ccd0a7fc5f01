//! The priced surface: the session's positional surface fold with a price on every node
//! (dsh's `surface-fold.ts`).
//!
//! An `append` pushes the event; a `replace` collapses the nodes from `start` to `end` (by
//! position, as the session folds it) into the replacing event. A node's price is
//! [`estimate_message_json`] of the message the event derives ([`message_json`]), 0 when it
//! derives none.

use dsh_session::derive::message_json;
use dsh_session::{SessionEvent, SurfaceOp};
use serde::Serialize;

use crate::error::MeterError;
use crate::estimate::estimate_message_json;

/// One node of the current surface and its price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenSurfaceNode {
    /// Seq of the surface event.
    pub seq: u64,
    /// Heuristic tokens of the message it derives.
    pub tokens: u64,
}

/// The price of the message `event` derives; 0 when it derives none.
pub fn event_tokens(event: &SessionEvent) -> u64 {
    message_json(event).map_or(0, estimate_message_json)
}

/// A validated change to the priced surface, ready to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SurfaceChange {
    /// The new node.
    pub(crate) node: TokenSurfaceNode,
    /// Positions shadowed by a replace (`start..=end`); `None` for an append.
    pub(crate) shadows: Option<(usize, usize)>,
    /// The signed change of the surface total.
    pub(crate) delta: i64,
}

/// The priced surface of one session, in model order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PricedSurface {
    nodes: Vec<TokenSurfaceNode>,
    tokens: u64,
}

fn signed(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

impl PricedSurface {
    /// The nodes, head to tail.
    pub fn nodes(&self) -> &[TokenSurfaceNode] {
        &self.nodes
    }

    /// The sum of the nodes' prices.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Plans how surface event `event` changes the surface, without changing it; `None` for
    /// an event off the surface. A replace whose range is not current fails with dsh's text.
    pub(crate) fn plan(&self, event: &SessionEvent) -> Result<Option<SurfaceChange>, MeterError> {
        let Some(op) = event.surface_op else {
            return Ok(None);
        };
        let tokens = event_tokens(event);
        let node = TokenSurfaceNode {
            seq: event.seq,
            tokens,
        };
        let SurfaceOp::Replace { start, end } = op else {
            return Ok(Some(SurfaceChange {
                node,
                shadows: None,
                delta: signed(tokens),
            }));
        };
        let position = |seq: u64| self.nodes.iter().position(|node| node.seq == seq);
        let range = match (position(start), position(end)) {
            (Some(first), Some(last)) if first <= last => (first, last),
            _ => {
                return Err(MeterError::InvalidReplace {
                    seq: event.seq,
                    start,
                    end,
                });
            }
        };
        let removed: u64 = self
            .nodes
            .get(range.0..=range.1)
            .unwrap_or_default()
            .iter()
            .map(|node| node.tokens)
            .sum();
        Ok(Some(SurfaceChange {
            node,
            shadows: Some(range),
            delta: signed(tokens) - signed(removed),
        }))
    }

    /// Applies a change planned against the current surface.
    pub(crate) fn apply(&mut self, change: SurfaceChange) {
        match change.shadows {
            None => self.nodes.push(change.node),
            Some((first, last)) => {
                if first <= last && last < self.nodes.len() {
                    self.nodes.splice(first..=last, [change.node]);
                }
            }
        }
        self.tokens = self.tokens.saturating_add_signed(change.delta);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn user(seq: u64, text: &str, op: SurfaceOp) -> SessionEvent {
        let mut event = SessionEvent::new(
            "user/message",
            seq,
            0,
            json!({"content": [{"type": "text", "text": text}], "source": {"kind": "user"}, "role": "user", "id": format!("u{seq}")}),
        );
        event.surface_op = Some(op);
        event
    }

    fn fold(surface: &mut PricedSurface, event: &SessionEvent) -> Result<(), MeterError> {
        let change = surface.plan(event)?;
        if let Some(change) = change {
            surface.apply(change);
        }
        Ok(())
    }

    #[test]
    fn appends_and_a_replace_fold_positionally_with_a_negative_delta() {
        let mut surface = PricedSurface::default();
        for seq in 0..3 {
            fold(&mut surface, &user(seq, &"x".repeat(40), SurfaceOp::Append)).unwrap();
        }
        assert_eq!(surface.tokens(), 3 * 18);
        let replace = user(3, "abcd", SurfaceOp::Replace { start: 0, end: 1 });
        let change = surface.plan(&replace).unwrap().unwrap();
        assert_eq!(change.delta, 9 - 36);
        surface.apply(change);
        assert_eq!(
            surface.nodes(),
            [
                TokenSurfaceNode { seq: 3, tokens: 9 },
                TokenSurfaceNode { seq: 2, tokens: 18 }
            ]
        );
        assert_eq!(surface.tokens(), 27);
    }

    #[test]
    fn a_replace_over_a_stale_or_reversed_range_fails_without_change() {
        let mut surface = PricedSurface::default();
        for seq in 0..2 {
            fold(&mut surface, &user(seq, "a", SurfaceOp::Append)).unwrap();
        }
        let before = surface.clone();
        for (start, end) in [(1, 0), (0, 7)] {
            let error = surface
                .plan(&user(2, "b", SurfaceOp::Replace { start, end }))
                .unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("token surface: replace at seq 2 has invalid current range {start}-{end}")
            );
        }
        assert_eq!(surface, before);
    }

    #[test]
    fn an_event_off_the_surface_and_a_content_less_reply_cost_nothing() {
        let surface = PricedSurface::default();
        let plain = SessionEvent::new("turn/start", 0, 0, json!({"turn": 1}));
        assert_eq!(surface.plan(&plain).unwrap(), None);
        let mut empty = SessionEvent::new(
            "assistant/message",
            1,
            0,
            json!({"turn": 1, "step": 1, "message": {"role": "assistant", "content": [], "id": "a"}}),
        );
        empty.surface_op = Some(SurfaceOp::Append);
        assert_eq!(event_tokens(&empty), 0);
    }
}
