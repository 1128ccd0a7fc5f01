//! [`Session`]: the append-only log with its surface fold and derived-message cache.

use std::sync::Arc;

use serde_json::Value;

use crate::derive::{DerivedMessage, DerivedMessages};
use crate::event::{SessionEvent, SurfaceKeyOrder, SurfaceOp};
use crate::header::SessionHeader;
use crate::invariant::InvariantChecker;
use crate::seed::{check_not_retired, check_seed_event};
use crate::surface::{SurfaceFold, SurfacePlan};
use dsh_protocol::json::check_lossless;
use dsh_protocol::kinds;

/// Surface fields for an append: how a surface event changes the model's view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceIntent {
    /// `Some` on surface events (mandatory there), `None` elsewhere.
    pub op: Option<SurfaceOp>,
    /// Provenance: the earlier events this one was built from.
    pub source_event_seqs: Option<Vec<u64>>,
}

impl SurfaceIntent {
    /// `surfaceOp: "append"` without provenance.
    pub fn append() -> Self {
        Self {
            op: Some(SurfaceOp::Append),
            source_event_seqs: None,
        }
    }

    /// `surfaceOp: "append"` derived from `sources`.
    pub fn append_from(sources: Vec<u64>) -> Self {
        Self {
            op: Some(SurfaceOp::Append),
            source_event_seqs: Some(sources),
        }
    }
}

/// Why an append or a seed was refused. Nothing was added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The data cannot be stored as JSON without loss.
    #[error("session event \"{kind}\" carries non-JSON-serializable data: {reason}")]
    NotJson {
        /// Event type.
        kind: String,
        /// What is wrong.
        reason: String,
    },
    /// The event breaks a rule of the log (retired type, surface, invariant).
    #[error("session \"{session}\" refused event \"{kind}\" at seq {seq}: {reason}")]
    Refused {
        /// Session id.
        session: String,
        /// Event type.
        kind: String,
        /// The seq it would have had.
        seq: u64,
        /// The broken rule.
        reason: String,
    },
    /// A seed event is malformed.
    #[error("seed event at index {index} of session \"{session}\" is invalid: {reason}")]
    InvalidSeed {
        /// Session id.
        session: String,
        /// Index in the seed.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The header is invalid.
    #[error(transparent)]
    Header(#[from] crate::header::HeaderError),
}

/// Checks a stored or inherited log as [`Session::from_seed`] would, without building a
/// session: header, contiguous seqs, retired types, message shapes, lossless data, surface.
///
/// The per-event checks run on all cores for long logs; the first failing event is reported,
/// as a sequential check would report it.
pub fn validate_log(header: &SessionHeader, events: &[SessionEvent]) -> Result<(), SessionError> {
    header.validate(&header.id)?;
    let invalid = |index: usize, reason: String| SessionError::InvalidSeed {
        session: header.id.clone(),
        index,
        reason,
    };
    let shape_failure = first_shape_failure(events);
    let checked_up_to = shape_failure
        .as_ref()
        .map_or(events.len(), |(index, _)| *index + 1);
    let mut surface = SurfaceFold::default();
    for (index, event) in events.iter().enumerate().take(checked_up_to) {
        if event.seq != index as u64 {
            return Err(invalid(index, "seed must be contiguous from 0".into()));
        }
        if let Some((failed, reason)) = &shape_failure
            && *failed == index
        {
            return Err(invalid(index, reason.clone()));
        }
        let before = events.get(..index).unwrap_or_default();
        let plan = surface
            .plan(event, before)
            .map_err(|error| invalid(index, error.0))?;
        surface.apply(&plan);
    }
    Ok(())
}

/// Logs shorter than this are checked on the calling thread.
const PARALLEL_CHECK_THRESHOLD: usize = 4096;

/// The first event (by index) whose shape or data is invalid, checking on all cores.
fn first_shape_failure(events: &[SessionEvent]) -> Option<(usize, String)> {
    let check = |offset: usize, part: &[SessionEvent]| {
        part.iter()
            .enumerate()
            .find_map(|(index, event)| shape_problem(event).map(|reason| (offset + index, reason)))
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if events.len() < PARALLEL_CHECK_THRESHOLD || cores < 2 {
        return check(0, events);
    }
    let chunk = events.len().div_ceil(cores.min(8));
    std::thread::scope(|scope| {
        // Collected so every worker starts before this thread checks its own part.
        #[expect(
            clippy::needless_collect,
            reason = "every worker must be spawned before this thread joins the first"
        )]
        let handles: Vec<_> = events
            .chunks(chunk)
            .enumerate()
            .skip(1)
            .map(|(part, slice)| scope.spawn(move || check(part * chunk, slice)))
            .collect();
        let first = check(0, events.get(..chunk).unwrap_or_default());
        let rest = handles.into_iter().map(|handle| {
            handle
                .join()
                .unwrap_or_else(|_| Some((0, "the log check failed".to_owned())))
        });
        std::iter::once(first)
            .chain(rest)
            .flatten()
            .min_by_key(|(index, _)| *index)
    })
}

/// What is wrong with one event on its own (shape or data), if anything.
fn shape_problem(event: &SessionEvent) -> Option<String> {
    if let Err(reason) = check_seed_event(event) {
        return Some(reason);
    }
    event
        .data
        .check_lossless()
        .err()
        .map(|error| error.to_string())
}

/// Validates seed event `index` against the log before it.
fn check_seed_at<E: AsRef<SessionEvent>>(
    session: &str,
    surface: &SurfaceFold,
    index: usize,
    event: &SessionEvent,
    before: &[E],
) -> Result<SurfacePlan, SessionError> {
    let invalid = |reason: String| SessionError::InvalidSeed {
        session: session.to_owned(),
        index,
        reason,
    };
    if event.seq != index as u64 {
        return Err(invalid("seed must be contiguous from 0".into()));
    }
    check_seed_event(event).map_err(invalid)?;
    event
        .data
        .check_lossless()
        .map_err(|error| invalid(error.to_string()))?;
    surface
        .plan(event, before)
        .map_err(|error| invalid(error.0))
}

/// An append-only session log.
#[derive(Debug)]
pub struct Session {
    header: SessionHeader,
    events: Vec<Arc<SessionEvent>>,
    surface: SurfaceFold,
    derived: DerivedMessages,
    first_live_seq: u64,
    invariants: Option<InvariantChecker>,
}

impl Session {
    /// A fresh session with an empty log.
    pub fn new(header: SessionHeader) -> Result<Self, SessionError> {
        header.validate(&header.id.clone())?;
        Ok(Self {
            header,
            events: Vec::new(),
            surface: SurfaceFold::default(),
            derived: DerivedMessages::default(),
            first_live_seq: 0,
            invariants: None,
        })
    }

    /// A session continuing `seed` (a restored log or a fork's inherited prefix).
    ///
    /// Every seed event is validated (contiguous seqs, retired types, message shapes, surface
    /// rules). Unless the seed already ends with `session/end-seed`, that marker is appended at
    /// [`Session::first_live_seq`], so reopening an untouched session does not grow its log.
    pub fn from_seed(header: SessionHeader, seed: Vec<SessionEvent>) -> Result<Self, SessionError> {
        let mut session = Self::new(header)?;
        session.events.reserve(seed.len() + 1);
        for (index, event) in seed.into_iter().enumerate() {
            let plan = check_seed_at(
                &session.header.id,
                &session.surface,
                index,
                &event,
                &session.events,
            )?;
            session.surface.apply(&plan);
            session.events.push(Arc::new(event));
        }
        session.first_live_seq = session.events.len() as u64;
        let ends_with_marker = session
            .events
            .last()
            .is_some_and(|last| last.kind == kinds::SESSION_END_SEED);
        if !ends_with_marker {
            let marker = Value::Object(serde_json::Map::new());
            session.append(kinds::SESSION_END_SEED, marker, SurfaceIntent::default())?;
        }
        Ok(session)
    }

    /// Turns on dsh's relational invariants (turn and step enclosure, call/result pairing) for
    /// every later append; the log so far must satisfy them too.
    pub fn enable_invariants(&mut self) -> Result<(), SessionError> {
        let mut checker = InvariantChecker::new();
        for event in &self.events {
            checker
                .check(event)
                .map_err(|error| self.refused(event, error.to_string()))?;
        }
        self.invariants = Some(checker);
        Ok(())
    }

    fn refused(&self, event: &SessionEvent, reason: String) -> SessionError {
        SessionError::Refused {
            session: self.header.id.clone(),
            kind: event.kind.to_string(),
            seq: event.seq,
            reason,
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The session's metadata.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The log so far.
    pub fn events(&self) -> &[Arc<SessionEvent>] {
        &self.events
    }

    /// The seq the next event gets (the log length).
    pub fn next_seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// The first seq written by this session rather than inherited (0 without a seed).
    pub fn first_live_seq(&self) -> u64 {
        self.first_live_seq
    }

    /// The surface fold.
    pub fn surface(&self) -> &SurfaceFold {
        &self.surface
    }

    /// Appends an event stamped with the current time.
    pub fn append(
        &mut self,
        kind: &str,
        data: Value,
        intent: SurfaceIntent,
    ) -> Result<Arc<SessionEvent>, SessionError> {
        let now = i64::try_from(crate::header::now_ms()).unwrap_or(i64::MAX);
        self.append_at(kind, data, intent, now)
    }

    /// Appends an event with an explicit `time` (epoch ms). Nothing changes when it is refused.
    pub fn append_at(
        &mut self,
        kind: &str,
        data: Value,
        intent: SurfaceIntent,
        time: i64,
    ) -> Result<Arc<SessionEvent>, SessionError> {
        check_lossless(&data).map_err(|error| SessionError::NotJson {
            kind: kind.to_owned(),
            reason: error.to_string(),
        })?;
        let mut event = SessionEvent::new(kind, self.next_seq(), time, data);
        event.surface_op = intent.op;
        event.source_event_seqs = intent.source_event_seqs;
        event.surface_key_order = SurfaceKeyOrder::SourcesFirst;
        self.push(event)
    }

    /// Appends an event built elsewhere (crash closers); its seq must be the next one.
    pub fn append_event(&mut self, event: SessionEvent) -> Result<Arc<SessionEvent>, SessionError> {
        event
            .data
            .check_lossless()
            .map_err(|error| SessionError::NotJson {
                kind: event.kind.to_string(),
                reason: error.to_string(),
            })?;
        self.push(event)
    }

    fn push(&mut self, event: SessionEvent) -> Result<Arc<SessionEvent>, SessionError> {
        check_not_retired(&event.kind, &event.data)
            .map_err(|reason| self.refused(&event, reason))?;
        let plan = self
            .surface
            .plan(&event, &self.events)
            .map_err(|error| self.refused(&event, error.0))?;
        if let Some(checker) = self.invariants.as_mut()
            && let Err(error) = checker.check(&event)
        {
            return Err(self.refused(&event, error.to_string()));
        }
        self.surface.apply(&plan);
        let event = Arc::new(event);
        self.events.push(Arc::clone(&event));
        Ok(event)
    }

    /// The model's messages: the surface projected through [`DerivedMessage`].
    ///
    /// Cached: a call projects only surface nodes added since the last call, and rebuilds only
    /// after a replace.
    pub fn derive_messages(&mut self) -> &[DerivedMessage] {
        self.derived.update(&self.surface, &self.events);
        self.derived.messages()
    }
}
