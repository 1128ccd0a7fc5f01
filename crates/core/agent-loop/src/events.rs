//! The agent loop's events. Each payload names its agent; listeners interested in one agent
//! compare [`crate::Agent::id`].
//!
//! | event | mode | payload | default at the end of the chain |
//! |---|---|---|---|
//! | [`AgentCreated`] `agent/created` | emit | the agent | – (a failing listener vetoes the creation) |
//! | [`AgentDisposed`] `agent/disposed` | emit | the agent | – |
//! | [`AgentSessionStart`] `agent/session-start` | emit | [`SessionStart`] | – |
//! | [`AgentStatusChanged`] `agent/status` | emit | [`StatusChange`] | – |
//! | [`AgentInboxInserted`] / [`AgentInboxDiscarded`] | emit | [`InboxNotice`] | – |
//! | [`AgentInboxClaimed`] `agent/inbox/claimed` | emit | [`InboxClaim`] | – |
//! | [`AgentPreStep`] `agent/pre-step` | waterfall | [`PreStep`] | enter with the claimed messages (and a runtime-context snapshot) |
//! | [`AgentRequest`] `agent/request` | waterfall | [`RequestProposal`] | the proposal's seed config |
//! | [`AgentRequestError`] `agent/request-error` | waterfall | [`RequestErrorArgs`] | no retry |
//! | [`AgentTurnStopping`] `agent/turn-stopping` | serial | [`TurnStopping`] | – |
//! | [`AgentErrorEvent`] `agent/error` | emit | [`AgentErrorNotice`] | – |

use std::sync::Arc;

use dsh_kernel::{BoxError, Emit, Event, Serial, Waterfall};
use dsh_llm::{CancellationToken, LlmCallConfig, LlmFailure, Message, RetryPolicy};

use crate::agent::Agent;
use crate::options::{AgentStatus, SessionStartSource};

/// `agent/created`: an agent is about to be published. A failing listener refuses it: the
/// creation is rolled back and returns the failure.
#[derive(Debug)]
pub struct AgentCreated;
impl Event for AgentCreated {
    const NAME: &'static str = "agent/created";
    type Mode = Emit<Arc<Agent>>;
}

/// `agent/disposed`: an agent left the registry (its session was flushed and retired).
#[derive(Debug)]
pub struct AgentDisposed;
impl Event for AgentDisposed {
    const NAME: &'static str = "agent/disposed";
    type Mode = Emit<Arc<Agent>>;
}

/// The payload of `agent/session-start`.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Whether the session is new or resumed.
    pub source: SessionStartSource,
}

/// `agent/session-start`: once per agent, after publication and before its first turn;
/// listeners may [`Agent::inject`] context here.
#[derive(Debug)]
pub struct AgentSessionStart;
impl Event for AgentSessionStart {
    const NAME: &'static str = "agent/session-start";
    type Mode = Emit<SessionStart>;
}

/// The payload of `agent/status`.
#[derive(Debug, Clone)]
pub struct StatusChange {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Its new status.
    pub status: AgentStatus,
}

/// `agent/status`: an agent went idle or started running.
#[derive(Debug)]
pub struct AgentStatusChanged;
impl Event for AgentStatusChanged {
    const NAME: &'static str = "agent/status";
    type Mode = Emit<StatusChange>;
}

/// The payload of the inbox insert and discard notices.
#[derive(Debug, Clone)]
pub struct InboxNotice {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The message.
    pub message: Message,
}

/// `agent/inbox/inserted`: a message joined an inbox queue.
#[derive(Debug)]
pub struct AgentInboxInserted;
impl Event for AgentInboxInserted {
    const NAME: &'static str = "agent/inbox/inserted";
    type Mode = Emit<InboxNotice>;
}

/// `agent/inbox/discarded`: a pending message was cancelled (cleared or replaced).
#[derive(Debug)]
pub struct AgentInboxDiscarded;
impl Event for AgentInboxDiscarded {
    const NAME: &'static str = "agent/inbox/discarded";
    type Mode = Emit<InboxNotice>;
}

/// The payload of `agent/inbox/claimed`.
#[derive(Debug, Clone)]
pub struct InboxClaim {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The claimed message.
    pub message: Message,
    /// The turn that claimed it.
    pub turn: u64,
}

/// `agent/inbox/claimed`: a step took a message from the inbox.
#[derive(Debug)]
pub struct AgentInboxClaimed;
impl Event for AgentInboxClaimed {
    const NAME: &'static str = "agent/inbox/claimed";
    type Mode = Emit<InboxClaim>;
}

/// The payload of `agent/pre-step`.
#[derive(Debug, Clone)]
pub struct PreStep {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The messages the step would log as `user/message`s, claimed ones first, then the
    /// runtime-context snapshot when it changed.
    pub messages: Vec<Message>,
    /// Turn number.
    pub turn: u64,
    /// The step about to open.
    pub step: u64,
    /// The turn's cancellation.
    pub signal: CancellationToken,
}

/// What an `agent/pre-step` listener decides.
#[derive(Debug, Clone, PartialEq)]
pub enum PreStepDecision {
    /// Open the step with these messages (possibly rewritten; empty ends a turn that has
    /// already run a step).
    Enter(Vec<Message>),
    /// Do not open the step; the turn ends `blocked`.
    Reject,
}

/// `agent/pre-step`: rewrite or reject the next step before it opens.
#[derive(Debug)]
pub struct AgentPreStep;
impl Event for AgentPreStep {
    const NAME: &'static str = "agent/pre-step";
    type Mode = Waterfall<PreStep, Result<PreStepDecision, BoxError>>;
}

/// The payload of `agent/request`.
#[derive(Debug, Clone)]
pub struct RequestProposal {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
    /// The config the loop would use (its seed): the agent's route on its first request,
    /// afterwards the logged header's config without adapter-filled defaults.
    pub config: LlmCallConfig,
    /// The turn's cancellation.
    pub signal: CancellationToken,
}

/// `agent/request`: choose the call config of the next request (model switches, efforts).
/// It cannot change the messages.
#[derive(Debug)]
pub struct AgentRequest;
impl Event for AgentRequest {
    const NAME: &'static str = "agent/request";
    type Mode = Waterfall<RequestProposal, Result<LlmCallConfig, BoxError>>;
}

/// The payload of `agent/request-error`.
#[derive(Debug, Clone)]
pub struct RequestErrorArgs {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Turn number.
    pub turn: u64,
    /// Step number.
    pub step: u64,
    /// The provider route of the failed request.
    pub provider: String,
    /// Why it failed.
    pub failure: LlmFailure,
    /// The route's retry policy, when the request went through a registered adapter.
    pub retry_policy: Option<RetryPolicy>,
    /// How many retries this step already made.
    pub retries: u64,
    /// The turn's cancellation.
    pub signal: CancellationToken,
}

/// What an `agent/request-error` listener decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestErrorAction {
    /// Send the request again, in the same turn and step.
    Retry,
}

/// `agent/request-error`: a request's stream ended in `error` or `aborted` (not by the
/// agent's own cancellation). `Some(Retry)` sends it again; `None` ends the turn `error`.
#[derive(Debug)]
pub struct AgentRequestError;
impl Event for AgentRequestError {
    const NAME: &'static str = "agent/request-error";
    type Mode = Waterfall<RequestErrorArgs, Result<Option<RequestErrorAction>, BoxError>>;
}

/// The payload of `agent/turn-stopping`.
#[derive(Debug, Clone)]
pub struct TurnStopping {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Turn number.
    pub turn: u64,
    /// The turn's cancellation.
    pub signal: CancellationToken,
}

/// `agent/turn-stopping`: the turn is about to end. A listener may [`Agent::steer`] to keep
/// it going; a failing listener ends it `error`.
#[derive(Debug)]
pub struct AgentTurnStopping;
impl Event for AgentTurnStopping {
    const NAME: &'static str = "agent/turn-stopping";
    type Mode = Serial<TurnStopping, ()>;
}

/// The payload of `agent/error`.
#[derive(Debug, Clone)]
pub struct AgentErrorNotice {
    /// The agent.
    pub agent: Arc<Agent>,
    /// Turn number (the last one when no turn is open).
    pub turn: u64,
    /// Step number (0 outside a step).
    pub step: u64,
    /// What failed.
    pub error: LlmFailure,
}

/// `agent/error`: a turn failed (its `turn/end` says `error`).
#[derive(Debug)]
pub struct AgentErrorEvent;
impl Event for AgentErrorEvent {
    const NAME: &'static str = "agent/error";
    type Mode = Emit<AgentErrorNotice>;
}
