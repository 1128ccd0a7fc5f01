//! The hooks a storage backend implements; the [`crate::Coordinator`] does the rest.

use std::sync::Arc;

use async_trait::async_trait;
use dsh_session::{SessionEvent, SessionHeader};

use crate::error::BackendError;
use crate::seam::{SessionListing, SessionLocation, SessionRawArtifact, SnapshotListing};

/// A log as found in storage.
#[derive(Debug)]
pub struct StoredLog<M> {
    /// The header.
    pub header: SessionHeader,
    /// Every complete event, in seq order.
    pub events: Vec<SessionEvent>,
    /// The revision the log was read at.
    pub revision: String,
    /// Present when a torn tail must be cut before the next append.
    pub torn: Option<M>,
}

/// Storage primitives: read, append, repair, list.
#[async_trait]
pub trait PersistenceBackend: Send + Sync + 'static {
    /// What the backend needs to cut a torn tail (a byte offset, a seq).
    type TornMarker: Send + Sync + std::fmt::Debug + 'static;

    /// The backend's name in messages.
    fn name(&self) -> &'static str;

    /// Reads a stored log; `Ok(None)` when nothing is stored under `id`.
    async fn load_stored(
        &self,
        id: &str,
    ) -> Result<Option<StoredLog<Self::TornMarker>>, BackendError>;

    /// The stored events of `id` with `seq >= from_seq`, and its header; `Ok(None)` when
    /// nothing is stored. Backends that can seek to a seq override this full read.
    async fn load_stored_from(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<Option<(SessionHeader, Vec<SessionEvent>)>, BackendError> {
        Ok(self.load_stored(id).await?.map(|stored| {
            let mut events = stored.events;
            events.retain(|event| event.seq >= from_seq);
            (stored.header, events)
        }))
    }

    /// The current revision of `id`; `Ok(None)` when nothing is stored.
    async fn read_stored_revision(&self, id: &str) -> Result<Option<String>, BackendError>;

    /// Appends a contiguous batch. When `materialized` is false this creates the artifact, and
    /// creating it together with the first batch must be atomic.
    async fn append_batch(
        &self,
        header: &SessionHeader,
        events: &[Arc<SessionEvent>],
        materialized: bool,
    ) -> Result<(), BackendError>;

    /// Cuts the torn tail (if any), then appends `closers` as one batch.
    async fn commit_repair(
        &self,
        header: &SessionHeader,
        torn: Option<Self::TornMarker>,
        closers: &[Arc<SessionEvent>],
    ) -> Result<(), BackendError>;

    /// Headers of every materialized session, and each artifact that could not be read as
    /// one. One bad artifact must not fail the listing; only storage that cannot be listed
    /// at all (an unreadable root, a database that is not ours) is an error.
    async fn list(&self) -> Result<SessionListing, BackendError>;

    /// Headers with revisions, and the unreadable artifacts, as [`PersistenceBackend::list`].
    async fn list_snapshots(&self) -> Result<SnapshotListing, BackendError>;

    /// Refuses early when the store cannot take writes (a database its owner made read-only),
    /// so a session that is about to be written fails before it starts, with what to do.
    async fn check_writable(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// Where the artifact of `header` lives, for backends with one file per session.
    fn locate(&self, _header: &SessionHeader) -> Option<SessionLocation> {
        None
    }

    /// The files and directories the backend keeps sessions in, each with what it is
    /// (see [`crate::SessionPersistence::storage_paths`]).
    fn storage_paths(&self) -> Vec<(std::path::PathBuf, String)> {
        Vec::new()
    }

    /// The decoded artifact text, for backends that have one.
    async fn read_raw(&self, _id: &str) -> Result<Option<SessionRawArtifact>, BackendError> {
        Err(BackendError::Invalid(format!(
            "the {} backend has no raw session artifacts",
            self.name()
        )))
    }

    /// Whether [`PersistenceBackend::read_raw`] works.
    fn supports_raw_artifacts(&self) -> bool {
        false
    }

    /// Releases resources at shutdown.
    async fn close(&self) {}
}
