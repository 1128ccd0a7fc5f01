//! The `dsh-user-approval` plugin (row `approval`): dsh's approval service. It applies the
//! session's policy before anyone is asked, puts the question to the composed answerer (a
//! UI registers one with [`UserApproval::answer_with`]), and logs every question and its
//! outcome on the asking session as `approval/asked` / `approval/decided`.
//!
//! - Policy `never` (the deployment default under `DSH_PERMISSION_MODE=danger-full-access`,
//!   or a session's last `approval/policy` event) rejects without asking.
//! - Policy `ask` asks the most recently registered answerer; with none it fails closed
//!   (`unavailable`), as headless runs do.
//! - Cancelling the call withdraws the question (`cancelled`); a late answer is dropped.
//! - A question needs an open turn: the audit pair must sit inside the turn that the log
//!   commits and replays as a whole.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_kernel::sync::lock;
use dsh_kernel::{BoxError, Context, Disposer, Plugin, ServiceKey, ServiceName};
use dsh_protocol::kinds::{
    APPROVAL_ASKED, APPROVAL_DECIDED, APPROVAL_POLICY, TURN_END, TURN_START,
};
use dsh_session::{LiveSession, SESSIONS, SessionStore, SurfaceIntent};
use futures_util::future::{BoxFuture, Either, select};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::approval::{APPROVAL, ApprovalOutcome, ApprovalRequest, ApprovalService};
use crate::error::ToolError;

/// The plugin's name in rows.
pub const USER_APPROVAL_PLUGIN_NAME: &str = "dsh-user-approval";

/// The service with its answerer registry, `userApproval`; the same object is `approval`.
pub const USER_APPROVAL: ServiceKey<UserApproval> = ServiceKey::new("userApproval");

/// What happens to a question before any answerer sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    /// Ask the composed answerer (fail closed without one).
    #[default]
    Ask,
    /// Reject every question without asking.
    Never,
}

/// Row config of `dsh-user-approval`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserApprovalConfig {
    /// The policy of sessions that never switched (default `ask`).
    #[serde(default)]
    pub policy: ApprovalPolicy,
}

/// One question as an answerer sees it.
#[derive(Debug, Clone)]
pub struct ApprovalQuestion {
    /// Pairs the `approval/asked` and `approval/decided` events; the answer names it.
    pub id: String,
    /// The asking session.
    pub session_id: String,
    /// The tool the question is about.
    pub tool_name: String,
    /// The tool call being decided.
    pub call_id: String,
    /// Why the asker asks.
    pub reason: Option<String>,
}

/// Answers questions: a UI that shows them to the user.
pub trait ApprovalAnswerer: Send + Sync + 'static {
    /// Takes `question` and returns the user's answer to come. The question must be
    /// answerable as soon as this returns: the service logs `approval/asked`, which a page
    /// may act on at once, only afterwards. The service withdraws the question when the call
    /// is cancelled (dropping the future), so an answerer need not watch for that itself.
    fn ask(&self, question: ApprovalQuestion) -> BoxFuture<'static, ApprovalOutcome>;
}

/// Registered answerers with their registration ids; the last one is asked.
type Answerers = Arc<Mutex<Vec<(u64, Arc<dyn ApprovalAnswerer>)>>>;

/// The approval service.
pub struct UserApproval {
    policy: ApprovalPolicy,
    sessions: Arc<SessionStore>,
    answerers: Answerers,
    next_answerer: AtomicU64,
}

impl std::fmt::Debug for UserApproval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserApproval")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl UserApproval {
    /// A service over `sessions` with the deployment's default `policy`.
    pub fn new(sessions: Arc<SessionStore>, policy: ApprovalPolicy) -> Self {
        Self {
            policy,
            sessions,
            answerers: Arc::default(),
            next_answerer: AtomicU64::new(1),
        }
    }

    /// Makes `answerer` the one asked, for as long as `owner`'s fiber is loaded; the
    /// previous answerer is asked again once it goes.
    pub fn answer_with(
        &self,
        owner: &Context,
        answerer: Arc<dyn ApprovalAnswerer>,
    ) -> Result<Disposer, BoxError> {
        let id = self.next_answerer.fetch_add(1, Ordering::Relaxed);
        lock(&self.answerers).push((id, answerer));
        let answerers = Arc::downgrade(&self.answerers);
        Ok(owner.effect(move || {
            if let Some(answerers) = answerers.upgrade() {
                lock(&answerers).retain(|(entry, _)| *entry != id);
            }
        })?)
    }

    /// The policy in force for `session`: its last `approval/policy` event, else the
    /// deployment's.
    pub fn policy_of(&self, session: &LiveSession) -> ApprovalPolicy {
        session.with(|log| {
            log.events()
                .iter()
                .rev()
                .find(|event| event.kind == APPROVAL_POLICY)
                .and_then(|event| event.data.get("policy"))
                .and_then(|policy| ApprovalPolicy::deserialize(policy).ok())
                .unwrap_or(self.policy)
        })
    }

    fn answerer(&self) -> Option<Arc<dyn ApprovalAnswerer>> {
        lock(&self.answerers)
            .last()
            .map(|(_, answerer)| Arc::clone(answerer))
    }
}

/// Whether the log's last turn is still open.
fn has_open_turn(session: &LiveSession) -> bool {
    session.with(|log| {
        log.events()
            .iter()
            .rev()
            .find_map(|event| match &*event.kind {
                TURN_START => Some(true),
                TURN_END => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    })
}

fn audit(session: &Arc<LiveSession>, kind: &str, data: Value) -> Result<(), ToolError> {
    session
        .append(kind, data, SurfaceIntent::default())
        .map(drop)
        .map_err(|error| {
            ToolError::new(format!(
                "approval: cannot log {kind} on session \"{}\": {error}",
                session.id()
            ))
        })
}

#[async_trait]
impl ApprovalService for UserApproval {
    async fn request(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError> {
        let Some(session_id) = request.caller.session_id.clone() else {
            return Ok(ApprovalOutcome::Unavailable);
        };
        let Some(session) = self.sessions.get(&session_id) else {
            return Err(ToolError::new(format!(
                "approval: session \"{session_id}\" is not live"
            )));
        };
        if !has_open_turn(&session) {
            return Err(ToolError::new(format!(
                "approval: session \"{session_id}\" has no open turn to ask in"
            )));
        }
        let question = ApprovalQuestion {
            id: dsh_protocol::ids::random_uuid(),
            session_id,
            tool_name: request.tool_name,
            call_id: request.call_id,
            reason: request.reason,
        };
        let asked = asked_event(&question);
        let id = question.id.clone();
        // Decide who answers before the question shows: a page may answer the moment it
        // sees `approval/asked`.
        let pending = match self.policy_of(&session) {
            ApprovalPolicy::Never => Err(ApprovalOutcome::Rejected),
            ApprovalPolicy::Ask if request.signal.is_cancelled() => Err(ApprovalOutcome::Cancelled),
            ApprovalPolicy::Ask => self
                .answerer()
                .map(|answerer| answerer.ask(question))
                .ok_or(ApprovalOutcome::Unavailable),
        };
        audit(&session, APPROVAL_ASKED, asked)?;
        let outcome = match pending {
            Err(outcome) => outcome,
            Ok(answer) => match select(answer, Box::pin(request.signal.cancelled())).await {
                Either::Left((outcome, _)) => outcome,
                Either::Right(((), _)) => ApprovalOutcome::Cancelled,
            },
        };
        audit(
            &session,
            APPROVAL_DECIDED,
            json!({"id": id, "outcome": outcome.as_str()}),
        )?;
        Ok(outcome)
    }
}

/// The `approval/asked` payload: `{id, toolName, callId?, reason?}`.
fn asked_event(question: &ApprovalQuestion) -> Value {
    let mut asked = Map::new();
    asked.insert("id".into(), json!(question.id));
    asked.insert("toolName".into(), json!(question.tool_name));
    if !question.call_id.is_empty() {
        asked.insert("callId".into(), json!(question.call_id));
    }
    if let Some(reason) = &question.reason {
        asked.insert("reason".into(), json!(reason));
    }
    Value::Object(asked)
}

/// The `dsh-user-approval` plugin: provides `approval` and `userApproval`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserApprovalPlugin;

impl Plugin for UserApprovalPlugin {
    type Config = UserApprovalConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SESSIONS.name()] }
    }

    async fn apply(&self, ctx: Context, config: UserApprovalConfig) -> Result<(), BoxError> {
        let service = Arc::new(UserApproval::new(ctx.require(&SESSIONS)?, config.policy));
        ctx.provide(&USER_APPROVAL, Arc::clone(&service))?;
        ctx.provide(&APPROVAL, service as Arc<dyn ApprovalService>)?;
        Ok(())
    }
}
