//! The dsh agent loop (dsh's `dsh-agent` and `dsh-agent-loop`): agents bound to sessions and
//! the driver that runs their turns.
//!
//! - [`AgentRegistry`] (`agents`): [`AgentRegistry::create`] and [`AgentRegistry::resume`]
//!   bring an [`Agent`] and its session to life as one transaction; `dispose` retires them.
//! - [`Agent`]: [`Agent::followup`] starts a turn, [`Agent::steer`] joins the running one,
//!   [`Agent::inject`] adds context to the next step, [`Agent::cancel`] stops it with a
//!   [`CancelCause`], [`Agent::when_idle`] waits for it.
//! - A turn logs `turn/start`, then steps: each claims the inbox, assembles the system prompt
//!   (`dsh-system-prompt`), logs the step's `user/message`s (with a runtime-context snapshot
//!   when it changed), the `request/header` and `request/context` when they changed, every
//!   streamed `assistant/chunk`, the `assistant/message`, and each tool call's `tool/call` and
//!   `tool/result`; the turn ends with `turn/end` and its [`TurnEndReason`]. The model's messages
//!   are derived from the log at every step: what the model saw is what was logged.
//! - Events ([`events`]) let plugins rewrite or reject steps, choose the request config,
//!   retry failed requests ([`LlmRetryPlugin`], which records its waits through
//!   [`SessionRetryRecorder`]), and keep a turn going.
//! - Before each request and each tool call the loop flushes the session, so a crash loses
//!   no completed step.
//!
//! Differences from dsh: an optional step limit (`maxSteps`, off by default) ends a runaway
//! turn with the code [`STEP_LIMIT`]; there are no per-agent plugin scopes (event payloads
//! carry the agent instead); maintenance jobs, `concludesTurn` and tool-result
//! `additionalContexts` are not offered yet.

mod agent;
mod cause;
mod default_model;
mod driver_state;
mod error;
pub mod events;
mod inbox;
mod options;
mod outcome;
mod plugin;
mod pre_step;
mod registry;
mod reply;
mod request;
mod request_state;
mod retry;
mod retry_recorder;
mod runtime;
mod runtime_context;
mod splicing;
mod step;
mod step_ctx;
mod summary;
mod tool_calls;
mod turn;
mod turn_recovery;

pub use agent::Agent;
pub use cause::CancelCause;
pub use default_model::{
    AGENT_DEFAULT_MODEL, AgentDefaultModel, AgentDefaultModelPlugin, DEFAULT_MODEL_PLUGIN_NAME,
    ModelSelection,
};
pub use error::AgentError;
pub use options::{AgentOptions, AgentStatus, InboxTarget, SessionStartSource};
pub use outcome::{STEP_LIMIT, TurnEndReason};
pub use plugin::{AgentLoopConfig, AgentLoopPlugin, ConfiguredAgent, PLUGIN_NAME};
pub use registry::{
    AGENT_LOOP, AGENTS, AgentRegistry, AgentSetup, CreateAgentOptions, ResumeAgentOptions,
};
pub use retry::{LlmRetryConfig, LlmRetryPlugin, RETRY_PLUGIN_NAME};
pub use retry_recorder::SessionRetryRecorder;
pub use runtime::LoopSettings;
pub use summary::TurnSummary;

/// The message vocabulary agents take (re-exported from `dsh-llm`).
pub use dsh_llm::{ContentBlock, Message, MessageSource};
