//! The `SessionPersistence` seam: what every storage backend offers the harness.

use std::path::PathBuf;

use async_trait::async_trait;
use dsh_kernel::ServiceKey;
use dsh_session::{Session, SessionEvent, SessionHeader};

use crate::error::PersistenceError;

/// The persistence service (`ctx.sessionPersistence` in dsh).
pub const SESSION_PERSISTENCE: ServiceKey<dyn SessionPersistence> =
    ServiceKey::new("sessionPersistence");

/// What a [`SessionLocation`] names, set by the backend that locates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocationKind {
    /// A JSONL log, plain (`session.jsonl`) or in zstd frames (`session.jsonl.zstd`): what
    /// `DSH_SESSION_JSONL` points shell commands at.
    Jsonl,
    /// A per-session file of another backend, named by that backend.
    Other(&'static str),
}

/// Where a session's artifact lives, when the backend has one file per session (a store
/// keeping every session in one database locates none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLocation {
    /// What the file is.
    pub kind: LocationKind,
    /// Absolute path (it may not exist yet).
    pub path: PathBuf,
}

/// A stored session as read: its header and a balanced log.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInspection {
    /// The header.
    pub header: SessionHeader,
    /// The events, with crash closers when the last turn was left open.
    pub events: Vec<SessionEvent>,
}

/// A session's raw artifact: the decoded JSONL text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRawArtifact {
    /// The header.
    pub header: SessionHeader,
    /// Always `session.jsonl`.
    pub filename: &'static str,
    /// The decoded text, without a torn final frame.
    pub content: String,
}

/// A header with an opaque revision that changes on every append or repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistenceSnapshot {
    /// The header.
    pub header: SessionHeader,
    /// The revision (qualified by store).
    pub revision: String,
}

/// A stored artifact that could not be read as a session, found while listing.
///
/// One bad log never hides the others: a listing reports it here and goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableSession {
    /// The session id, when the storage names one (a JSONL session directory, an SQLite row).
    pub id: Option<String>,
    /// Where the artifact is: the log file, the directory, or the database.
    pub path: Option<PathBuf>,
    /// What is wrong and what to do; it names the artifact (once).
    pub error: String,
}

/// What a listing found: the readable sessions and the artifacts that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionListing {
    /// Headers of the readable sessions, unordered.
    pub sessions: Vec<SessionHeader>,
    /// Artifacts that could not be read as sessions.
    pub unreadable: Vec<UnreadableSession>,
}

/// What a listing with revisions found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SnapshotListing {
    /// Headers and revisions of the readable sessions, unordered.
    pub snapshots: Vec<PersistenceSnapshot>,
    /// Artifacts that could not be read as sessions.
    pub unreadable: Vec<UnreadableSession>,
}

/// A resumed session, validated and repaired, not yet live.
///
/// Publish it with `SessionStore::publish`; its log already ends with `session/end-seed`.
#[derive(Debug)]
pub struct SessionPreparation {
    /// The session.
    pub session: Session,
}

/// Durable storage of session logs.
#[async_trait]
pub trait SessionPersistence: Send + Sync {
    /// Where the artifact of `header` lives (no I/O); `None` for stores without files.
    fn locate(&self, header: &SessionHeader) -> Option<SessionLocation>;

    /// The files and directories this store keeps sessions in (no I/O), each with what it
    /// is in words: the sandbox keeps confined commands from ever writing them. Empty for
    /// stores without files.
    fn storage_paths(&self) -> Vec<(PathBuf, String)> {
        Vec::new()
    }

    /// Whether [`SessionPersistence::read_raw`] is supported.
    fn supports_raw_artifacts(&self) -> bool;

    /// The decoded log text; `Ok(None)` when absent.
    async fn read_raw(&self, id: &str) -> Result<Option<SessionRawArtifact>, PersistenceError>;

    /// Registers a new session lazily: nothing is written until its first append.
    async fn create(&self, header: SessionHeader) -> Result<(), PersistenceError>;

    /// Appends a contiguous batch; durable once this returns.
    async fn append(&self, id: &str, events: Vec<SessionEvent>) -> Result<(), PersistenceError>;

    /// Loads a stored session for resuming, committing any crash repair.
    async fn prepare(&self, id: &str) -> Result<SessionPreparation, PersistenceError>;

    /// Loads a balanced log, committing any crash repair.
    async fn load(&self, id: &str) -> Result<SessionInspection, PersistenceError>;

    /// Reads a log without changing anything: closers are added in memory only.
    async fn inspect(&self, id: &str) -> Result<SessionInspection, PersistenceError>;

    /// The stored events with `seq >= from_seq` (no closers, no repair).
    async fn read_from(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<Vec<SessionEvent>, PersistenceError>;

    /// Headers of every readable materialized session, unordered. Artifacts that cannot be
    /// read are left out (see [`SessionPersistence::list_with_unreadable`]); only a store
    /// that cannot be listed at all is an error.
    async fn list(&self) -> Result<Vec<SessionHeader>, PersistenceError>;

    /// Every readable materialized session, and each stored artifact that could not be read
    /// as one (a damaged header, a FIFO or directory in place of a log, ...). Stores that
    /// cannot find unreadable artifacts report none.
    async fn list_with_unreadable(&self) -> Result<SessionListing, PersistenceError> {
        Ok(SessionListing {
            sessions: self.list().await?,
            unreadable: Vec::new(),
        })
    }

    /// Headers with revisions of every readable session, as [`SessionPersistence::list`].
    async fn list_snapshots(&self) -> Result<Vec<PersistenceSnapshot>, PersistenceError>;
}
