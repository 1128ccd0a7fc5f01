//! `POST /api/agents` (create an agent on a new session), `POST /api/agents/{id}/messages`
//! (follow up, or steer the running turn) and `POST /api/agents/{id}/cancel`.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use dsh_agent_loop::{
    Agent, AgentOptions, CancelCause, ContentBlock, CreateAgentOptions, Message, MessageSource,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Api;
use super::error::{ApiError, rejection};
use super::workspace::new_workspace;

/// `POST /api/agents` body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    /// The workspace (default: the server's working directory): an existing directory, not
    /// the root, a home or an ancestor of one (see `workspace`).
    cwd: Option<String>,
    /// The model (default: the deployment's).
    model: Option<String>,
}

impl Api {
    pub(crate) fn options(&self, model: Option<String>) -> AgentOptions {
        let mut selection = self.default_model.current_selection();
        if let Some(model) = model {
            selection.model = model;
        }
        AgentOptions::route(selection.provider, selection.model)
    }

    pub(crate) fn agent(&self, id: &str) -> Result<std::sync::Arc<Agent>, ApiError> {
        self.agents.get(id).ok_or_else(|| {
            ApiError::not_found(format!(
                "no live agent \"{id}\": create one, or resume the stored session first"
            ))
        })
    }
}

pub(crate) async fn create(
    State(api): State<Api>,
    body: Result<Json<CreateBody>, JsonRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let Json(body) = body.map_err(|error| rejection(&error))?;
    let cwd = new_workspace(&api, body.cwd)?;
    let agent = api
        .agents
        .create(CreateAgentOptions {
            cwd: Some(cwd),
            agent_options: api.options(body.model),
            ..CreateAgentOptions::default()
        })
        .await
        .map_err(|error| ApiError::internal(error.to_string()))?;
    Ok((StatusCode::CREATED, Json(json!({"sessionId": agent.id()}))))
}

/// `POST /api/agents/{id}/messages` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendBody {
    /// The user's text.
    text: String,
    /// `followup` (the default: a new turn) or `steer` (joins the running turn).
    #[serde(default)]
    mode: SendMode,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum SendMode {
    #[default]
    Followup,
    Steer,
}

pub(crate) async fn send(
    State(api): State<Api>,
    Path(id): Path<String>,
    body: Result<Json<SendBody>, JsonRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let Json(body) = body.map_err(|error| rejection(&error))?;
    if body.text.trim().is_empty() {
        return Err(ApiError::bad_request("text must not be blank"));
    }
    let agent = api.agent(&id)?;
    let message = Message::user(vec![ContentBlock::text(body.text)], MessageSource::User);
    let message_id = message.id.clone();
    let sent = match body.mode {
        SendMode::Followup => agent.followup(message),
        SendMode::Steer => agent.steer(message),
    };
    sent.map_err(|error| ApiError::new(StatusCode::CONFLICT, error.to_string()))?;
    Ok((StatusCode::ACCEPTED, Json(json!({"messageId": message_id}))))
}

pub(crate) async fn cancel(
    State(api): State<Api>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let agent = api.agent(&id)?;
    agent.cancel(CancelCause::User);
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"status": agent.status().as_str()})),
    ))
}
