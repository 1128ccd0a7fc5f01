//! What the plugin keeps per session in memory: the provider versions of the files it
//! rendered (so unchanged files are not read again), the baseline preparation of this
//! process, and the file touches waiting for the next step. None of it is needed for
//! correctness after a restart: the durable state is the session's visible history.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

use dsh_fs::FsVersion;
use dsh_kernel::sync::lock;
use dsh_session::LiveSession;

/// What was last rendered from one scope, with the provider version it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionState {
    pub(crate) path: String,
    pub(crate) version: FsVersion,
    pub(crate) digest: String,
    pub(crate) trimmed_digest: String,
}

/// The baseline this process composed (or found compatible) for a session: its identity and
/// the scopes it read but left out (budget or duplicates), which later reconciliations must
/// not add back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Preparation {
    pub(crate) identity: String,
    pub(crate) excluded: HashSet<String>,
}

/// The caches a composition reads and, when its step enters, leaves behind.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caches {
    pub(crate) versions: HashMap<String, VersionState>,
    pub(crate) preparation: Option<Preparation>,
}

#[derive(Debug, Default)]
struct SessionState {
    /// The live session the caches belong to (a resumed session is a new one).
    session: Weak<LiveSession>,
    caches: Caches,
    /// `file_path`s of successful read/write/edit results since the last entered step.
    touches: Vec<String>,
}

/// The per-session state of every session, by id.
#[derive(Debug, Default)]
pub(crate) struct States(Mutex<HashMap<String, SessionState>>);

impl States {
    /// Records a touch of `path` by `session_id`'s agent.
    pub(crate) fn touch(&self, session_id: &str, path: String) {
        lock(&self.0)
            .entry(session_id.to_owned())
            .or_default()
            .touches
            .push(path);
    }

    /// Takes the pending touches and a working copy of the caches of `session` (fresh caches
    /// when they belonged to another live session of the same id).
    pub(crate) fn take(&self, session: &Arc<LiveSession>) -> (Vec<String>, Caches) {
        let mut states = lock(&self.0);
        let state = states.entry(session.id().to_owned()).or_default();
        if !Weak::ptr_eq(&state.session, &Arc::downgrade(session)) {
            state.session = Arc::downgrade(session);
            state.caches = Caches::default();
        }
        (std::mem::take(&mut state.touches), state.caches.clone())
    }

    /// Puts `touches` back in front of any recorded since (the step did not enter).
    pub(crate) fn restore(&self, session_id: &str, mut touches: Vec<String>) {
        if touches.is_empty() {
            return;
        }
        let mut states = lock(&self.0);
        let state = states.entry(session_id.to_owned()).or_default();
        touches.append(&mut state.touches);
        state.touches = touches;
    }

    /// Keeps `caches` as `session`'s.
    pub(crate) fn commit(&self, session: &Arc<LiveSession>, caches: Caches) {
        let mut states = lock(&self.0);
        let state = states.entry(session.id().to_owned()).or_default();
        state.session = Arc::downgrade(session);
        state.caches = caches;
    }

    /// Forgets a retired session.
    pub(crate) fn forget(&self, session_id: &str) {
        lock(&self.0).remove(session_id);
    }

    /// Forgets every session (the plugin unloads).
    pub(crate) fn clear(&self) {
        lock(&self.0).clear();
    }
}
