//! Why an agent's work was cancelled, and the cancellation handle that remembers it.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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

impl CancelCause {
    /// The cause as dsh logs it in `turn/end {reason: {kind: 'aborted', reason}}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::User => json!({"kind": "user"}),
            Self::Parent => json!({"kind": "parent"}),
            Self::Disposed => json!({"kind": "disposed"}),
            Self::Hook { reason } => json!({"kind": "hook", "reason": reason}),
        }
    }
}

/// One activity's cancellation: a token plus the first cause.
#[derive(Debug, Clone, Default)]
pub(crate) struct Abort {
    token: CancellationToken,
    cause: Arc<Mutex<Option<CancelCause>>>,
}

impl Abort {
    /// Cancels with `cause` unless already cancelled (the first cause wins).
    pub(crate) fn abort(&self, cause: CancelCause) {
        {
            let mut slot = self.cause.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_none() {
                *slot = Some(cause);
            }
        }
        self.token.cancel();
    }

    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.token.is_cancelled()
    }

    /// The cause, once cancelled. A token cancelled by someone else without a cause reads
    /// as [`CancelCause::Parent`].
    pub(crate) fn cause(&self) -> Option<CancelCause> {
        if !self.is_aborted() {
            return None;
        }
        let slot = self.cause.lock().unwrap_or_else(PoisonError::into_inner);
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
        assert_eq!(
            CancelCause::User.to_json().to_string(),
            r#"{"kind":"user"}"#
        );
        assert_eq!(
            CancelCause::Hook {
                reason: "budget".into()
            }
            .to_json()
            .to_string(),
            r#"{"kind":"hook","reason":"budget"}"#
        );
    }
}
