//! `write` and `edit` over the sandboxed disk: the fence, the markers, escalation.

use dsh_shell::SandboxMode;
use dsh_tool_fs::FS_ESCALATION_HINT;
use dsh_tools::ApprovalOutcome;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Disk, code, harness, s, text};

#[tokio::test]
async fn workspace_write_denies_writes_outside_the_workspace() {
    let h = harness(Disk::Sandboxed(SandboxMode::WorkspaceWrite, None)).await;
    let target = h.outside.join("escape.txt");
    let denied = h
        .session_call("write", json!({"file_path": s(&target), "content": "x"}))
        .await;
    assert_eq!(
        text(&denied),
        format!(
            "Error: [sandbox: file access denied under workspace-write mode]\n{FS_ESCALATION_HINT}"
        )
    );
    assert_eq!(code(&denied).as_deref(), Some("FS_SANDBOX_DENIED"));
    assert!(!target.exists());
    std::os::unix::fs::symlink(&h.outside, h.path("out")).unwrap();
    let through_link = h
        .session_call(
            "write",
            json!({"file_path": "out/via-link.txt", "content": "x"}),
        )
        .await;
    assert_eq!(code(&through_link).as_deref(), Some("FS_SANDBOX_DENIED"));
    assert!(!h.outside.join("via-link.txt").exists());
    let relative = h
        .session_call(
            "write",
            json!({"file_path": "../outside/up.txt", "content": "x"}),
        )
        .await;
    assert_eq!(code(&relative).as_deref(), Some("FS_SANDBOX_DENIED"));
    let inside = h
        .session_call("write", json!({"file_path": "in.txt", "content": "x"}))
        .await;
    assert!(!inside.is_error, "{}", text(&inside));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn read_only_denies_every_write_and_still_reads() {
    let h = harness(Disk::Sandboxed(SandboxMode::ReadOnly, None)).await;
    std::fs::write(h.path("a.txt"), "a\n").unwrap();
    let denied = h
        .session_call("write", json!({"file_path": "b.txt", "content": "x"}))
        .await;
    assert!(text(&denied).starts_with("Error: [sandbox: file access denied under read-only mode]"));
    assert!(!h.path("b.txt").exists());
    assert!(
        !h.session_call("read", json!({"file_path": "a.txt"}))
            .await
            .is_error
    );
    let edit = h
        .session_call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert_eq!(code(&edit).as_deref(), Some("FS_SANDBOX_DENIED"));
    assert_eq!(std::fs::read_to_string(h.path("a.txt")).unwrap(), "a\n");
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn an_approved_escalation_writes_once() {
    let h = harness(Disk::Sandboxed(
        SandboxMode::WorkspaceWrite,
        Some(ApprovalOutcome::AllowedOnce),
    ))
    .await;
    let target = h.outside.join("granted.txt");
    let args = json!({"file_path": s(&target), "content": "ok",
        "sandbox_permissions": "danger-full-access", "justification": "The user asked for it there."});
    let granted = h.session_call("write", args).await;
    assert!(!granted.is_error, "{}", text(&granted));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "ok");
    let asked = h.approver.as_ref().unwrap().1.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_name, "write");
    assert_eq!(
        asked[0].reason.as_deref(),
        Some("escalate sandbox to danger-full-access: The user asked for it there.")
    );
    let again = h
        .session_call(
            "write",
            json!({"file_path": s(&h.outside.join("second.txt")), "content": "x"}),
        )
        .await;
    assert_eq!(
        code(&again).as_deref(),
        Some("FS_SANDBOX_DENIED"),
        "the grant was for one call"
    );
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn a_rejected_escalation_and_bad_pairs_fail_clearly() {
    let h = harness(Disk::Sandboxed(
        SandboxMode::WorkspaceWrite,
        Some(ApprovalOutcome::Rejected),
    ))
    .await;
    let target = h.outside.join("no.txt");
    let rejected = h
        .session_call(
            "write",
            json!({"file_path": s(&target), "content": "x",
            "sandbox_permissions": "danger-full-access", "justification": "Please."}),
        )
        .await;
    assert_eq!(
        text(&rejected),
        "Error: the user rejected escalating this operation to \"danger-full-access\""
    );
    assert!(!target.exists());
    let unpaired = h
        .session_call(
            "edit",
            json!({"file_path": "x", "old_string": "a", "new_string": "b",
            "sandbox_permissions": "danger-full-access"}),
        )
        .await;
    assert_eq!(
        text(&unpaired),
        "Error: invalid escalation: sandbox_permissions requires a justification"
    );
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn escalation_is_offered_only_over_a_confining_disk() {
    let confined = harness(Disk::Sandboxed(SandboxMode::WorkspaceWrite, None)).await;
    let local = harness(Disk::Local).await;
    let properties = |h: &super::support::Harness, name: &str| {
        h.tools
            .schemas()
            .into_iter()
            .find(|schema| schema.name == name)
            .map(|schema| {
                schema.parameters["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .unwrap()
    };
    assert_eq!(
        properties(&confined, "write"),
        [
            "file_path",
            "content",
            "sandbox_permissions",
            "justification"
        ]
    );
    assert_eq!(properties(&local, "write"), ["file_path", "content"]);
    let unavailable = local
        .session_call(
            "write",
            json!({"file_path": "a", "content": "x",
            "sandbox_permissions": "danger-full-access", "justification": "x"}),
        )
        .await;
    assert_eq!(
        text(&unavailable),
        "Error: sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)"
    );
    confined.kernel.shutdown().await;
    local.kernel.shutdown().await;
}
