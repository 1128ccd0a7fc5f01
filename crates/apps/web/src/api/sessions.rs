//! `GET /api/sessions` (stored and live sessions) and `POST /api/sessions/{id}/resume`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use dsh_agent_loop::{AgentError, ResumeAgentOptions};
use dsh_persistence::{PersistenceError, SESSION_PERSISTENCE};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Api;
use super::error::{ApiError, rejection};

pub(crate) async fn list(State(api): State<Api>) -> Result<Json<Value>, ApiError> {
    let mut sessions: BTreeMap<String, Value> = BTreeMap::new();
    if let Some(persistence) = api.ctx.get(&SESSION_PERSISTENCE) {
        let stored = persistence.list().await.map_err(|error| {
            ApiError::internal(format!("cannot list the stored sessions: {error}"))
        })?;
        for header in stored {
            sessions.insert(
                header.id.clone(),
                json!({"id": header.id, "createdAt": header.created_at, "cwd": header.cwd,
                       "status": null, "title": null}),
            );
        }
    }
    let live = api.agents.ids();
    api.titles.keep_only(&live);
    for id in live {
        let Some(agent) = api.agents.get(&id) else {
            continue;
        };
        let header = agent.session().header();
        sessions.insert(
            id.clone(),
            json!({"id": id, "createdAt": header.created_at, "cwd": header.cwd,
                   "status": agent.status().as_str(), "title": api.titles.of(agent.session())}),
        );
    }
    let mut list: Vec<Value> = sessions.into_values().collect();
    list.sort_by(|a, b| b["createdAt"].as_u64().cmp(&a["createdAt"].as_u64()));
    Ok(Json(json!({"sessions": list})))
}

/// `POST /api/sessions/{id}/resume` body (may be empty JSON `{}`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeBody {
    /// The model (default: the deployment's).
    model: Option<String>,
}

pub(crate) async fn resume(
    State(api): State<Api>,
    Path(id): Path<String>,
    body: Result<Json<ResumeBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|error| rejection(&error))?;
    if api.agents.get(&id).is_some() {
        return Ok(Json(json!({"sessionId": id, "resumed": false})));
    }
    let agent = api
        .agents
        .resume(ResumeAgentOptions {
            session_id: id,
            agent_options: api.options(body.model),
            setup: None,
        })
        .await
        .map_err(|error| match &error {
            AgentError::Resume {
                source: PersistenceError::NotFound(_),
                ..
            } => ApiError::not_found(error.to_string()),
            AgentError::Resume {
                source:
                    PersistenceError::Corruption { .. }
                    | PersistenceError::FormatUnsupported(_)
                    | PersistenceError::Busy(_),
                ..
            } => ApiError::new(axum::http::StatusCode::CONFLICT, error.to_string()),
            _ => ApiError::internal(error.to_string()),
        })?;
    Ok(Json(json!({"sessionId": agent.id(), "resumed": true})))
}
