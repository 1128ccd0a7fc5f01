//! The coordinator: everything backends share. Per-session serialization, lazy
//! materialization, validation and crash repair on load, format refusal kept apart from
//! corruption, and the write-behind of live sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use dsh_kernel::sync::lock;

mod live_writes;

use async_trait::async_trait;
use dsh_protocol::known::is_known_type;
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::seed::check_not_retired;
use dsh_session::{LiveSession, Session, SessionEvent, SessionHeader, validate_log};

use crate::backend::{PersistenceBackend, StoredLog};
use crate::error::{BackendError, PersistenceError};
use crate::legacy::normalize_stored_events;
use crate::seam::{
    PersistenceSnapshot, SessionInspection, SessionListing, SessionLocation, SessionPersistence,
    SessionPreparation, SessionRawArtifact, UnreadableSession,
};
use crate::write_behind::{DEFAULT_WRITE_BATCH_MAX_DELAY_MS, WriteBehind};

/// How often a load re-reads after committing a repair before giving up.
const MAX_REPAIR_ROUNDS: usize = 4;

/// Coordinator settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinatorOptions {
    /// The write-behind window of live sessions.
    pub write_batch_max_delay: Duration,
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        Self {
            write_batch_max_delay: Duration::from_millis(DEFAULT_WRITE_BATCH_MAX_DELAY_MS),
        }
    }
}

/// What the coordinator knows about one stored session.
#[derive(Debug, Default)]
struct SlotState {
    header: Option<SessionHeader>,
    /// The stored log length.
    cursor: u64,
    materialized: bool,
    tracked: bool,
    /// The live session writing through this slot, once reconciled (a weak handle keeps its
    /// address from being reused by another session).
    owner: Option<Weak<LiveSession>>,
}

type Slot = Arc<tokio::sync::Mutex<SlotState>>;

/// A validated read: the balanced log (stored events, then closers) and the repair it needs.
struct Checked<M> {
    header: SessionHeader,
    events: Vec<SessionEvent>,
    /// How many of `events` are stored; the rest are closers.
    stored: usize,
    torn: Option<M>,
    /// The revision the log was read at.
    revision: String,
}

/// Implements [`SessionPersistence`] over a [`PersistenceBackend`].
pub struct Coordinator<B: PersistenceBackend> {
    backend: B,
    options: CoordinatorOptions,
    slots: Mutex<HashMap<String, Slot>>,
    writers: Mutex<HashMap<String, Arc<WriteBehind>>>,
    live: Mutex<HashMap<String, Weak<LiveSession>>>,
}

/// Leaves an unreadable artifact out of a plain listing, with a trace for whoever looks.
fn skip_unreadable(unreadable: &[UnreadableSession]) {
    for artifact in unreadable {
        tracing::debug!("not listed: {}", artifact.error);
    }
}

fn from_backend(id: &str, error: BackendError) -> PersistenceError {
    PersistenceError::of_session(id, error)
}

impl<B: PersistenceBackend> Coordinator<B> {
    /// A coordinator over `backend`.
    pub fn new(backend: B, options: CoordinatorOptions) -> Arc<Self> {
        Arc::new(Self {
            backend,
            options,
            slots: Mutex::new(HashMap::new()),
            writers: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
        })
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    fn slot(&self, id: &str) -> Slot {
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get(id) {
            return Arc::clone(slot);
        }
        Arc::clone(slots.entry(id.to_owned()).or_default())
    }

    fn writer(&self, id: &str) -> Option<Arc<WriteBehind>> {
        lock(&self.writers).get(id).cloned()
    }

    /// Reads and validates a stored log: version and vocabulary refusals first, then the seed
    /// rules, then crash closers for an open turn.
    async fn read_checked(&self, id: &str) -> Result<Checked<B::TornMarker>, PersistenceError> {
        let stored = self
            .backend
            .load_stored(id)
            .await
            .map_err(|error| from_backend(id, error))?
            .ok_or_else(|| PersistenceError::NotFound(id.to_owned()))?;
        let StoredLog {
            header,
            mut events,
            torn,
            revision,
        } = stored;
        let corrupt = |cause: String| PersistenceError::Corruption {
            id: id.to_owned(),
            cause,
        };
        if header.id != id {
            return Err(corrupt(format!(
                "header id \"{}\" does not match",
                header.id
            )));
        }
        normalize_stored_events(id, &mut events).map_err(corrupt)?;
        self.assert_supported(&header, &events)?;
        validate_log(&header, &events).map_err(|error| corrupt(error.to_string()))?;
        let closers = interrupted_turn_closers(&events);
        let stored_len = events.len();
        events.extend(closers);
        Ok(Checked {
            header,
            events,
            stored: stored_len,
            torn,
            revision,
        })
    }

    fn assert_supported(
        &self,
        header: &SessionHeader,
        events: &[SessionEvent],
    ) -> Result<(), PersistenceError> {
        let unknown = events
            .iter()
            .find(|event| !event.ignorable && !is_known_type(&event.kind));
        let Some(event) = unknown else { return Ok(()) };
        let location = self
            .backend
            .locate(header)
            .map(|location| format!(" (raw log: {})", location.path.display()))
            .unwrap_or_default();
        Err(PersistenceError::FormatUnsupported(format!(
            "session \"{}\" contains event type \"{}\" (seq {}) unknown to this harness and not \
             marked ignorable; refusing to interpret the log — it was likely written by a newer \
             harness{location}",
            header.id, event.kind, event.seq
        )))
    }

    /// Reads a log, committing its repair (torn tail cut, closers appended) until it reads
    /// back balanced. Runs under the session's slot lock.
    async fn read_repaired(
        &self,
        id: &str,
        state: &mut SlotState,
    ) -> Result<Checked<B::TornMarker>, PersistenceError> {
        for _ in 0..MAX_REPAIR_ROUNDS {
            let checked = self.read_checked(id).await?;
            if checked.torn.is_none() && checked.events.len() == checked.stored {
                *state = SlotState {
                    header: Some(checked.header.clone()),
                    cursor: checked.stored as u64,
                    materialized: true,
                    tracked: true,
                    owner: state.owner.take(),
                };
                return Ok(checked);
            }
            let closers: Vec<Arc<SessionEvent>> = checked
                .events
                .get(checked.stored..)
                .unwrap_or_default()
                .iter()
                .cloned()
                .map(Arc::new)
                .collect();
            // Another writer may have appended since the read: then read again.
            let current = self
                .backend
                .read_stored_revision(id)
                .await
                .map_err(|error| from_backend(id, error))?;
            if current.as_deref() != Some(checked.revision.as_str()) {
                continue;
            }
            self.backend
                .commit_repair(&checked.header, checked.torn, &closers)
                .await
                .map_err(|error| from_backend(id, error))?;
        }
        Err(PersistenceError::Corruption {
            id: id.to_owned(),
            cause: format!("the log did not read back balanced after {MAX_REPAIR_ROUNDS} repairs"),
        })
    }

    fn inspection(checked: Checked<B::TornMarker>) -> SessionInspection {
        SessionInspection {
            header: checked.header,
            events: checked.events,
        }
    }

    fn check_batch(id: &str, events: &[SessionEvent]) -> Result<(), PersistenceError> {
        for event in events {
            event
                .data
                .check_lossless()
                .map_err(|error| PersistenceError::NotJson {
                    id: id.to_owned(),
                    kind: event.kind.to_string(),
                    reason: error.to_string(),
                })?;
            check_not_retired(&event.kind, &event.data).map_err(PersistenceError::Invalid)?;
        }
        Ok(())
    }

    /// Appends under the slot lock: adopts a stored log on first use, checks contiguity,
    /// writes, and advances the cursor.
    async fn append_locked(
        &self,
        id: &str,
        state: &mut SlotState,
        batch: &[Arc<SessionEvent>],
    ) -> Result<(), PersistenceError> {
        if !state.tracked {
            self.read_repaired(id, state).await?;
        }
        for (index, event) in batch.iter().enumerate() {
            let expected = state.cursor + index as u64;
            if event.seq != expected {
                return Err(PersistenceError::SeqMismatch {
                    id: id.to_owned(),
                    expected,
                    index,
                    got: event.seq,
                });
            }
        }
        let Some(header) = state.header.clone() else {
            return Err(PersistenceError::NotFound(id.to_owned()));
        };
        self.backend
            .append_batch(&header, batch, state.materialized)
            .await
            .map_err(|error| from_backend(id, error))?;
        state.materialized = true;
        state.cursor += batch.len() as u64;
        Ok(())
    }

    /// Flushes every live session, then closes the backend.
    pub async fn close(&self) -> Result<(), PersistenceError> {
        let writers: Vec<(String, Arc<WriteBehind>)> = lock(&self.writers).drain().collect();
        lock(&self.live).clear();
        let mut failures = Vec::new();
        for (id, writer) in writers {
            if let Err(error) = writer.flush().await {
                failures.push(format!("{id}: {error}"));
            }
        }
        self.backend.close().await;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(PersistenceError::Invalid(format!(
                "{} dispose failed: {}",
                self.backend.name(),
                failures.join("; ")
            )))
        }
    }
}

#[async_trait]
impl<B: PersistenceBackend> SessionPersistence for Coordinator<B> {
    fn locate(&self, header: &SessionHeader) -> Option<SessionLocation> {
        self.backend.locate(header)
    }

    fn storage_paths(&self) -> Vec<(std::path::PathBuf, String)> {
        self.backend.storage_paths()
    }

    fn supports_raw_artifacts(&self) -> bool {
        self.backend.supports_raw_artifacts()
    }

    async fn read_raw(&self, id: &str) -> Result<Option<SessionRawArtifact>, PersistenceError> {
        self.backend
            .read_raw(id)
            .await
            .map_err(|error| from_backend(id, error))
    }

    async fn create(&self, header: SessionHeader) -> Result<(), PersistenceError> {
        header
            .validate(&header.id)
            .map_err(|error| PersistenceError::Invalid(error.to_string()))?;
        let id = header.id.clone();
        self.backend
            .check_writable()
            .await
            .map_err(|error| from_backend(&id, error))?;
        let slot = self.slot(&id);
        let mut state = slot.lock().await;
        if state.tracked {
            return Err(PersistenceError::AlreadyExists(id));
        }
        let stored = self
            .backend
            .read_stored_revision(&id)
            .await
            .map_err(|error| from_backend(&id, error))?;
        if stored.is_some() {
            return Err(PersistenceError::AlreadyExists(id));
        }
        *state = SlotState {
            header: Some(header),
            cursor: 0,
            materialized: false,
            tracked: true,
            owner: None,
        };
        Ok(())
    }

    async fn append(&self, id: &str, events: Vec<SessionEvent>) -> Result<(), PersistenceError> {
        Self::check_batch(id, &events)?;
        if events.is_empty() {
            return Ok(());
        }
        let batch: Vec<Arc<SessionEvent>> = events.into_iter().map(Arc::new).collect();
        let slot = self.slot(id);
        let mut state = slot.lock().await;
        self.append_locked(id, &mut state, &batch).await
    }

    async fn prepare(&self, id: &str) -> Result<SessionPreparation, PersistenceError> {
        if self.live_writer_exists(id) {
            return Err(PersistenceError::Busy(format!(
                "session \"{id}\" is live; it cannot be prepared again"
            )));
        }
        self.backend
            .check_writable()
            .await
            .map_err(|error| from_backend(id, error))?;
        let slot = self.slot(id);
        let mut state = slot.lock().await;
        let checked = self.read_repaired(id, &mut state).await?;
        let session = Session::from_seed(checked.header, checked.events).map_err(|error| {
            PersistenceError::Corruption {
                id: id.to_owned(),
                cause: error.to_string(),
            }
        })?;
        Ok(SessionPreparation { session })
    }

    async fn load(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        self.flush_live(id).await?;
        if let Some(live) = self.live_session(id) {
            let snapshot = Self::live_snapshot(&live);
            if !interrupted_turn_closers(&snapshot.events).is_empty() {
                return Err(PersistenceError::Busy(format!(
                    "cannot load session \"{id}\" while its live turn is open"
                )));
            }
            return Ok(snapshot);
        }
        let slot = self.slot(id);
        let mut state = slot.lock().await;
        let checked = self.read_repaired(id, &mut state).await?;
        Ok(Self::inspection(checked))
    }

    async fn inspect(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        if let Some(live) = self.live_session(id) {
            return Ok(Self::live_snapshot(&live));
        }
        let slot = self.slot(id);
        let _state = slot.lock().await;
        let checked = self.read_checked(id).await?;
        Ok(Self::inspection(checked))
    }

    async fn read_from(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<Vec<SessionEvent>, PersistenceError> {
        let (_, events) = self
            .backend
            .load_stored_from(id, from_seq)
            .await
            .map_err(|error| from_backend(id, error))?
            .ok_or_else(|| PersistenceError::NotFound(id.to_owned()))?;
        Ok(events)
    }

    async fn list(&self) -> Result<Vec<SessionHeader>, PersistenceError> {
        let listing = self.backend.list().await?;
        skip_unreadable(&listing.unreadable);
        Ok(listing.sessions)
    }

    async fn list_with_unreadable(&self) -> Result<SessionListing, PersistenceError> {
        Ok(self.backend.list().await?)
    }

    async fn list_snapshots(&self) -> Result<Vec<PersistenceSnapshot>, PersistenceError> {
        let listing = self.backend.list_snapshots().await?;
        skip_unreadable(&listing.unreadable);
        Ok(listing.snapshots)
    }
}
