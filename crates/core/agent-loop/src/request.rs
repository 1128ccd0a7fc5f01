//! Building one model request: the call config (`agent/request`), the prepared call, and
//! the `request/header` and `request/context` records that let anyone holding the log
//! rebuild the exact request.

use std::sync::Arc;

use dsh_kernel::error_chain;
use dsh_llm::{
    AdapterDefaults, GenerateOptions, LlmCallConfig, LlmFailure, Message, PreparedCall, ToolSchema,
    codes,
};
use dsh_session::{SessionEvent, SurfaceIntent};
use serde_json::{Map, Value, json};

use crate::agent::Agent;
use crate::cause::Abort;
use crate::error::TurnError;
use crate::events::{AgentRequest, RequestProposal};
use crate::turn::check;

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
            header: last("request/header").and_then(|data| data.get("header").cloned()),
            context: last("request/context"),
            messages: Vec::new(),
        }
    }
}

/// A request ready to stream.
pub(crate) struct BuiltRequest {
    pub(crate) options: GenerateOptions,
    pub(crate) prepared: Option<PreparedCall>,
}

impl Agent {
    pub(crate) async fn build_request(
        self: &Arc<Self>,
        turn: u64,
        step: u64,
        tools: &[ToolSchema],
        system: &str,
        abort: &Abort,
    ) -> Result<BuiltRequest, TurnError> {
        let seed = self.seed_config();
        let Some(agent) = self.arc() else {
            return Err(TurnError::Aborted);
        };
        let proposal = RequestProposal {
            agent,
            turn,
            step,
            config: seed,
            signal: abort.token().clone(),
        };
        let proposed = self
            .runtime
            .ctx
            .waterfall::<AgentRequest, _, _>(
                proposal,
                |proposal| async move { Ok(proposal.config) },
            )
            .await
            .map_err(|error| TurnError::unknown(error_chain(error.as_ref())))?;
        check(abort)?;
        if proposed.provider.is_empty() || proposed.model.is_empty() {
            return Err(TurnError::unknown(format!(
                "agent \"{}\" has no provider/model: set AgentOptions.provider and \
                 AgentOptions.model or supply both via the agent/request waterfall",
                self.id()
            )));
        }
        let (config, prepared) = match self
            .runtime
            .llm
            .prepare_call(proposed.clone(), abort.token())
            .await
        {
            Ok(prepared) => (prepared.config().clone(), Some(prepared)),
            // A route served by an `llm/stream` listener has no adapter to prepare with.
            Err(failure) if failure.is(codes::NO_ADAPTER) => (proposed, None),
            Err(failure) => return Err(TurnError::Failed(failure)),
        };
        check(abort)?;
        let defaults = prepared.as_ref().map(PreparedCall::adapter_defaults);
        let header = canonical_header(&config, defaults, system, tools)?;
        self.log_header(header)?;
        let context = request_context(
            &config,
            prepared.as_ref().and_then(PreparedCall::context_window),
        );
        self.log_context(context)?;
        check(abort)?;
        let messages = self.model_messages()?;
        let mut options = GenerateOptions::new(&config.provider, &config.model, messages);
        options.set_call_config(&config);
        if !system.is_empty() {
            options.system = Some(system.to_owned());
        }
        if !tools.is_empty() {
            options.tools = Some(tools.to_vec());
        }
        options.session_id = Some(self.id().to_owned());
        options.signal = abort.token().clone();
        Ok(BuiltRequest { options, prepared })
    }

    /// The config the loop proposes: the agent's route (plus an explicit effort the log
    /// recorded for that exact route) on this instance's first request; afterwards the
    /// logged header's config without the values the adapter filled in.
    fn seed_config(&self) -> LlmCallConfig {
        let state = lock(self);
        let persisted = state
            .header
            .as_ref()
            .and_then(|header| header.get("config"))
            .and_then(|config| serde_json::from_value::<LlmCallConfig>(config.clone()).ok());
        let defaults = state
            .header
            .as_ref()
            .and_then(|header| header.get("adapterDefaults"))
            .and_then(|defaults| serde_json::from_value::<AdapterDefaults>(defaults.clone()).ok())
            .unwrap_or_default();
        if state.logged
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
        let options = self.options();
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

    /// The model's messages, derived from the log ([`dsh_session::Session::derive_messages`]).
    fn model_messages(&self) -> Result<Vec<Message>, TurnError> {
        let derived = self.session().derive_messages();
        let mut state = lock(self);
        let kept = state
            .messages
            .iter()
            .zip(&derived)
            .take_while(|((seq, _), derived)| *seq == derived.event().seq)
            .count();
        state.messages.truncate(kept);
        for message in derived.iter().skip(kept) {
            let typed = message.message().map_err(|error| {
                TurnError::unknown(format!(
                    "the logged message at seq {} cannot be sent: {error}",
                    message.event().seq
                ))
            })?;
            state.messages.push((message.event().seq, typed));
        }
        Ok(state
            .messages
            .iter()
            .map(|(_, message)| message.clone())
            .collect())
    }

    /// `request/header`: on this instance's first request (`initial`, or `resume` when the
    /// log already has one), then only when it changed (`change`).
    fn log_header(&self, header: Value) -> Result<(), TurnError> {
        let mut state = lock(self);
        let reason = if !state.logged {
            if state.header.is_none() {
                "initial"
            } else {
                "resume"
            }
        } else if state.header.as_ref() != Some(&header) {
            "change"
        } else {
            return Ok(());
        };
        self.session().append(
            "request/header",
            json!({"header": header, "reason": reason}),
            SurfaceIntent::default(),
        )?;
        state.logged = true;
        state.header = Some(header);
        Ok(())
    }

    /// `request/context` when the route or its context window changed.
    fn log_context(&self, context: Value) -> Result<(), TurnError> {
        let mut state = lock(self);
        if state.context.as_ref() == Some(&context) {
            return Ok(());
        }
        self.session()
            .append("request/context", context.clone(), SurfaceIntent::default())?;
        state.context = Some(context);
        Ok(())
    }
}

fn lock(agent: &Agent) -> std::sync::MutexGuard<'_, RequestState> {
    agent
        .request
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
fn request_context(config: &LlmCallConfig, context_window: Option<u64>) -> Value {
    let mut context = Map::new();
    context.insert("provider".into(), json!(config.provider));
    context.insert("model".into(), json!(config.model));
    if let Some(window) = context_window {
        context.insert("contextWindow".into(), json!(window));
    }
    Value::Object(context)
}
