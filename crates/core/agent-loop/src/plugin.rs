//! The `dsh-agent-loop` plugin (row `agent-loop`): provides the [`AgentRegistry`] as
//! `agents` (and as `agentLoop`, dsh's name for the driver), registers the prompt variables
//! `provider`, `model` and `cwd`, and offers the tool registry's schemas to the system prompt.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_llm::LLM;
use dsh_session::SESSIONS;
use dsh_system_prompt::{SYSTEM_PROMPT, ToolProviderResult};
use dsh_tools::TOOLS;
use serde::Deserialize;

use crate::options::AgentOptions;
use crate::registry::{AGENT_LOOP, AGENTS, AgentRegistry, CreateAgentOptions, ResumeAgentOptions};
use crate::runtime::{LoopRuntime, LoopSettings};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-agent-loop";

/// Row config of `dsh-agent-loop` (dsh's keys, plus `maxSteps`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentLoopConfig {
    /// Parallel-safe tool calls in flight per step (default 10; a positive integer).
    pub max_parallel_tool_calls: Option<u64>,
    /// Steps per turn before the turn ends with `STEP_LIMIT` (a positive integer). Absent,
    /// as in dsh, turns have no step limit.
    pub max_steps: Option<u64>,
    /// Agents created (or resumed) when the loop starts.
    #[serde(default)]
    pub agents: Vec<ConfiguredAgent>,
}

/// One declarative agent of [`AgentLoopConfig::agents`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfiguredAgent {
    /// A label for logs; also the prefix of a minted session id.
    pub id: String,
    /// The exact session id of a new session.
    pub session_id: Option<String>,
    /// Resume this stored session instead of creating one.
    pub resume_session_id: Option<String>,
    /// The workspace of a new session.
    pub cwd: Option<String>,
    /// Provider route.
    pub provider: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Output cap.
    pub max_tokens: Option<u64>,
}

impl AgentLoopConfig {
    /// Checks the values as dsh does and resolves the settings.
    pub fn settings(&self) -> Result<LoopSettings, String> {
        let max_parallel_tool_calls = match self.max_parallel_tool_calls {
            None => dsh_tools::DEFAULT_MAX_PARALLEL_TOOL_CALLS,
            Some(0) => return Err("maxParallelToolCalls must be a positive integer".to_owned()),
            Some(count) => usize::try_from(count)
                .map_err(|_| "maxParallelToolCalls is too large".to_owned())?,
        };
        if self.max_steps == Some(0) {
            return Err("maxSteps must be a positive integer".to_owned());
        }
        let mut seen = std::collections::HashMap::new();
        for agent in &self.agents {
            if agent.session_id.is_some() && agent.resume_session_id.is_some() {
                return Err(format!(
                    "agent \"{}\": sessionId and resumeSessionId are mutually exclusive",
                    agent.id
                ));
            }
            if let Some(exact) = agent
                .session_id
                .as_ref()
                .or(agent.resume_session_id.as_ref())
                && let Some(first) = seen.insert(exact.clone(), agent.id.clone())
            {
                return Err(format!(
                    "agents \"{first}\" and \"{}\" use duplicate exact session identity \"{exact}\"",
                    agent.id
                ));
            }
        }
        Ok(LoopSettings {
            max_parallel_tool_calls,
            max_steps: self.max_steps,
        })
    }
}

/// The `dsh-agent-loop` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentLoopPlugin;

impl Plugin for AgentLoopPlugin {
    type Config = AgentLoopConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const {
            &[
                SESSIONS.name(),
                LLM.name(),
                TOOLS.name(),
                SYSTEM_PROMPT.name(),
            ]
        }
    }

    async fn apply(&self, ctx: Context, config: AgentLoopConfig) -> Result<(), BoxError> {
        let settings = config.settings()?;
        let tools = ctx.require(&TOOLS)?;
        let prompt = ctx.require(&SYSTEM_PROMPT)?;
        let runtime = Arc::new(LoopRuntime {
            ctx: ctx.clone(),
            llm: ctx.require(&LLM)?,
            tools: Arc::clone(&tools),
            prompt: Arc::clone(&prompt),
            sessions: ctx.require(&SESSIONS)?,
            settings,
        });
        prompt.variable(&ctx, "provider", |context| context.provider.clone())?;
        prompt.variable(&ctx, "model", |context| context.model.clone())?;
        prompt.variable(&ctx, "cwd", |context| context.cwd.clone())?;
        prompt.tools(&ctx, move |_| ToolProviderResult {
            schemas: tools.schemas(),
            known_names: None,
        })?;
        let registry = Arc::new(AgentRegistry::new(runtime));
        ctx.provide(&AGENTS, Arc::clone(&registry))?;
        ctx.provide(&AGENT_LOOP, Arc::clone(&registry))?;
        let closing = Arc::clone(&registry);
        ctx.effect_async(move || async move { closing.dispose_all().await })?;
        for agent in config.agents {
            let registry = Arc::clone(&registry);
            ctx.spawn(async move { start_configured(&registry, agent).await })?;
        }
        Ok(())
    }
}

async fn start_configured(registry: &AgentRegistry, agent: ConfiguredAgent) {
    let options = AgentOptions {
        provider: agent.provider,
        model: agent.model,
        max_tokens: agent.max_tokens,
    };
    let started = match agent.resume_session_id {
        Some(session_id) => {
            registry
                .resume(ResumeAgentOptions {
                    session_id,
                    agent_options: options,
                    setup: None,
                })
                .await
        }
        None => {
            registry
                .create(CreateAgentOptions {
                    session_id: Some(agent.session_id.unwrap_or_else(|| {
                        format!("{}-session-{}", agent.id, dsh_protocol::ids::random_uuid())
                    })),
                    cwd: agent.cwd,
                    agent_options: options,
                    setup: None,
                })
                .await
        }
    };
    if let Err(error) = started {
        tracing::warn!(
            "agent \"{}\": config-driven start failed: {error}",
            agent.id
        );
    }
}
