//! What an agent last logged about its requests: the `request/header` and `request/context`
//! in force (a new one is logged only when it changes), and the typed messages of the last
//! request, so that anyone holding the log can rebuild the exact request.

use std::sync::Arc;

use dsh_llm::{AdapterDefaults, LlmCallConfig, LlmFailure, Message, ToolSchema};
use dsh_protocol::kinds::{REQUEST_CONTEXT, REQUEST_HEADER};
use dsh_session::{DerivedMessage, LiveSession, SessionEvent, SurfaceIntent};
use serde_json::{Map, Value, json};

use crate::error::TurnError;
use crate::options::AgentOptions;

/// What the loop last logged about requests.
#[derive(Debug, Default)]
pub(crate) struct RequestState {
    /// Whether this agent instance logged its first header (`initial` or `resume`).
    logged: bool,
    /// The header in force (the last `request/header`'s, canonical).
    header: Option<Value>,
    /// The last `request/context` data.
    context: Option<Value>,
    /// The typed messages of the last request, each with the seq of the event it came
    /// from: the next request reuses the prefix that is still derived the same way, so a
    /// step converts only what was logged since (not the whole history again).
    messages: Vec<(u64, Message)>,
}

impl RequestState {
    /// The state a log leaves; the instance itself has logged nothing yet.
    pub(crate) fn restore(events: &[Arc<SessionEvent>]) -> Self {
        let last = |kind: &str| {
            events
                .iter()
                .rev()
                .find(|event| event.kind == kind)
                .map(|event| (*event.data).clone())
        };
        Self {
            logged: false,
            header: last(REQUEST_HEADER).and_then(|data| data.get("header").cloned()),
            context: last(REQUEST_CONTEXT),
            messages: Vec::new(),
        }
    }

    /// The config the loop proposes: the agent's route (plus an explicit effort the log
    /// recorded for that exact route) on this instance's first request; afterwards the
    /// logged header's config without the values the adapter filled in.
    pub(crate) fn seed_config(&self, options: &AgentOptions) -> LlmCallConfig {
        let persisted = self
            .header
            .as_ref()
            .and_then(|header| header.get("config"))
            .and_then(|config| serde_json::from_value::<LlmCallConfig>(config.clone()).ok());
        let defaults = self
            .header
            .as_ref()
            .and_then(|header| header.get("adapterDefaults"))
            .and_then(|defaults| serde_json::from_value::<AdapterDefaults>(defaults.clone()).ok())
            .unwrap_or_default();
        if self.logged
            && let Some(mut config) = persisted
        {
            if defaults.reasoning_effort {
                config.reasoning_effort = None;
            }
            if defaults.max_tokens {
                config.max_tokens = None;
            }
            return config;
        }
        let mut config = LlmCallConfig::new(
            options.provider.clone().unwrap_or_default(),
            options.model.clone().unwrap_or_default(),
        );
        if let Some(persisted) = persisted
            && persisted.provider == config.provider
            && persisted.model == config.model
            && !defaults.reasoning_effort
        {
            config.reasoning_effort = persisted.reasoning_effort;
        }
        config.max_tokens = options.max_tokens;
        config
    }

    /// The model's messages: `derived` (the log's, [`LiveSession::derive_messages`]) as
    /// typed messages, converting only what is new since the last request.
    pub(crate) fn model_messages(
        &mut self,
        derived: &[DerivedMessage],
    ) -> Result<Vec<Message>, TurnError> {
        let kept = self
            .messages
            .iter()
            .zip(derived)
            .take_while(|((seq, _), derived)| *seq == derived.event().seq)
            .count();
        self.messages.truncate(kept);
        for message in derived.iter().skip(kept) {
            let typed = message.message().map_err(|error| {
                TurnError::unknown(format!(
                    "the logged message at seq {} cannot be sent: {error}",
                    message.event().seq
                ))
            })?;
            self.messages.push((message.event().seq, typed));
        }
        Ok(self
            .messages
            .iter()
            .map(|(_, message)| message.clone())
            .collect())
    }

    /// `request/header`: on this instance's first request (`initial`, or `resume` when the
    /// log already has one), then only when it changed (`change`).
    pub(crate) fn log_header(
        &mut self,
        session: &Arc<LiveSession>,
        header: Value,
    ) -> Result<(), TurnError> {
        let reason = if !self.logged {
            if self.header.is_none() {
                "initial"
            } else {
                "resume"
            }
        } else if self.header.as_ref() != Some(&header) {
            "change"
        } else {
            return Ok(());
        };
        session.append(
            REQUEST_HEADER,
            json!({"header": header, "reason": reason}),
            SurfaceIntent::default(),
        )?;
        self.logged = true;
        self.header = Some(header);
        Ok(())
    }

    /// `request/context` when the route or its context window changed.
    pub(crate) fn log_context(
        &mut self,
        session: &Arc<LiveSession>,
        context: Value,
    ) -> Result<(), TurnError> {
        if self.context.as_ref() == Some(&context) {
            return Ok(());
        }
        session.append(REQUEST_CONTEXT, context.clone(), SurfaceIntent::default())?;
        self.context = Some(context);
        Ok(())
    }
}

/// dsh's canonical header: `{config, adapterDefaults?, system?, tools?}`, where the
/// defaults appear only when one is set and empty system prompts and tool lists are absent.
pub(crate) fn canonical_header(
    config: &LlmCallConfig,
    defaults: Option<AdapterDefaults>,
    system: &str,
    tools: &[ToolSchema],
) -> Result<Value, TurnError> {
    let unknown = |error: serde_json::Error| {
        TurnError::Failed(LlmFailure::unknown(format!("request header: {error}")))
    };
    let mut header = Map::new();
    header.insert(
        "config".into(),
        serde_json::to_value(config).map_err(unknown)?,
    );
    if let Some(defaults) = defaults.filter(|d| d.reasoning_effort || d.max_tokens) {
        header.insert(
            "adapterDefaults".into(),
            serde_json::to_value(defaults).map_err(unknown)?,
        );
    }
    if !system.is_empty() {
        header.insert("system".into(), json!(system));
    }
    if !tools.is_empty() {
        header.insert(
            "tools".into(),
            serde_json::to_value(tools).map_err(unknown)?,
        );
    }
    Ok(Value::Object(header))
}

/// `{provider, model, contextWindow?}`.
pub(crate) fn request_context(config: &LlmCallConfig, context_window: Option<u64>) -> Value {
    let mut context = Map::new();
    context.insert("provider".into(), json!(config.provider));
    context.insert("model".into(), json!(config.model));
    if let Some(window) = context_window {
        context.insert("contextWindow".into(), json!(window));
    }
    Value::Object(context)
}
