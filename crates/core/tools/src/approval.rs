//! The approval seam: who answers a `tools/pre-execute` `ask`.
//!
//! [`crate::UserApprovalPlugin`] provides [`APPROVAL`]. Without it an `ask` is denied with
//! the listener's reason, or `tool "<name>" requires approval (not yet supported)`, as in
//! dsh without the user-approval plugin.

use async_trait::async_trait;
use dsh_kernel::ServiceKey;
use tokio_util::sync::CancellationToken;

use crate::definition::ToolCaller;
use crate::error::ToolError;
use crate::execution::ToolExecution;

/// The approval service, `approval` (dsh's `ctx.approval`).
pub const APPROVAL: ServiceKey<dyn ApprovalService> = ServiceKey::new("approval");

/// Answers approval requests (a UI, a policy).
#[async_trait]
pub trait ApprovalService: Send + Sync + 'static {
    /// Asks whether the call may run once. An error fails the call with its message.
    async fn request(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError>;
}

/// One pending question.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// Who the call runs for (routes the question and receives the audit events).
    pub caller: ToolCaller,
    /// The tool's name.
    pub tool_name: String,
    /// The call's id.
    pub call_id: String,
    /// The `ask` decision's reason.
    pub reason: Option<String>,
    /// The caller's cancellation: cancelling withdraws the question (`Cancelled`).
    pub signal: CancellationToken,
}

/// An answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// Run this call, once.
    AllowedOnce,
    /// The user said no.
    Rejected,
    /// The question was withdrawn.
    Cancelled,
    /// Nobody could answer.
    Unavailable,
}

impl ApprovalOutcome {
    /// dsh's wire name: `allowed-once`, `rejected`, `cancelled`, `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowedOnce => "allowed-once",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
            Self::Unavailable => "unavailable",
        }
    }

    /// The outcome named `text`.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::AllowedOnce,
            Self::Rejected,
            Self::Cancelled,
            Self::Unavailable,
        ]
        .into_iter()
        .find(|outcome| outcome.as_str() == text)
    }
}

/// An `ask` resolved: the denial reason (`None` allows), and whether approval reported
/// cancellation.
pub(crate) struct AskResolution {
    pub(crate) denial: Option<String>,
    pub(crate) approval_cancelled: bool,
}

/// Resolves an `ask` through `approval` exactly as dsh's `serviceAsk` does.
pub(crate) async fn resolve_ask(
    approval: Option<std::sync::Arc<dyn ApprovalService>>,
    exec: &ToolExecution,
    reason: Option<String>,
) -> Result<AskResolution, ToolError> {
    let name = exec.name();
    let deny = |reason: String| AskResolution {
        denial: Some(reason),
        approval_cancelled: false,
    };
    let Some(approval) = approval else {
        return Ok(deny(reason.unwrap_or_else(|| {
            format!("tool \"{name}\" requires approval (not yet supported)")
        })));
    };
    let Some(caller) = exec.caller() else {
        return Ok(deny(format!(
            "tool \"{name}\" requires approval, but the call has no agent to route it through"
        )));
    };
    let outcome = approval
        .request(ApprovalRequest {
            caller: caller.clone(),
            tool_name: name.to_owned(),
            call_id: exec.call_id().to_owned(),
            reason,
            signal: exec.signal().clone(),
        })
        .await?;
    Ok(match outcome {
        ApprovalOutcome::AllowedOnce => AskResolution {
            denial: None,
            approval_cancelled: false,
        },
        ApprovalOutcome::Rejected => deny(format!("the user rejected tool \"{name}\"")),
        ApprovalOutcome::Cancelled => AskResolution {
            denial: Some(format!("approval for tool \"{name}\" was cancelled")),
            approval_cancelled: true,
        },
        ApprovalOutcome::Unavailable => deny(format!(
            "tool \"{name}\" requires approval, but no approval channel is available"
        )),
    })
}
