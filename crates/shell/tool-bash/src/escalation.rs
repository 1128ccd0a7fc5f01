//! Sandbox escalation: a denied command retried once in a wider mode, with the user's
//! approval (dsh's `approveEscalation`).

use dsh_shell::SandboxMode;
use dsh_tools::{ApprovalOutcome, ApprovalRequest, ApprovalService, ToolError, ToolRunContext};

/// Asks for `requested` over `effective`; returns the approved mode or dsh's refusal.
pub async fn approve_escalation(
    requested: SandboxMode,
    effective: SandboxMode,
    justification: &str,
    approver: Option<&dyn ApprovalService>,
    run: &ToolRunContext,
) -> Result<SandboxMode, ToolError> {
    let name = requested.as_str();
    if !requested.is_wider_than(effective) {
        return Err(ToolError::new(format!(
            "sandbox escalation to \"{name}\" is not strictly wider than this call's current \
             \"{}\" mode",
            effective.as_str()
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
            tool_name: "bash".to_owned(),
            call_id: run.call_id.clone(),
            reason: Some(format!("escalate sandbox to {name}: {justification}")),
            signal: run.signal.clone(),
        })
        .await?;
    match outcome {
        ApprovalOutcome::AllowedOnce => Ok(requested),
        ApprovalOutcome::Rejected => Err(ToolError::new(format!(
            "the user rejected escalating this command to \"{name}\""
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
    use dsh_tools::{CancellationToken, ToolCaller};

    use super::*;

    struct Answer(ApprovalOutcome, std::sync::Mutex<Option<ApprovalRequest>>);

    #[dsh_tools::async_trait]
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
            name: "bash".into(),
            caller: caller.then(ToolCaller::default),
            signal: CancellationToken::new(),
        }
    }

    async fn ask(outcome: Option<ApprovalOutcome>, caller: bool) -> Result<SandboxMode, String> {
        let approver = outcome.map(|outcome| Answer(outcome, std::sync::Mutex::new(None)));
        approve_escalation(
            SandboxMode::DangerFullAccess,
            SandboxMode::WorkspaceWrite,
            "needs /etc",
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
        assert_eq!(
            ask(Some(ApprovalOutcome::AllowedOnce), true).await,
            Ok(SandboxMode::DangerFullAccess)
        );
        assert_eq!(
            ask(Some(ApprovalOutcome::Rejected), true)
                .await
                .unwrap_err(),
            "the user rejected escalating this command to \"danger-full-access\""
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
        let narrower = approve_escalation(
            SandboxMode::WorkspaceWrite,
            SandboxMode::WorkspaceWrite,
            "x",
            None,
            &run(true),
        )
        .await
        .unwrap_err();
        assert_eq!(
            narrower.message(),
            "sandbox escalation to \"workspace-write\" is not strictly wider than this call's \
             current \"workspace-write\" mode"
        );
    }

    #[tokio::test]
    async fn the_request_names_the_mode_and_the_justification() {
        let answer = Answer(ApprovalOutcome::AllowedOnce, std::sync::Mutex::new(None));
        approve_escalation(
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            "write the report",
            Some(&answer),
            &run(true),
        )
        .await
        .unwrap();
        let request = answer.1.lock().unwrap().take().unwrap();
        assert_eq!(
            (request.tool_name.as_str(), request.reason.as_deref()),
            (
                "bash",
                Some("escalate sandbox to workspace-write: write the report")
            )
        );
    }
}
