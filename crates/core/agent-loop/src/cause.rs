//! Why an agent's work was cancelled, and the cancellation handle that remembers it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dsh_kernel::sync::lock;
use dsh_session::vocab::AbortCause;
use tokio_util::sync::CancellationToken;

use crate::error::TurnError;

/// Why an agent's activity was cancelled (dsh's `AgentCancelCause`). The first cause given
/// to one activity wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelCause {
    /// The user stopped it (Ctrl-C, a stop button).
    User,
    /// The parent agent or the owning app stopped it.
    Parent,
    /// The agent is being disposed.
    Disposed,
    /// A plugin stopped it, saying why.
    Hook {
        /// The plugin's reason.
        reason: String,
    },
}

impl From<CancelCause> for AbortCause {
    /// The cause as `turn/end {reason: {kind: 'aborted', reason}}` records it.
    fn from(cause: CancelCause) -> Self {
        match cause {
            CancelCause::User => Self::User,
            CancelCause::Parent => Self::Parent,
            CancelCause::Disposed => Self::Disposed,
            CancelCause::Hook { reason } => Self::Hook { reason },
        }
    }
}

/// One activity's cancellation: a token plus the first cause.
#[derive(Debug, Clone, Default)]
pub(crate) struct Abort {
    token: CancellationToken,
    cause: Arc<Mutex<Option<CancelCause>>>,
    /// Set as soon as a cause is recorded, before the token fires.
    requested: Arc<AtomicBool>,
}

impl Abort {
    /// Records `cause` (the first cause wins): from now on the activity reads as aborted,
    /// though the token has not fired yet. A cancel records first, then logs its inbox
    /// changes, then fires the token, so the driver cannot start work in between.
    pub(crate) fn request(&self, cause: CancelCause) {
        let mut slot = lock(&self.cause);
        if slot.is_none() {
            *slot = Some(cause);
        }
        self.requested.store(true, Ordering::SeqCst);
    }

    /// Records `cause` and fires the token.
    pub(crate) fn abort(&self, cause: CancelCause) {
        self.request(cause);
        self.token.cancel();
    }

    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.requested.load(Ordering::SeqCst) || self.token.is_cancelled()
    }

    /// `Err(Aborted)` once the activity is cancelled.
    pub(crate) fn check(&self) -> Result<(), TurnError> {
        if self.is_aborted() {
            Err(TurnError::Aborted)
        } else {
            Ok(())
        }
    }

    /// The cause, once cancelled. A token cancelled by someone else without a cause reads
    /// as [`CancelCause::Parent`].
    pub(crate) fn cause(&self) -> Option<CancelCause> {
        if !self.is_aborted() {
            return None;
        }
        let slot = lock(&self.cause);
        Some(slot.clone().unwrap_or(CancelCause::Parent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cause_wins() {
        let abort = Abort::default();
        assert_eq!(abort.cause(), None);
        abort.abort(CancelCause::User);
        abort.abort(CancelCause::Disposed);
        assert_eq!(abort.cause(), Some(CancelCause::User));
        assert!(abort.token().is_cancelled());
    }

    #[test]
    fn causes_print_as_dsh_logs_them() {
        let print = |cause: CancelCause| {
            serde_json::to_string(&AbortCause::from(cause)).unwrap_or_default()
        };
        assert_eq!(print(CancelCause::User), r#"{"kind":"user"}"#);
        assert_eq!(
            print(CancelCause::Hook {
                reason: "budget".into()
            }),
            r#"{"kind":"hook","reason":"budget"}"#
        );
    }
}
