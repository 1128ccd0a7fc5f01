//! What an agent is created with, and the small vocabulary of its state.

use dsh_protocol::json::MAX_SAFE_INTEGER;
use serde::{Deserialize, Serialize};

/// An agent's model route and output cap (dsh's `AgentOptions`). The route is the seed of
/// every request; an `agent/request` listener may still change it per step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentOptions {
    /// Provider route, such as `deepseek-official`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model id, such as `deepseek-v4-flash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Output cap of each request (positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

impl AgentOptions {
    /// Options naming `provider` and `model`.
    pub fn route(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            provider: Some(provider.into()),
            model: Some(model.into()),
            max_tokens: None,
        }
    }

    /// Refuses an output cap of zero (dsh: a positive safe integer).
    pub(crate) fn check(&self) -> Result<(), String> {
        match self.max_tokens {
            Some(cap) if cap == 0 || cap > MAX_SAFE_INTEGER => {
                Err("agent maxTokens must be a positive safe integer".to_owned())
            }
            _ => Ok(()),
        }
    }
}

/// Whether an agent is working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentStatus {
    /// No turn is running.
    Idle,
    /// A turn is running.
    Running,
}

impl AgentStatus {
    /// `idle` or `running`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
        }
    }
}

/// Which inbox queue a message waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InboxTarget {
    /// Starts the next turn (a follow-up).
    #[serde(rename = "next-turn")]
    NextTurn,
    /// Joins the next step of the running turn (steering, injected context).
    #[serde(rename = "next-step")]
    NextStep,
}

impl InboxTarget {
    /// `next-turn` or `next-step`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NextTurn => "next-turn",
            Self::NextStep => "next-step",
        }
    }
}

/// Why an agent's first turn is about to run (`agent/session-start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStartSource {
    /// A new session.
    Startup,
    /// A stored session brought back.
    Resume,
}

impl SessionStartSource {
    /// `startup` or `resume`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
        }
    }
}
