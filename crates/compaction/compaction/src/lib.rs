//! The compaction seam (`compaction`): what every compaction backend shares.
//!
//! - [`types`]: triggers, surface spans, [`CompactionResult`], [`ManualCompactionError`];
//! - [`checkpoint`]: the replacement message's source, [`compact_checkpoint_source`];
//! - [`events`]: the `compaction/start|summary|end|prune` payloads in dsh's key order (the
//!   event kinds are [`dsh_protocol::kinds`]' `COMPACTION_*`);
//! - [`pairing`]: tool-pairing balance of the surface's cuts;
//! - [`lock`]: the durable bracket as the lock, and the busy rule;
//! - [`range`]: the compactable head, never splitting a tool pair;
//! - [`spec`]: a target's threshold and retained tokens from its ratios;
//! - [`engine`]: the [`CompactionEngine`] service trait and its key [`COMPACTION`].

pub mod checkpoint;
pub mod engine;
pub mod events;
pub mod lock;
pub mod pairing;
pub mod range;
pub mod spec;
pub mod types;

pub use checkpoint::{compact_checkpoint_source, is_compact_checkpoint_source};
pub use dsh_protocol::kinds::{
    COMPACTION_END, COMPACTION_PRUNE, COMPACTION_START, COMPACTION_SUMMARY,
};
pub use engine::{
    COMPACTION, CompactionAgentContext, CompactionEngine, MaintenanceOutcome, MaintenanceTask,
    ManualCompactAgent,
};
pub use events::{
    CompactionEnd, CompactionPrune, CompactionStart, CompactionSummary, EventShapeError, RawOutput,
};
pub use lock::{EntryState, assert_no_active_compaction};
pub use pairing::{ToolPairing, ToolPairingCache, ToolPairingError, tool_call_delta};
pub use range::{CompactableRange, PricedNode, RangeError, select_compactable_range};
pub use spec::{CompactSpec, CompactSpecError, Retention};
pub use types::{
    CompactionResult, CompactionTrigger, ManualCompactionError, ManualCompactionErrorCode,
    SurfaceSpan,
};
