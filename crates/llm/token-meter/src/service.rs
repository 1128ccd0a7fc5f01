//! The `tokenMeter` service: one [`SessionMeter`] per live session, created on the first
//! read and then advanced on every `session/event`, so a read only folds what it has not
//! seen.

use std::collections::HashMap;
use std::sync::Mutex;

use dsh_kernel::ServiceKey;
use dsh_kernel::sync::lock;
use dsh_llm::Message;
use dsh_session::LiveSession;

use crate::error::MeterError;
use crate::estimate::estimate_message;
use crate::fold::SessionMeter;
use crate::header::PricedHeader;
use crate::measurement::TokenMeasurement;
use crate::surface::TokenSurfaceNode;

/// The meter service: `ctx.tokenMeter` in dsh.
pub const TOKEN_METER: ServiceKey<TokenMeter> = ServiceKey::new("tokenMeter");

/// A session's fold and the live session it belongs to (a new session under a disposed
/// one's id starts over).
#[derive(Debug)]
struct Entry {
    origin: usize,
    meter: SessionMeter,
}

/// The token meter: per-session folds over the store's live sessions.
#[derive(Debug, Default)]
pub struct TokenMeter {
    sessions: Mutex<HashMap<String, Entry>>,
}

fn origin(session: &LiveSession) -> usize {
    std::ptr::from_ref(session) as usize
}

impl TokenMeter {
    /// A meter that has read no session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `read` on the session's fold, caught up with its log.
    fn with_meter<R>(
        &self,
        session: &LiveSession,
        read: impl FnOnce(&SessionMeter) -> R,
    ) -> Result<R, MeterError> {
        let mut sessions = lock(&self.sessions);
        let entry = sessions
            .entry(session.id().to_owned())
            .or_insert_with(|| Entry {
                origin: origin(session),
                meter: SessionMeter::new(),
            });
        if entry.origin != origin(session) {
            *entry = Entry {
                origin: origin(session),
                meter: SessionMeter::new(),
            };
        }
        session.with(|log| entry.meter.sync(log.events()))?;
        Ok(read(&entry.meter))
    }

    /// The estimate of the session's next request (dsh's `measure(session, requestHeader?)`):
    /// under `request_header` when given, else under the latest logged `request/header`.
    /// It reads the session under its lock: not to be called from inside
    /// [`LiveSession::with`].
    pub fn measure(
        &self,
        session: &LiveSession,
        request_header: Option<&PricedHeader>,
    ) -> Result<TokenMeasurement, MeterError> {
        self.with_meter(session, |meter| meter.measure(request_header))
    }

    /// The session's current surface, priced, head to tail.
    pub fn nodes(&self, session: &LiveSession) -> Result<Vec<TokenSurfaceNode>, MeterError> {
        self.with_meter(session, |meter| meter.nodes().to_vec())
    }

    /// The heuristic price of one message ([`estimate_message`]).
    pub fn estimate_message(&self, message: &Message) -> u64 {
        estimate_message(message)
    }

    /// Advances the fold of a session someone has read; sessions never read stay unread.
    /// A failure is left for the next read to report.
    pub(crate) fn observe(&self, session: &LiveSession) {
        let mut sessions = lock(&self.sessions);
        if let Some(entry) = sessions
            .get_mut(session.id())
            .filter(|entry| entry.origin == origin(session))
        {
            // The event stays unread; the next measure returns the same error.
            let _unread = session.with(|log| entry.meter.sync(log.events()));
        }
    }

    /// Drops a disposed session's fold.
    pub(crate) fn forget(&self, session: &LiveSession) {
        let mut sessions = lock(&self.sessions);
        if sessions
            .get(session.id())
            .is_some_and(|entry| entry.origin == origin(session))
        {
            sessions.remove(session.id());
        }
    }

    /// Drops every fold.
    pub(crate) fn clear(&self) {
        lock(&self.sessions).clear();
    }
}
