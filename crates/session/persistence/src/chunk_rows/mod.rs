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

mod decode;
mod pack;
mod row;
mod storage_record;

pub use decode::{decode_record, decode_record_into};
pub use pack::pack_chunk_runs;
pub use row::PackedRow;
pub use storage_record::StorageRecord;

use std::borrow::Cow;

use dsh_session::event::EnvelopeError;

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
