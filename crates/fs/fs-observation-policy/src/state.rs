//! What each session has seen, by file identity.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use dsh_fs::{FsObservation, FsObserved, FsTarget};

/// The last observation of each file, per session. Calls without a session are not kept.
#[derive(Debug, Default)]
pub struct Observations {
    by_session: Mutex<HashMap<String, HashMap<PathBuf, FsObservation>>>,
}

impl Observations {
    /// What `session` last saw of `target`; `None` when unseen or without a session.
    pub fn get(&self, session: Option<&str>, target: &FsTarget) -> Option<FsObservation> {
        let session = session?;
        dsh_kernel::sync::lock(&self.by_session)
            .get(session)?
            .get(&target.target_key)
            .cloned()
    }

    /// Keeps `observed` for its actor's session (nothing without one).
    pub fn record(&self, observed: &FsObserved) {
        let Some(session) = observed.actor.session_id.clone() else {
            return;
        };
        dsh_kernel::sync::lock(&self.by_session)
            .entry(session)
            .or_default()
            .insert(
                observed.target.target_key.clone(),
                observed.observation.clone(),
            );
    }
}
