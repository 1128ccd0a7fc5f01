//! The startup audit: after boot every enabled row is active, or we say why not.

use std::fmt;

use crate::fiber::FiberId;
use crate::fiber::FiberLabel;
use crate::fiber::FiberState;
use crate::runtime::State;

/// Fibers that should be active but are not, each with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AuditError {
    /// One entry per fiber that did not activate, in the order the audit was given.
    pub problems: Vec<AuditProblem>,
}

/// One fiber that did not activate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditProblem {
    /// The fiber.
    pub fiber: FiberLabel,
    /// Why it is not active.
    pub issue: AuditIssue,
}

/// Why a fiber is not active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditIssue {
    /// Its config or `apply` failed.
    Failed {
        /// The error, with its causes.
        cause: String,
    },
    /// It waits for services that are absent or whose providers are not active.
    Pending {
        /// The services it waits for, in inject order.
        waiting_for: Vec<String>,
    },
    /// Its services are there but the fiber that mounted it is not active.
    WaitingForParent,
    /// It is still loading or unloading (the audit ran before the runtime settled).
    Unsettled(FiberState),
    /// It was disposed.
    Disposed,
}

impl fmt::Display for AuditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        let noun = if count == 1 { "entry" } else { "entries" };
        write!(f, "{count} {noun} did not activate:")?;
        for problem in &self.problems {
            write!(f, "\n  {}: {}", problem.fiber, problem.issue)?;
        }
        Ok(())
    }
}

impl fmt::Display for AuditIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed { cause } => write!(f, "failed: {cause}"),
            Self::Pending { waiting_for } => write!(
                f,
                "pending (waiting for service(s): {})",
                waiting_for.join(", ")
            ),
            Self::WaitingForParent => f.write_str("pending (its parent is not active)"),
            Self::Unsettled(state) => write!(f, "still {state}"),
            Self::Disposed => f.write_str("disposed"),
        }
    }
}

/// Checks that each of `fibers` is active.
pub(crate) fn audit(st: &State, fibers: &[FiberId]) -> Result<(), AuditError> {
    let problems: Vec<AuditProblem> = fibers
        .iter()
        .filter_map(|&id| {
            let issue = match st.fibers.get(&id) {
                None => AuditIssue::Disposed,
                Some(fiber) => match fiber.state {
                    FiberState::Active => return None,
                    FiberState::Failed => AuditIssue::Failed {
                        cause: fiber
                            .error
                            .clone()
                            .unwrap_or_else(|| "unknown error".to_owned()),
                    },
                    FiberState::Pending => {
                        let waiting_for = st.missing_services(id);
                        if waiting_for.is_empty() {
                            AuditIssue::WaitingForParent
                        } else {
                            AuditIssue::Pending { waiting_for }
                        }
                    }
                    FiberState::Disposed => AuditIssue::Disposed,
                    state => AuditIssue::Unsettled(state),
                },
            };
            Some(AuditProblem {
                fiber: st.label_of(id),
                issue,
            })
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(AuditError { problems })
    }
}
