//! [`StorageRecord`]: what one stored line holds, an event verbatim or a packed run.

use std::borrow::Cow;

use dsh_session::SessionEvent;
use serde::ser::{Serialize, Serializer};

use super::PackedRow;

/// One line of a JSONL log (or one physical row): an event stored verbatim, or a packed run.
///
/// Serializing it (with [`dsh_protocol::json::write_js`]) gives dsh's line text exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageRecord<'a> {
    /// An event stored as itself.
    Event(Cow<'a, SessionEvent>),
    /// A run of delta chunk events stored as one row.
    Packed(PackedRow<'a>),
}

impl StorageRecord<'_> {
    /// How many events the record stores.
    pub fn event_count(&self) -> usize {
        match self {
            Self::Event(_) => 1,
            Self::Packed(row) => row.member_count(),
        }
    }

    /// The seq of the record's first event.
    pub fn first_seq(&self) -> u64 {
        match self {
            Self::Event(event) => event.seq,
            Self::Packed(row) => row.seq0,
        }
    }

    /// A record that owns all its parts.
    pub fn into_owned(self) -> StorageRecord<'static> {
        match self {
            Self::Event(event) => StorageRecord::Event(Cow::Owned(event.into_owned())),
            Self::Packed(row) => StorageRecord::Packed(row.into_owned()),
        }
    }

    /// Appends the events the record stores to `out`, in log order.
    pub fn into_events(self, out: &mut Vec<SessionEvent>) {
        match self {
            Self::Event(event) => out.push(event.into_owned()),
            Self::Packed(row) => row.into_events(out),
        }
    }
}

impl Serialize for StorageRecord<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Event(event) => event.serialize(serializer),
            Self::Packed(row) => row.serialize(serializer),
        }
    }
}
