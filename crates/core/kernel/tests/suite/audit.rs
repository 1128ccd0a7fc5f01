//! The startup audit's message for failed and pending rows.

use dsh_kernel::AuditIssue;
use dsh_kernel::Kernel;
use dsh_kernel::ServiceKey;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::mount_row;
use super::support::probe;

const SESSIONS: ServiceKey<()> = ServiceKey::new("sessions");
const LLM: ServiceKey<()> = ServiceKey::new("llm");
const NOTHING: ServiceKey<()> = ServiceKey::new("nothing");

#[tokio::test]
async fn the_audit_lists_failed_rows_with_their_cause_and_pending_rows_with_their_services() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let ok = mount_row(
        &root,
        "fine",
        probe(&[], |_, _| async { Ok(()) }),
        json!(null),
    );
    let failed = mount_row(
        &root,
        "session",
        probe(&[], |_, _| async {
            Err("cannot open the session store".into())
        }),
        json!(null),
    );
    let pending = mount_row(
        &root,
        "agent-loop",
        probe(const { &[SESSIONS.name(), LLM.name()] }, |_, _| async {
            Ok(())
        }),
        json!(null),
    );
    kernel.settle().await;

    let error = kernel
        .audit(&[ok.id(), failed.id(), pending.id()])
        .unwrap_err();
    assert_eq!(error.problems.len(), 2);
    assert_eq!(
        error.problems[1].issue,
        AuditIssue::Pending {
            waiting_for: vec!["sessions".to_owned(), "llm".to_owned()]
        }
    );
    assert_eq!(
        error.to_string(),
        "2 entries did not activate:\n  \
         row \"session\" (test-session): failed: cannot open the session store\n  \
         row \"agent-loop\" (test-agent-loop): pending (waiting for service(s): sessions, llm)"
    );
}

#[tokio::test]
async fn the_audit_passes_when_every_row_is_active_and_names_one_entry_in_the_singular() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let ok = mount_row(
        &root,
        "fine",
        probe(&[], |_, _| async { Ok(()) }),
        json!(null),
    );
    let waiting = mount_row(
        &root,
        "waiting",
        probe(const { &[NOTHING.name()] }, |_, _| async { Ok(()) }),
        json!(null),
    );
    kernel.settle().await;
    kernel.audit(&[ok.id()]).unwrap();
    assert_eq!(
        kernel
            .audit(&[ok.id(), waiting.id()])
            .unwrap_err()
            .to_string(),
        "1 entry did not activate:\n  row \"waiting\" (test-waiting): pending (waiting for service(s): nothing)"
    );
}
