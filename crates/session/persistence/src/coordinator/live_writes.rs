//! Live sessions: attaching their write-behind, writing their batches, and reconciling a live
//! log with what is already stored under its id.

use std::sync::{Arc, Weak};

use dsh_protocol::json::to_js_string;
use dsh_session::{LiveSession, SessionEvent};
use tracing::Instrument;

use super::{Coordinator, SlotState, from_backend, lock};
use crate::backend::PersistenceBackend;
use crate::error::PersistenceError;
use crate::seam::SessionInspection;
use crate::write_behind::{BatchWriter, WriteBehind};

impl<B: PersistenceBackend> Coordinator<B> {
    /// Writes a live session's batch: on first write, reconciles with storage (nothing stored:
    /// start at 0; a stored prefix the live log extends: continue after it; anything else is an
    /// id collision), then skips events already stored.
    async fn write_live(
        &self,
        live: &LiveSession,
        batch: Vec<Arc<SessionEvent>>,
    ) -> Result<(), PersistenceError> {
        let id = live.id();
        let slot = self.slot(id);
        let mut state = slot.lock().await;
        if !state
            .owner
            .as_ref()
            .is_some_and(|owner| std::ptr::eq(owner.as_ptr(), live))
        {
            self.reconcile_live(live, &mut state).await?;
            state.owner = lock(&self.live).get(id).cloned();
        }
        let mut fresh: Vec<Arc<SessionEvent>> = batch
            .into_iter()
            .filter(|event| event.seq >= state.cursor)
            .collect();
        // A session attached while it was appending may have queued an event twice.
        fresh.sort_by_key(|event| event.seq);
        fresh.dedup_by_key(|event| event.seq);
        if fresh.is_empty() {
            return Ok(());
        }
        self.append_locked(id, &mut state, &fresh).await
    }

    async fn reconcile_live(
        &self,
        live: &LiveSession,
        state: &mut SlotState,
    ) -> Result<(), PersistenceError> {
        let id = live.id();
        let header = live.header();
        let stored = self
            .backend
            .load_stored(id)
            .await
            .map_err(|error| from_backend(id, error))?;
        let Some(stored) = stored else {
            *state = SlotState {
                header: Some(header),
                tracked: true,
                ..SlotState::default()
            };
            return Ok(());
        };
        let live_events = live.events();
        // Payloads compare as JSON text: `1.0` written live reads back as `1`.
        let same =
            |a: &SessionEvent, b: &SessionEvent| a == b || to_js_string(a) == to_js_string(b);
        let covers = stored.header.cwd == header.cwd
            && stored.events.len() <= live_events.len()
            && stored
                .events
                .iter()
                .zip(&live_events)
                .all(|(a, b)| same(a, b));
        if !covers {
            return Err(PersistenceError::Busy(format!(
                "session \"{id}\" id collision: a different session is stored under this id \
                 (another cwd or history); give the live session a new id"
            )));
        }
        if stored.torn.is_some() {
            self.backend
                .commit_repair(&stored.header, stored.torn, &[])
                .await
                .map_err(|error| from_backend(id, error))?;
        }
        *state = SlotState {
            header: Some(stored.header),
            cursor: stored.events.len() as u64,
            materialized: true,
            tracked: true,
            owner: None,
        };
        Ok(())
    }

    /// Starts persisting a live session: queues its whole log (events already stored are
    /// skipped at write time).
    pub fn attach_live(self: &Arc<Self>, live: &Arc<LiveSession>) {
        let writer = {
            let mut writers = lock(&self.writers);
            if writers.contains_key(live.id()) {
                return;
            }
            let coordinator = Arc::downgrade(self);
            let target = Arc::downgrade(live);
            let write: BatchWriter = Arc::new(move |batch| {
                let coordinator = coordinator.upgrade();
                let target = target.upgrade();
                Box::pin(async move {
                    match (coordinator, target) {
                        (Some(coordinator), Some(live)) => {
                            coordinator.write_live(&live, batch).await
                        }
                        _ => Err(PersistenceError::Invalid(
                            "the session or its persistence was disposed before the write".into(),
                        )),
                    }
                })
            });
            let writer = WriteBehind::new(live.id(), self.options.write_batch_max_delay, write);
            writers.insert(live.id().to_owned(), Arc::clone(&writer));
            lock(&self.live).insert(live.id().to_owned(), Arc::downgrade(live));
            writer
        };
        for event in live.events() {
            writer.enqueue(event);
        }
    }

    /// Queues one committed event of a live session.
    pub fn enqueue_live(self: &Arc<Self>, live: &Arc<LiveSession>, event: Arc<SessionEvent>) {
        match self.writer(live.id()) {
            Some(writer) => writer.enqueue(event),
            // Not seen at creation (it predates this plugin): queue its whole log.
            None => self.attach_live(live),
        }
    }

    /// Makes a live session's queued events durable.
    pub async fn flush_live(&self, id: &str) -> Result<(), PersistenceError> {
        match self.writer(id) {
            Some(writer) => {
                let span = tracing::debug_span!("flush", session_id = %id);
                writer.flush().instrument(span).await
            }
            None => Ok(()),
        }
    }

    /// Stops tracking a disposed live session (already flushed by the store). Its slot stays,
    /// so operations still queued on it remain serialized.
    pub fn forget_live(&self, id: &str) {
        lock(&self.writers).remove(id);
        lock(&self.live).remove(id);
    }

    /// The live session with this id, if one is attached.
    pub(super) fn live_session(&self, id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.live).get(id).and_then(Weak::upgrade)
    }

    /// A live session's current log.
    pub(super) fn live_snapshot(live: &LiveSession) -> SessionInspection {
        SessionInspection {
            header: live.header(),
            events: live
                .events()
                .iter()
                .map(|event| (**event).clone())
                .collect(),
        }
    }

    pub(super) fn live_writer_exists(&self, id: &str) -> bool {
        lock(&self.writers).contains_key(id)
    }
}
