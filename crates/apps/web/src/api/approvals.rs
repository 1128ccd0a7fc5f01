//! Approval questions answered from the page. The API registers [`PageAnswerer`] with the
//! approval service; a question waits here until `POST /api/agents/{id}/approvals/{qid}`
//! answers it or the call is cancelled. The page learns of questions from the session's
//! own `approval/asked` / `approval/decided` events, so a reloaded page still sees them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use dsh_kernel::sync::lock;
use dsh_tools::{ApprovalAnswerer, ApprovalOutcome, ApprovalQuestion};
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::Api;
use super::error::{ApiError, rejection};

/// Open questions: id → (asking session, where the answer goes).
type Pending = HashMap<String, (String, oneshot::Sender<ApprovalOutcome>)>;

/// The page's side of the approval service: the questions that wait for an answer.
#[derive(Default)]
pub(crate) struct PageAnswerer {
    pending: Arc<Mutex<Pending>>,
}

impl PageAnswerer {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    /// Delivers the page's answer; `false` when no such question of `session_id` waits.
    fn settle(&self, session_id: &str, id: &str, outcome: ApprovalOutcome) -> bool {
        let mut pending = self.pending();
        if pending.get(id).is_none_or(|(owner, _)| owner != session_id) {
            return false;
        }
        pending
            .remove(id)
            .is_some_and(|(_, answer)| answer.send(outcome).is_ok())
    }
}

/// Forgets a question whose wait ended (answered or withdrawn).
struct Forget(Arc<Mutex<Pending>>, String);

impl Drop for Forget {
    fn drop(&mut self) {
        lock(&self.0).remove(&self.1);
    }
}

impl ApprovalAnswerer for PageAnswerer {
    fn ask(&self, question: ApprovalQuestion) -> BoxFuture<'static, ApprovalOutcome> {
        let (answer, answered) = oneshot::channel();
        self.pending()
            .insert(question.id.clone(), (question.session_id, answer));
        let forget = Forget(Arc::clone(&self.pending), question.id);
        Box::pin(async move {
            let _forget = forget;
            // The server going away drops the sender: nobody is left to answer.
            answered.await.unwrap_or(ApprovalOutcome::Unavailable)
        })
    }
}

/// `POST /api/agents/{id}/approvals/{qid}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerBody {
    /// `allowed-once` or `rejected`.
    outcome: String,
}

pub(crate) async fn answer(
    State(api): State<Api>,
    Path((session_id, id)): Path<(String, String)>,
    body: Result<Json<AnswerBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|error| rejection(&error))?;
    let Some(outcome @ (ApprovalOutcome::AllowedOnce | ApprovalOutcome::Rejected)) =
        ApprovalOutcome::parse(&body.outcome)
    else {
        return Err(ApiError::bad_request(format!(
            "outcome must be \"allowed-once\" or \"rejected\" (got {:?})",
            body.outcome
        )));
    };
    if !api.answerer.settle(&session_id, &id, outcome) {
        return Err(ApiError::not_found(format!(
            "no pending approval question \"{id}\" in session \"{session_id}\" (already \
             answered, withdrawn, or asked before this server started)"
        )));
    }
    Ok(Json(json!({"outcome": outcome.as_str()})))
}
