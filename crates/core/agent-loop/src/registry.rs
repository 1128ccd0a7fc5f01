//! The `agents` service: creating, resuming, finding and disposing agents.
//!
//! An agent and its session share one id and come to life as one transaction: the session
//! is staged (not yet visible, nothing persisted), the agent built over it, the caller's
//! setup run; then the session is published (`session/created`) and the agent after it
//! (`agent/created`, then `agent/session-start`). A failure anywhere, a refusing listener
//! included, rolls back what was published, so no orphan session or agent remains.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_kernel::sync::lock;
use dsh_kernel::{BoxError, ServiceKey};
use dsh_persistence::SESSION_PERSISTENCE;
use dsh_session::{CreateOptions, LiveSession};

use crate::agent::Agent;
use crate::error::AgentError;
use crate::events::{AgentCreated, AgentDisposed, AgentSessionStart, SessionStart};
use crate::options::{AgentOptions, SessionStartSource};
use crate::runtime::{LoopRuntime, LoopSettings};

/// The agents service (`ctx.agents` in dsh).
pub const AGENTS: ServiceKey<AgentRegistry> = ServiceKey::new("agents");

/// The same registry under dsh's driver name (`ctx.agentLoop`, the factory that creates and
/// resumes agents), so rows written for dsh that inject `agentLoop` find it.
pub const AGENT_LOOP: ServiceKey<AgentRegistry> = ServiceKey::new("agentLoop");

/// Runs on the new agent before it is published (register per-agent state, seed context
/// with [`Agent::inject`]). A failure cancels the creation.
pub type AgentSetup = Box<dyn FnOnce(&Arc<Agent>) -> Result<(), BoxError> + Send>;

/// What [`AgentRegistry::create`] needs.
#[derive(Default)]
pub struct CreateAgentOptions {
    /// The session id (minted as `session-<uuid>` when absent).
    pub session_id: Option<String>,
    /// The workspace recorded in the session header.
    pub cwd: Option<String>,
    /// The model route.
    pub agent_options: AgentOptions,
    /// Runs before publication.
    pub setup: Option<AgentSetup>,
}

/// What [`AgentRegistry::resume`] needs.
pub struct ResumeAgentOptions {
    /// The stored session to bring back.
    pub session_id: String,
    /// The model route.
    pub agent_options: AgentOptions,
    /// Runs before publication.
    pub setup: Option<AgentSetup>,
}

/// Live agents, by id.
pub struct AgentRegistry {
    runtime: Arc<LoopRuntime>,
    live: Mutex<HashMap<String, Arc<Agent>>>,
}

impl std::fmt::Debug for AgentRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRegistry")
            .field("agents", &self.ids())
            .finish_non_exhaustive()
    }
}

impl AgentRegistry {
    pub(crate) fn new(runtime: Arc<LoopRuntime>) -> Self {
        Self {
            runtime,
            live: Mutex::new(HashMap::new()),
        }
    }

    fn live(&self) -> MutexGuard<'_, HashMap<String, Arc<Agent>>> {
        lock(&self.live)
    }

    /// Creates an agent on a new session.
    pub async fn create(&self, options: CreateAgentOptions) -> Result<Arc<Agent>, AgentError> {
        if let Some(id) = &options.session_id
            && (self.get(id).is_some() || self.runtime.sessions.get(id).is_some())
        {
            return Err(AgentError::Invalid(format!(
                "session \"{id}\" is already live"
            )));
        }
        let session = self.runtime.sessions.new_session(CreateOptions {
            id: options.session_id,
            cwd: options.cwd,
            ..CreateOptions::default()
        })?;
        let live = self.runtime.sessions.stage(session)?;
        self.publish(
            live,
            options.agent_options,
            options.setup,
            SessionStartSource::Startup,
        )
    }

    /// Brings a stored session back with an agent over it (the session persistence
    /// service loads, validates and repairs it: an interrupted turn gets its closers).
    pub async fn resume(&self, options: ResumeAgentOptions) -> Result<Arc<Agent>, AgentError> {
        let id = options.session_id;
        if self.get(&id).is_some() || self.runtime.sessions.get(&id).is_some() {
            return Err(AgentError::Invalid(format!(
                "session \"{id}\" is already live"
            )));
        }
        let persistence = self.runtime.ctx.get(&SESSION_PERSISTENCE).ok_or_else(|| {
            AgentError::Invalid(
                "cannot resume: session persistence is not configured (load a \
                 dsh-persistence-jsonl or dsh-persistence-sqlite row)"
                    .to_owned(),
            )
        })?;
        let prepared = persistence
            .prepare(&id)
            .await
            .map_err(|source| AgentError::Resume {
                id: id.clone(),
                source,
            })?;
        let live = self.runtime.sessions.stage(prepared.session)?;
        self.publish(
            live,
            options.agent_options,
            options.setup,
            SessionStartSource::Resume,
        )
    }

    fn publish(
        &self,
        live: Arc<LiveSession>,
        options: AgentOptions,
        setup: Option<AgentSetup>,
        source: SessionStartSource,
    ) -> Result<Arc<Agent>, AgentError> {
        let agent = Agent::new(Arc::clone(&self.runtime), Arc::clone(&live), options)?;
        if let Some(setup) = setup {
            setup(&agent).map_err(|error| {
                AgentError::Plugin(format!(
                    "agent \"{}\" setup failed: {}",
                    agent.id(),
                    dsh_kernel::error_chain(error.as_ref())
                ))
            })?;
        }
        self.runtime.sessions.commit(&live)?;
        {
            let mut map = self.live();
            if map.contains_key(agent.id()) {
                drop(map);
                self.runtime.sessions.withdraw(&live);
                return Err(AgentError::Invalid(format!(
                    "agent \"{}\" already exists",
                    agent.id()
                )));
            }
            map.insert(agent.id().to_owned(), Arc::clone(&agent));
        }
        if let Err(error) = self.runtime.ctx.emit::<AgentCreated>(&agent) {
            self.live().remove(agent.id());
            self.runtime.sessions.withdraw(&live);
            return Err(AgentError::Plugin(format!(
                "agent \"{}\" was refused by an agent/created listener: {error}",
                agent.id()
            )));
        }
        let start = SessionStart {
            agent: Arc::clone(&agent),
            source,
        };
        if let Err(error) = self.runtime.ctx.emit::<AgentSessionStart>(&start) {
            tracing::warn!(agent = %agent.id(), "agent/session-start listener failed: {error}");
        }
        Ok(agent)
    }

    /// The loop's settings (`maxParallelToolCalls`, `maxSteps`).
    pub fn settings(&self) -> LoopSettings {
        self.runtime.settings
    }

    /// The live agent with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Agent>> {
        self.live().get(id).cloned()
    }

    /// Ids of every live agent.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.live().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Stops an agent (its running turn is cancelled with `disposed` and awaited), flushes
    /// and retires its session, and announces `agent/disposed`.
    pub async fn dispose(&self, id: &str) -> Result<(), AgentError> {
        let agent = self
            .get(id)
            .ok_or_else(|| AgentError::Invalid(format!("agent \"{id}\" not found")))?;
        agent.shut_down().await;
        self.live().remove(id);
        let retired = self.runtime.sessions.dispose(id).await;
        if let Err(error) = self.runtime.ctx.emit::<AgentDisposed>(&agent) {
            tracing::warn!(agent = %id, "agent/disposed listener failed: {error}");
        }
        retired.map_err(AgentError::from)
    }

    /// Disposes every agent (the loop is unloading).
    pub(crate) async fn dispose_all(&self) {
        for id in self.ids() {
            if let Err(error) = self.dispose(&id).await {
                tracing::error!(agent = %id, "disposing the agent failed: {error}");
            }
        }
    }
}
