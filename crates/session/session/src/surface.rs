//! The surface fold: which events the model sees, in which order.
//!
//! Surface events append themselves or replace a run of earlier surface nodes (compaction, tool
//! result pruning). Validation plans a change without applying it, so a refused event leaves the
//! fold untouched.

use std::collections::HashSet;

use dsh_protocol::kinds;
use serde_json::Value;

use crate::event::{SessionEvent, SurfaceOp, is_surface_type};

/// A surface rule an event breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SurfaceError(pub String);

fn fail<T>(message: impl Into<String>) -> Result<T, SurfaceError> {
    Err(SurfaceError(message.into()))
}

/// The surface: seqs of visible surface events, in model order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceFold {
    nodes: Vec<u64>,
    replace_generation: u64,
}

/// A validated change, ready to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SurfacePlan {
    /// The event does not touch the surface.
    None,
    /// Push the event's seq.
    Append(u64),
    /// Replace the nodes at positions `start_index..=end_index` with `seq`.
    Replace {
        /// The replacing event.
        seq: u64,
        /// Position of the first shadowed node.
        start_index: usize,
        /// Position of the last shadowed node.
        end_index: usize,
    },
}

impl SurfaceFold {
    /// Visible surface seqs in model order.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes
    }

    /// How many replaces have been applied; derived caches rebuild when it changes.
    pub fn replace_generation(&self) -> u64 {
        self.replace_generation
    }

    /// Checks `event` as the next event of `events` (the log so far)
    /// and returns the change it would make, without making it.
    pub fn plan<E: AsRef<SessionEvent>>(
        &self,
        event: &SessionEvent,
        events: &[E],
    ) -> Result<SurfacePlan, SurfaceError> {
        let expected = events.len() as u64;
        if event.seq != expected {
            return fail(format!(
                "session event seq {} is not contiguous; expected {expected}",
                event.seq
            ));
        }
        check_markers(event)?;
        match event.surface_op {
            None => Ok(SurfacePlan::None),
            Some(SurfaceOp::Append) => Ok(SurfacePlan::Append(event.seq)),
            Some(SurfaceOp::Replace { start, end }) => self.plan_replace(event, start, end, events),
        }
    }

    fn plan_replace<E: AsRef<SessionEvent>>(
        &self,
        event: &SessionEvent,
        start: u64,
        end: u64,
        events: &[E],
    ) -> Result<SurfacePlan, SurfaceError> {
        let position = |seq: u64, which: &str| {
            self.nodes
                .iter()
                .position(|&node| node == seq)
                .ok_or_else(|| {
                    SurfaceError(format!(
                        "surface replace: {which} seq {seq} not found in surface"
                    ))
                })
        };
        let start_index = position(start, "start")?;
        let end_index = position(end, "end")?;
        if start_index > end_index {
            return fail(format!(
                "surface replace: start seq {start} (index {start_index}) is after end seq {end} \
                 (index {end_index})"
            ));
        }
        let shadowed = self.nodes.get(start_index..=end_index).unwrap_or_default();
        let sources: HashSet<u64> = event.source_event_seqs.iter().flatten().copied().collect();
        let missing: Vec<String> = shadowed
            .iter()
            .filter(|seq| !sources.contains(seq))
            .map(u64::to_string)
            .collect();
        if !missing.is_empty() {
            return fail(format!(
                "surface replace: sourceEventSeqs must include every shadowed surface node; \
                 missing {}",
                missing.join(", ")
            ));
        }
        if event.kind == kinds::TOOL_RESULT {
            self.check_tool_result_rewrite(event, shadowed, events)?;
        }
        Ok(SurfacePlan::Replace {
            seq: event.seq,
            start_index,
            end_index,
        })
    }

    fn check_tool_result_rewrite<E: AsRef<SessionEvent>>(
        &self,
        event: &SessionEvent,
        shadowed: &[u64],
        events: &[E],
    ) -> Result<(), SurfaceError> {
        let [original_seq] = shadowed else {
            return fail("tool/result surface replacement must rewrite exactly one current node");
        };
        let original = usize::try_from(*original_seq)
            .ok()
            .and_then(|index| events.get(index))
            .map(AsRef::as_ref);
        let Some(original) = original.filter(|original| original.kind == kinds::TOOL_RESULT) else {
            return fail("tool/result surface replacement must target a current tool/result");
        };
        if without_result_content(&original.data) != without_result_content(&event.data) {
            return fail("tool/result surface replacement may change only content");
        }
        Ok(())
    }

    /// Applies a plan made by [`SurfaceFold::plan`] against the current state.
    pub fn apply(&mut self, plan: &SurfacePlan) {
        match *plan {
            SurfacePlan::None => {}
            SurfacePlan::Append(seq) => self.nodes.push(seq),
            SurfacePlan::Replace {
                seq,
                start_index,
                end_index,
            } => {
                if start_index <= end_index && end_index < self.nodes.len() {
                    self.nodes.splice(start_index..=end_index, [seq]);
                    self.replace_generation += 1;
                }
            }
        }
    }
}

/// `data` with `message.content[0].content` nulled: what a pruning rewrite may not change.
fn without_result_content(data: &Value) -> Value {
    let mut copy = data.clone();
    if let Some(Value::Object(block)) = copy.pointer_mut("/message/content/0") {
        block.insert("content".to_owned(), Value::Null);
    }
    copy
}

/// The per-event rules for `surfaceOp` and `sourceEventSeqs`.
fn check_markers(event: &SessionEvent) -> Result<(), SurfaceError> {
    let kind = &event.kind;
    if !is_surface_type(kind) {
        if event.surface_op.is_some() {
            return fail(format!(
                "session event \"{kind}\" is not surface-eligible and cannot carry surfaceOp"
            ));
        }
        if event.source_event_seqs.is_some() {
            return fail(format!(
                "session event \"{kind}\" is not surface-eligible and cannot carry sourceEventSeqs"
            ));
        }
        return Ok(());
    }
    if event.surface_op.is_none() {
        return fail(format!(
            "session event \"{kind}\" is surface-eligible and requires a surfaceOp marker"
        ));
    }
    let Some(sources) = &event.source_event_seqs else {
        return Ok(());
    };
    if sources.is_empty() && kind != kinds::ASSISTANT_MESSAGE {
        return fail("sourceEventSeqs must not be empty except on assistant/message");
    }
    let mut seen = HashSet::with_capacity(sources.len());
    if !sources.iter().all(|seq| seen.insert(*seq)) {
        return fail("sourceEventSeqs must not contain duplicates");
    }
    if let Some(late) = sources.iter().find(|&&seq| seq >= event.seq) {
        return fail(format!(
            "sourceEventSeqs must reference earlier events: {late} >= current seq {}",
            event.seq
        ));
    }
    Ok(())
}

impl AsRef<SessionEvent> for SessionEvent {
    fn as_ref(&self) -> &SessionEvent {
        self
    }
}
