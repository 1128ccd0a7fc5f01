//! The session store: the `sessions` kernel service holding live sessions.
//!
//! Appends to a live session are synchronous and in memory; each committed event is then
//! published on [`SessionEventAppended`] (emit), which persistence listens to. Durability
//! barriers go through [`SessionStore::flush`], which dispatches [`SessionFlush`] (parallel).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_kernel::sync::lock;
use dsh_kernel::{Context, DispatchError, Emit, Event, Parallel, ServiceKey};
use dsh_protocol::kinds;
use serde_json::Value;

use crate::derive::DerivedMessage;
use crate::event::SessionEvent;
use crate::header::{SessionHeader, now_ms};
use crate::session::{Session, SessionError, SurfaceIntent};

/// The store service: `ctx.sessions` in dsh.
pub const SESSIONS: ServiceKey<SessionStore> = ServiceKey::new("sessions");

/// A live session was registered; its seed (if any) is already in its log.
pub struct SessionCreated;
impl Event for SessionCreated {
    const NAME: &'static str = "session/created";
    type Mode = Emit<Arc<LiveSession>>;
}

/// An event was committed to a live session.
pub struct SessionEventAppended;
impl Event for SessionEventAppended {
    const NAME: &'static str = "session/event";
    type Mode = Emit<EventNotice>;
}

/// Make everything appended to a session so far durable.
pub struct SessionFlush;
impl Event for SessionFlush {
    const NAME: &'static str = "session/flush";
    type Mode = Parallel<Arc<LiveSession>>;
}

/// A live session was retired; listeners flush and drop their state.
pub struct SessionDisposed;
impl Event for SessionDisposed {
    const NAME: &'static str = "session/disposed";
    type Mode = Emit<Arc<LiveSession>>;
}

/// The payload of [`SessionEventAppended`].
#[derive(Clone)]
pub struct EventNotice {
    /// The session appended to.
    pub session: Arc<LiveSession>,
    /// The committed event.
    pub event: Arc<SessionEvent>,
}

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No live session has this id.
    #[error("session \"{0}\" not found")]
    NotFound(String),
    /// A live session already has this id.
    #[error("session \"{0}\" already exists")]
    AlreadyExists(String),
    /// A fork boundary is not an event of the source.
    #[error("invalid fork boundary {boundary} for session \"{session}\" with {len} events")]
    InvalidBoundary {
        /// Source session.
        session: String,
        /// Requested boundary.
        boundary: u64,
        /// Source length.
        len: usize,
    },
    /// A fork boundary falls inside a turn.
    #[error("cannot fork session \"{session}\" at seq {boundary}: turn {turn} is open there")]
    OpenTurn {
        /// Source session.
        session: String,
        /// Requested boundary.
        boundary: u64,
        /// The open turn's `turn/start` data, as text.
        turn: String,
    },
    /// The session refused the event or seed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The session was disposed; it takes no more events.
    #[error("session \"{0}\" was disposed and takes no more events")]
    Disposed(String),
    /// An append from inside a `session/event` listener of the same session.
    #[error("session \"{0}\" cannot append while it is publishing an event")]
    Reentrant(String),
    /// A `session/created` listener refused the session; it was withdrawn.
    #[error("session \"{session}\" was refused by a session/created listener: {source}")]
    Refused {
        /// Session id.
        session: String,
        /// The listener failures.
        #[source]
        source: DispatchError,
    },
    /// Flush listeners failed.
    #[error("flushing session \"{session}\" failed: {source}")]
    Flush {
        /// Session id.
        session: String,
        /// The failures.
        #[source]
        source: DispatchError,
    },
}

thread_local! {
    static PUBLISHING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// A session registered with the store: shared, appendable from any task.
pub struct LiveSession {
    id: String,
    session: Mutex<Session>,
    /// Held from an append until its listeners have run, so they see events in seq order;
    /// the session itself is unlocked while they run, so they may read it.
    publishing: Mutex<()>,
    disposed: std::sync::atomic::AtomicBool,
    /// Set when the store registers the session; a staged session publishes no events.
    published: std::sync::atomic::AtomicBool,
    ctx: Context,
}

impl std::fmt::Debug for LiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSession")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl LiveSession {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn lock(&self) -> MutexGuard<'_, Session> {
        lock(&self.session)
    }

    /// Reads the session under its lock.
    pub fn with<R>(&self, read: impl FnOnce(&Session) -> R) -> R {
        read(&self.lock())
    }

    /// The session's header.
    pub fn header(&self) -> SessionHeader {
        self.lock().header().clone()
    }

    /// A snapshot of the log.
    pub fn events(&self) -> Vec<Arc<SessionEvent>> {
        self.lock().events().to_vec()
    }

    /// The model's messages (see [`Session::derive_messages`]).
    pub fn derive_messages(&self) -> Vec<DerivedMessage> {
        self.lock().derive_messages().to_vec()
    }

    /// Appends an event and publishes it on `session/event`. Listener failures are logged;
    /// the event is committed either way.
    pub fn append(
        self: &Arc<Self>,
        kind: &str,
        data: Value,
        intent: SurfaceIntent,
    ) -> Result<Arc<SessionEvent>, StoreError> {
        let me = Arc::as_ptr(self) as usize;
        if PUBLISHING.with(|stack| stack.borrow().contains(&me)) {
            return Err(StoreError::Reentrant(self.id.clone()));
        }
        let _in_order = lock(&self.publishing);
        if self.disposed.load(Ordering::SeqCst) {
            return Err(StoreError::Disposed(self.id.clone()));
        }
        let event = self.lock().append(kind, data, intent)?;
        if !self.published.load(Ordering::SeqCst) {
            // Staged: whoever registers it later sees the whole log at `session/created`.
            return Ok(event);
        }
        let notice = EventNotice {
            session: Arc::clone(self),
            event: Arc::clone(&event),
        };
        PUBLISHING.with(|stack| stack.borrow_mut().push(me));
        let published = self.ctx.emit::<SessionEventAppended>(&notice);
        PUBLISHING.with(|stack| stack.borrow_mut().retain(|entry| *entry != me));
        if let Err(error) = published {
            tracing::error!(session = %self.id, seq = event.seq, "session/event listener failed: {error}");
        }
        Ok(event)
    }
}

/// What [`SessionStore::create`] needs besides the id.
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    /// The id; the store mints a `session-<uuid>` id when absent.
    pub id: Option<String>,
    /// The working directory (absolute).
    pub cwd: Option<String>,
    /// Inherited events; the session appends `session/end-seed` after them.
    pub seed: Option<Vec<SessionEvent>>,
    /// Fork lineage.
    pub parent_session: Option<String>,
    /// Inherited length (for forks).
    pub seed_length: Option<u64>,
}

/// Live sessions, by id.
pub struct SessionStore {
    ctx: Context,
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
    invariants: bool,
}

impl SessionStore {
    /// A store publishing its events through `ctx`.
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            live: Mutex::new(HashMap::new()),
            invariants: false,
        }
    }

    /// Makes every session published later check dsh's relational invariants.
    #[must_use]
    pub fn with_invariants(mut self, enabled: bool) -> Self {
        self.invariants = enabled;
        self
    }

    fn live(&self) -> MutexGuard<'_, HashMap<String, Arc<LiveSession>>> {
        lock(&self.live)
    }

    /// Creates and registers a live session, then announces it on `session/created`.
    pub fn create(&self, options: CreateOptions) -> Result<Arc<LiveSession>, StoreError> {
        let session = self.new_session(options)?;
        self.publish(session)
    }

    /// Builds a session from `options` without registering it (an absent id is minted).
    pub fn new_session(&self, options: CreateOptions) -> Result<Session, StoreError> {
        let id = match options.id {
            Some(id) => id,
            None => loop {
                let candidate = mint_session_id();
                if !self.live().contains_key(&candidate) {
                    break candidate;
                }
            },
        };
        let mut header = SessionHeader::new(id, now_ms());
        header.cwd = options.cwd;
        header.parent_session = options.parent_session;
        header.seed_length = options.seed_length;
        Ok(match options.seed {
            Some(seed) => Session::from_seed(header, seed)?,
            None => Session::new(header)?,
        })
    }

    /// Registers a session built elsewhere (a resumed one from persistence) and announces it.
    /// A failing `session/created` listener is logged; the session stays registered.
    pub fn publish(&self, session: Session) -> Result<Arc<LiveSession>, StoreError> {
        let live = self.stage(session)?;
        self.register(&live)?;
        self.published(&live, false)?;
        Ok(live)
    }

    /// Wraps `session` as a live session that is not registered yet: appends work, but
    /// nothing is published on `session/event` and [`SessionStore::get`] does not see it.
    /// [`SessionStore::commit`] registers it; dropping it leaves no trace.
    pub fn stage(&self, mut session: Session) -> Result<Arc<LiveSession>, StoreError> {
        if self.invariants {
            session.enable_invariants()?;
        }
        Ok(Arc::new(LiveSession {
            id: session.id().to_owned(),
            session: Mutex::new(session),
            publishing: Mutex::new(()),
            disposed: std::sync::atomic::AtomicBool::new(false),
            published: std::sync::atomic::AtomicBool::new(false),
            ctx: self.ctx.clone(),
        }))
    }

    /// Registers a staged session and announces it on `session/created`. A failing listener
    /// refuses it: the session is withdrawn ([`SessionStore::withdraw`]) and
    /// [`StoreError::Refused`] returned, so no half-created session stays behind.
    pub fn commit(&self, live: &Arc<LiveSession>) -> Result<(), StoreError> {
        self.register(live)?;
        self.published(live, true)
    }

    /// Retires a registered session without flushing it (a creation being rolled back): it
    /// takes no more events, leaves the store, and `session/disposed` is announced.
    pub fn withdraw(&self, live: &Arc<LiveSession>) {
        {
            let _in_order = lock(&live.publishing);
            live.disposed.store(true, Ordering::SeqCst);
        }
        let removed = {
            let mut map = self.live();
            match map.get(&live.id) {
                Some(entry) if Arc::ptr_eq(entry, live) => map.remove(&live.id),
                _ => None,
            }
        };
        if removed.is_some()
            && let Err(error) = self.ctx.emit::<SessionDisposed>(live)
        {
            tracing::error!(session = %live.id, "session/disposed listener failed: {error}");
        }
    }

    fn register(&self, live: &Arc<LiveSession>) -> Result<(), StoreError> {
        let mut map = self.live();
        if map.contains_key(&live.id) {
            return Err(StoreError::AlreadyExists(live.id.clone()));
        }
        map.insert(live.id.clone(), Arc::clone(live));
        Ok(())
    }

    fn published(&self, live: &Arc<LiveSession>, refusable: bool) -> Result<(), StoreError> {
        live.published.store(true, Ordering::SeqCst);
        match self.ctx.emit::<SessionCreated>(live) {
            Ok(()) => Ok(()),
            Err(source) if refusable => {
                self.withdraw(live);
                Err(StoreError::Refused {
                    session: live.id.clone(),
                    source,
                })
            }
            Err(error) => {
                tracing::error!(session = %live.id, "session/created listener failed: {error}");
                Ok(())
            }
        }
    }

    /// The live session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<LiveSession>> {
        self.live().get(id).cloned()
    }

    /// Ids of every live session.
    pub fn ids(&self) -> Vec<String> {
        self.live().keys().cloned().collect()
    }

    /// Forks `source` after the event at `boundary` (default: the last event) into a new
    /// live session that inherits `cwd` and records its lineage.
    pub fn fork(
        &self,
        source: &str,
        boundary: Option<u64>,
        child_id: Option<String>,
    ) -> Result<Arc<LiveSession>, StoreError> {
        let live = self
            .get(source)
            .ok_or_else(|| StoreError::NotFound(source.to_owned()))?;
        let (header, events) = live.with(|s| (s.header().clone(), s.events().to_vec()));
        let seed = fork_seed(source, &events, boundary)?;
        if let Some(child) = &child_id
            && self.get(child).is_some()
        {
            return Err(StoreError::AlreadyExists(child.clone()));
        }
        let seed_length = seed.len() as u64;
        self.create(CreateOptions {
            id: child_id,
            cwd: header.cwd,
            seed: Some(seed),
            parent_session: Some(header.id),
            seed_length: Some(seed_length),
        })
    }

    /// Makes everything appended to `id` durable; `Ok(true)` when at least one listener ran.
    pub async fn flush(&self, id: &str) -> Result<bool, StoreError> {
        let live = self
            .get(id)
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        let listened = self.ctx.listener_count::<SessionFlush>() > 0;
        self.ctx
            .parallel::<SessionFlush>(live)
            .await
            .map_err(|source| StoreError::Flush {
                session: id.to_owned(),
                source,
            })?;
        Ok(listened)
    }

    /// Flushes and retires a live session.
    pub async fn dispose(&self, id: &str) -> Result<(), StoreError> {
        let live = self
            .get(id)
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        {
            // From here on appends through a held handle are refused, so the flush below
            // writes everything the session will ever have.
            let _in_order = lock(&live.publishing);
            live.disposed.store(true, Ordering::SeqCst);
        }
        let flushed = self.flush(id).await;
        self.live().remove(id);
        if let Err(error) = self.ctx.emit::<SessionDisposed>(&live) {
            tracing::error!(session = %id, "session/disposed listener failed: {error}");
        }
        flushed.map(|_| ())
    }

    /// Drops every live session without flushing (the store is going away).
    pub fn clear(&self) {
        self.live().clear();
    }
}

/// A fresh id like dsh's: `session-` and a random (version 4) UUID, so ids minted by
/// different processes sharing one store do not collide.
pub fn mint_session_id() -> String {
    format!("session-{}", dsh_protocol::ids::random_uuid())
}

/// The inherited prefix of a fork: events `0..=boundary`, refusing a boundary inside a turn.
pub fn fork_seed(
    source: &str,
    events: &[Arc<SessionEvent>],
    boundary: Option<u64>,
) -> Result<Vec<SessionEvent>, StoreError> {
    let Some(last) = events.last() else {
        return match boundary {
            None => Ok(Vec::new()),
            Some(boundary) => Err(StoreError::InvalidBoundary {
                session: source.to_owned(),
                boundary,
                len: 0,
            }),
        };
    };
    let boundary = boundary.unwrap_or(last.seq);
    let invalid = || StoreError::InvalidBoundary {
        session: source.to_owned(),
        boundary,
        len: events.len(),
    };
    let end = usize::try_from(boundary).map_err(|_| invalid())?;
    let prefix = events.get(..=end).ok_or_else(invalid)?;
    if prefix.last().is_none_or(|event| event.seq != boundary) {
        return Err(invalid());
    }
    let bracket = prefix
        .iter()
        .rev()
        .find(|event| event.kind == kinds::TURN_START || event.kind == kinds::TURN_END);
    if let Some(open) = bracket.filter(|event| event.kind == kinds::TURN_START) {
        return Err(StoreError::OpenTurn {
            session: source.to_owned(),
            boundary,
            turn: open
                .data
                .get("turn")
                .map_or_else(|| "?".to_owned(), Value::to_string),
        });
    }
    Ok(prefix.iter().map(|event| (**event).clone()).collect())
}
