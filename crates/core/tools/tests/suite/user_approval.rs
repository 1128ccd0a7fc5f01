//! `dsh-user-approval`: policy, the registered answerer, cancellation and the audit pair.

use std::sync::Arc;
use std::time::Duration;

use dsh_kernel::{BoxError, Context, Disposer, Kernel};
use dsh_session::{
    CreateOptions, EventNotice, LiveSession, SESSIONS, SessionEventAppended, SessionPlugin,
    SurfaceIntent,
};
use dsh_tools::{
    APPROVAL, ApprovalAnswerer, ApprovalOutcome, ApprovalQuestion, ApprovalRequest, ToolCaller,
    USER_APPROVAL, UserApprovalPlugin,
};
use futures_util::future::BoxFuture;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

struct Fixed(ApprovalOutcome);

impl ApprovalAnswerer for Fixed {
    fn ask(&self, _question: ApprovalQuestion) -> BoxFuture<'static, ApprovalOutcome> {
        Box::pin(std::future::ready(self.0))
    }
}

struct Never;

impl ApprovalAnswerer for Never {
    fn ask(&self, _question: ApprovalQuestion) -> BoxFuture<'static, ApprovalOutcome> {
        Box::pin(std::future::pending())
    }
}

async fn boot(policy: &str) -> (Kernel, Arc<LiveSession>) {
    let kernel = Kernel::new().unwrap();
    kernel.root().plugin(SessionPlugin, Value::Null).unwrap();
    kernel
        .root()
        .plugin(UserApprovalPlugin, json!({"policy": policy}))
        .unwrap();
    kernel.settle().await;
    let session = kernel
        .root()
        .require(&SESSIONS)
        .unwrap()
        .create(CreateOptions::default())
        .unwrap();
    (kernel, session)
}

fn open_turn(session: &Arc<LiveSession>) {
    session
        .append("turn/start", json!({"turn": 1}), SurfaceIntent::default())
        .unwrap();
}

fn request(session: &LiveSession, signal: CancellationToken) -> ApprovalRequest {
    ApprovalRequest {
        caller: ToolCaller {
            session_id: Some(session.id().to_owned()),
            ..ToolCaller::default()
        },
        tool_name: "bash".into(),
        call_id: "call-1".into(),
        reason: Some("escalate".into()),
        signal,
    }
}

/// Registers `answerer` on the root for as long as the returned disposer lives.
fn answering(kernel: &Kernel, answerer: impl ApprovalAnswerer) -> Disposer {
    kernel
        .root()
        .require(&USER_APPROVAL)
        .unwrap()
        .answer_with(&kernel.root(), Arc::new(answerer))
        .unwrap()
}

async fn ask(root: &Context, session: &LiveSession) -> ApprovalOutcome {
    let approval = root.require(&APPROVAL).unwrap();
    approval
        .request(request(session, CancellationToken::new()))
        .await
        .unwrap()
}

/// The audit events after `turn/start`, as (type, data).
fn audit(session: &LiveSession) -> Vec<(String, Value)> {
    session
        .events()
        .iter()
        .filter(|event| event.kind.starts_with("approval/"))
        .map(|event| (event.kind.to_string(), (*event.data).clone()))
        .collect()
}

#[tokio::test]
async fn an_answer_is_logged_as_an_asked_decided_pair() {
    let (kernel, session) = boot("ask").await;
    open_turn(&session);
    let _answering = answering(&kernel, Fixed(ApprovalOutcome::AllowedOnce));
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::AllowedOnce
    );
    let events = audit(&session);
    let id = events[0].1["id"].clone();
    assert_eq!(
        events,
        vec![
            (
                "approval/asked".to_owned(),
                json!({"id": id, "toolName": "bash", "callId": "call-1", "reason": "escalate"})
            ),
            (
                "approval/decided".to_owned(),
                json!({"id": id, "outcome": "allowed-once"})
            ),
        ]
    );
}

#[tokio::test]
async fn without_an_answerer_the_question_fails_closed() {
    let (kernel, session) = boot("ask").await;
    open_turn(&session);
    let registration = answering(&kernel, Fixed(ApprovalOutcome::Rejected));
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::Rejected
    );
    registration.dispose().await;
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::Unavailable
    );
    assert_eq!(audit(&session)[3].1["outcome"], "unavailable");
}

#[tokio::test]
async fn policy_never_rejects_without_asking_and_a_session_switch_overrides_it() {
    let (kernel, session) = boot("never").await;
    open_turn(&session);
    let _answering = answering(&kernel, Fixed(ApprovalOutcome::AllowedOnce));
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::Rejected
    );
    session
        .append(
            "approval/policy",
            json!({"policy": "ask"}),
            SurfaceIntent::default(),
        )
        .unwrap();
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::AllowedOnce
    );
}

#[tokio::test]
async fn cancelling_the_call_withdraws_the_question() {
    let (kernel, session) = boot("ask").await;
    open_turn(&session);
    let _answering = answering(&kernel, Never);
    let approval = kernel.root().require(&APPROVAL).unwrap();
    let signal = CancellationToken::new();
    let cancel = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    });
    let outcome = approval.request(request(&session, signal)).await.unwrap();
    assert_eq!(outcome, ApprovalOutcome::Cancelled);
    assert_eq!(audit(&session)[1].1["outcome"], "cancelled");
}

#[tokio::test]
async fn a_question_outside_a_turn_is_refused_and_logs_nothing() {
    let (kernel, session) = boot("ask").await;
    let approval = kernel.root().require(&APPROVAL).unwrap();
    let refused = approval
        .request(request(&session, CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("has no open turn"),
        "{refused}"
    );
    assert!(audit(&session).is_empty());
}

#[test]
fn outcomes_have_dshs_names() {
    for outcome in [
        ApprovalOutcome::AllowedOnce,
        ApprovalOutcome::Rejected,
        ApprovalOutcome::Cancelled,
        ApprovalOutcome::Unavailable,
    ] {
        assert_eq!(ApprovalOutcome::parse(outcome.as_str()), Some(outcome));
    }
    assert_eq!(ApprovalOutcome::parse("allowed"), None);
}

/// Remembers each question it was asked; answers `rejected`.
#[derive(Default)]
struct Recorder(Arc<std::sync::Mutex<Vec<String>>>);

impl ApprovalAnswerer for Recorder {
    fn ask(&self, question: ApprovalQuestion) -> BoxFuture<'static, ApprovalOutcome> {
        self.0.lock().unwrap().push(question.id);
        Box::pin(std::future::ready(ApprovalOutcome::Rejected))
    }
}

#[tokio::test]
async fn the_answerer_holds_the_question_before_approval_asked_is_logged() {
    let (kernel, session) = boot("ask").await;
    open_turn(&session);
    let recorder = Recorder::default();
    let asked_of_answerer = Arc::clone(&recorder.0);
    let _answering = answering(&kernel, recorder);
    let held_when_shown = Arc::new(std::sync::Mutex::new(None));
    let seen = Arc::clone(&held_when_shown);
    kernel
        .root()
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            if notice.event.kind == "approval/asked" {
                let id = notice.event.data["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                *seen.lock().unwrap() = Some(asked_of_answerer.lock().unwrap().contains(&id));
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(
        ask(&kernel.root(), &session).await,
        ApprovalOutcome::Rejected
    );
    assert_eq!(*held_when_shown.lock().unwrap(), Some(true));
}
