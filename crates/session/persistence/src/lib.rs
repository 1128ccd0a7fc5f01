//! The session persistence seam: [`SessionPersistence`], the trait every storage backend
//! offers, and the [`Coordinator`] that does the shared work (per-session serialization, lazy
//! materialization, validation, crash repair, format refusal, and the write-behind of live
//! sessions) over a backend's small [`PersistenceBackend`] hooks.
//!
//! It also holds the storage codecs the backends share: [`chunk_rows`] (runs of streamed
//! deltas packed into one row), [`record`] (one stored line read into events), [`legacy`]
//! (old event shapes upgraded as they are read) and [`log_file`] (dsh's session log file,
//! plain or in zstd frames).

pub mod backend;
pub mod chunk_rows;
#[cfg(feature = "contract")]
pub mod contract;
pub mod coordinator;
pub mod error;
pub mod file_kind;
pub mod legacy;
pub mod live;
pub mod log_file;
pub mod record;
pub mod seam;
pub mod write_behind;

pub use backend::{PersistenceBackend, StoredLog};
pub use coordinator::{Coordinator, CoordinatorOptions};
pub use error::{BackendError, PersistenceError};
pub use file_kind::file_kind;
pub use live::install_live_persistence;
pub use seam::{
    LocationKind, PersistenceSnapshot, SESSION_PERSISTENCE, SessionInspection, SessionListing,
    SessionLocation, SessionPersistence, SessionPreparation, SessionRawArtifact, SnapshotListing,
    UnreadableSession,
};
pub use write_behind::{DEFAULT_WRITE_BATCH_MAX_DELAY_MS, MAX_WRITE_BATCH_DELAY_MS, WriteBehind};
