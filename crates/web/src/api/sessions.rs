//! `GET /api/sessions` (stored and live sessions) and `POST /api/sessions/{id}/resume`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use dsh_agent_loop::{AgentError, ResumeAgentOptions};
use dsh_persistence::{PersistenceError, SESSION_PERSISTENCE};
use dsh_session::LiveSession;
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
    for id in api.agents.ids() {
        let Some(agent) = api.agents.get(&id) else {
            continue;
        };
        let header = agent.session().header();
        sessions.insert(
            id.clone(),
            json!({"id": id, "createdAt": header.created_at, "cwd": header.cwd,
                   "status": agent.status().as_str(), "title": title_of(agent.session())}),
        );
    }
    let mut list: Vec<Value> = sessions.into_values().collect();
    list.sort_by(|a, b| b["createdAt"].as_u64().cmp(&a["createdAt"].as_u64()));
    Ok(Json(json!({"sessions": list})))
}

/// The longest title the list gives, in characters.
const TITLE_CHARS: usize = 60;

/// A live session's title: its last `session/title`, else the first line of the first
/// message the user typed (cut to [`TITLE_CHARS`]), else none.
fn title_of(session: &LiveSession) -> Option<String> {
    session.with(|log| {
        let events = log.events();
        let titled = events
            .iter()
            .rev()
            .find(|event| event.kind == "session/title")
            .and_then(|event| event.data.get("title").and_then(Value::as_str))
            .map(str::to_owned);
        titled.or_else(|| {
            events
                .iter()
                .filter(|event| event.kind == "user/message")
                .find(|event| {
                    event.data.pointer("/source/kind").and_then(Value::as_str) == Some("user")
                })
                .and_then(|event| {
                    event
                        .data
                        .get("content")?
                        .as_array()?
                        .iter()
                        .find_map(|block| block.get("text").and_then(Value::as_str))
                        .map(first_line)
                })
        })
    })
}

/// The first non-blank line of `text`, cut to [`TITLE_CHARS`] characters with an ellipsis.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    cut.push('…');
    cut
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_typed_line_cut_to_size() {
        assert_eq!(first_line("\n  fix the build \nthen test"), "fix the build");
        let long = "x".repeat(80);
        let cut = first_line(&long);
        assert_eq!(cut.chars().count(), TITLE_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(first_line(""), "");
    }
}
