//! Sandbox escalation: a denied call retried once in a wider mode, with the user's approval
//! (dsh's `validateEscalationArgs` and `approveEscalation`). Modes are named as dsh names
//! them (`workspace-write`, ...); the caller says whether the requested one is wider.

use serde_json::Value;

use crate::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use crate::definition::ToolRunContext;
use crate::error::ToolError;

/// The escalation pair of a call's arguments (`sandbox_permissions` and `justification`):
/// `None` when neither is given, the pair when both are, dsh's error otherwise.
pub fn escalation_args(args: &Value) -> Result<Option<(String, String)>, ToolError> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    match (text("sandbox_permissions"), text("justification")) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(ToolError::new(
            "invalid escalation: sandbox_permissions requires a justification",
        )),
        (None, Some(_)) => Err(ToolError::new(
            "invalid escalation: justification is only valid together with sandbox_permissions",
        )),
        (Some(_), Some(reason)) if reason.trim().is_empty() => Err(ToolError::new(
            "invalid justification: expected a non-empty sentence",
        )),
        (Some(mode), Some(reason)) => Ok(Some((mode, reason))),
    }
}

/// One escalation question.
#[derive(Debug, Clone, Copy)]
pub struct EscalationAsk<'a> {
    /// The mode asked for.
    pub requested: &'a str,
    /// The call's current mode.
    pub effective: &'a str,
    /// Whether `requested` allows strictly more than `effective`.
    pub strictly_wider: bool,
    /// The model's one-sentence reason.
    pub justification: &'a str,
    /// What is escalated, in refusals: `command` (bash) or `operation` (file tools).
    pub subject: &'a str,
}

/// Asks the user, through `approver`, to run this one call in `ask.requested`; `Ok` means
/// approved, anything else is dsh's refusal text.
pub async fn approve_escalation(
    ask: EscalationAsk<'_>,
    approver: Option<&dyn ApprovalService>,
    run: &ToolRunContext,
) -> Result<(), ToolError> {
    let name = ask.requested;
    if !ask.strictly_wider {
        return Err(ToolError::new(format!(
            "sandbox escalation to \"{name}\" is not strictly wider than this call's current \
             \"{}\" mode",
            ask.effective
        )));
    }
    let Some(approver) = approver else {
        return Err(ToolError::new(format!(
            "sandbox escalation to \"{name}\" requires approval, but no approval service is \
             composed"
        )));
    };
    let Some(caller) = run.caller.clone() else {
        return Err(ToolError::new(format!(
            "sandbox escalation to \"{name}\" requires approval, but the call has no agent to \
             route it through"
        )));
    };
    let outcome = approver
        .request(ApprovalRequest {
            caller,
            tool_name: run.name.clone(),
            call_id: run.call_id.clone(),
            reason: Some(format!("escalate sandbox to {name}: {}", ask.justification)),
            signal: run.signal.clone(),
        })
        .await?;
    match outcome {
        ApprovalOutcome::AllowedOnce => Ok(()),
        ApprovalOutcome::Rejected => Err(ToolError::new(format!(
            "the user rejected escalating this {} to \"{name}\"",
            ask.subject
        ))),
        ApprovalOutcome::Cancelled => Err(ToolError::new(format!(
            "approval for escalating to \"{name}\" was cancelled"
        ))),
        ApprovalOutcome::Unavailable => Err(ToolError::new(format!(
            "sandbox escalation to \"{name}\" requires approval, but no approval channel is \
             available"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::definition::ToolCaller;

    struct Answer(ApprovalOutcome, std::sync::Mutex<Option<ApprovalRequest>>);

    #[async_trait::async_trait]
    impl ApprovalService for Answer {
        async fn request(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError> {
            *self.1.lock().unwrap() = Some(request);
            Ok(self.0)
        }
    }

    fn run(caller: bool) -> ToolRunContext {
        ToolRunContext {
            call_id: "c1".into(),
            root_call_id: "c1".into(),
            name: "write".into(),
            caller: caller.then(ToolCaller::default),
            signal: CancellationToken::new(),
        }
    }

    const ASK: EscalationAsk<'static> = EscalationAsk {
        requested: "danger-full-access",
        effective: "workspace-write",
        strictly_wider: true,
        justification: "needs /etc",
        subject: "operation",
    };

    async fn ask(outcome: Option<ApprovalOutcome>, caller: bool) -> Result<(), String> {
        let approver = outcome.map(|outcome| Answer(outcome, std::sync::Mutex::new(None)));
        approve_escalation(
            ASK,
            approver.as_ref().map(|a| a as &dyn ApprovalService),
            &run(caller),
        )
        .await
        .map_err(|error| error.message().to_owned())
    }

    #[tokio::test]
    async fn each_outcome_gives_dshs_answer() {
        assert_eq!(
            ask(None, true).await.unwrap_err(),
            "sandbox escalation to \"danger-full-access\" requires approval, but no approval \
             service is composed"
        );
        assert_eq!(
            ask(Some(ApprovalOutcome::AllowedOnce), false)
                .await
                .unwrap_err(),
            "sandbox escalation to \"danger-full-access\" requires approval, but the call has no \
             agent to route it through"
        );
        assert_eq!(ask(Some(ApprovalOutcome::AllowedOnce), true).await, Ok(()));
        assert_eq!(
            ask(Some(ApprovalOutcome::Rejected), true)
                .await
                .unwrap_err(),
            "the user rejected escalating this operation to \"danger-full-access\""
        );
        assert_eq!(
            ask(Some(ApprovalOutcome::Cancelled), true)
                .await
                .unwrap_err(),
            "approval for escalating to \"danger-full-access\" was cancelled"
        );
        assert_eq!(
            ask(Some(ApprovalOutcome::Unavailable), true)
                .await
                .unwrap_err(),
            "sandbox escalation to \"danger-full-access\" requires approval, but no approval \
             channel is available"
        );
        let narrower = EscalationAsk {
            requested: "workspace-write",
            strictly_wider: false,
            ..ASK
        };
        assert_eq!(
            approve_escalation(narrower, None, &run(true))
                .await
                .unwrap_err()
                .message(),
            "sandbox escalation to \"workspace-write\" is not strictly wider than this call's \
             current \"workspace-write\" mode"
        );
    }

    #[tokio::test]
    async fn the_request_names_the_tool_the_mode_and_the_justification() {
        let answer = Answer(ApprovalOutcome::AllowedOnce, std::sync::Mutex::new(None));
        approve_escalation(ASK, Some(&answer), &run(true))
            .await
            .unwrap();
        let request = answer.1.lock().unwrap().take().unwrap();
        assert_eq!(
            (request.tool_name.as_str(), request.reason.as_deref()),
            (
                "write",
                Some("escalate sandbox to danger-full-access: needs /etc")
            )
        );
    }

    #[test]
    fn the_pair_is_checked() {
        let check = |args| escalation_args(&args).map_err(|error| error.message().to_owned());
        assert_eq!(check(json!({})), Ok(None));
        assert_eq!(
            check(json!({"sandbox_permissions": "danger-full-access"})).unwrap_err(),
            "invalid escalation: sandbox_permissions requires a justification"
        );
        assert_eq!(
            check(json!({"justification": "x"})).unwrap_err(),
            "invalid escalation: justification is only valid together with sandbox_permissions"
        );
        assert_eq!(
            check(json!({"sandbox_permissions": "danger-full-access", "justification": " "}))
                .unwrap_err(),
            "invalid justification: expected a non-empty sentence"
        );
    }
}
