//! Which step is running: the agent, its turn and step numbers, and the activity's
//! cancellation, handed to everything a step does (its prompt, request, reply and tool calls)
//! instead of threading them one by one.

use std::sync::Arc;

use dsh_llm::CancellationToken;
use dsh_session::LiveSession;

use crate::agent::Agent;
use crate::cause::Abort;
use crate::error::TurnError;
use crate::runtime::LoopRuntime;

/// One step of one turn of an agent.
#[derive(Debug, Clone)]
pub(crate) struct StepCtx {
    /// The agent (event payloads carry it).
    pub(crate) agent: Arc<Agent>,
    /// Turn number.
    pub(crate) turn: u64,
    /// Step number, from 1.
    pub(crate) step: u64,
    /// The running activity's cancellation.
    pub(crate) abort: Abort,
}

impl StepCtx {
    /// `Err(Aborted)` once the activity is cancelled.
    pub(crate) fn check(&self) -> Result<(), TurnError> {
        self.abort.check()
    }

    /// The activity's cancellation token (what events and requests carry as `signal`).
    pub(crate) fn signal(&self) -> &CancellationToken {
        self.abort.token()
    }

    /// The agent's session.
    pub(crate) fn session(&self) -> &Arc<LiveSession> {
        self.agent.session()
    }

    /// The loop's services and settings.
    pub(crate) fn runtime(&self) -> &LoopRuntime {
        self.agent.runtime()
    }
}
