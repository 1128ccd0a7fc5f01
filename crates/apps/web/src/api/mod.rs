//! The `dsh-host-apiproxy` plugin (row `api-gateway`): the session API over the kernel
//! services, mounted on the web server under `/api/sessions` and `/api/agents`, and the
//! page's answers to approval questions. Sessions are refused a workspace a model's commands
//! must not write in (`workspace`). See `docs/web-api.md`.

mod agents;
mod approvals;
mod error;
mod events;
mod sessions;
mod titles;
mod workspace;

use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use dsh_agent_loop::{AGENT_DEFAULT_MODEL, AGENTS, AgentDefaultModel, AgentRegistry};
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_session::{SESSIONS, SessionStore};
use dsh_tools::{ApprovalAnswerer, USER_APPROVAL};
use serde::Deserialize;

use crate::server::WEBSERVER;

/// The plugin's name in rows.
pub const API_PLUGIN_NAME: &str = "dsh-host-apiproxy";

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Api {
    pub(crate) ctx: Context,
    pub(crate) agents: Arc<AgentRegistry>,
    pub(crate) sessions: Arc<SessionStore>,
    pub(crate) default_model: Arc<AgentDefaultModel>,
    pub(crate) answerer: Arc<approvals::PageAnswerer>,
    pub(crate) titles: Arc<titles::Titles>,
}

/// Row config of `dsh-host-apiproxy`: none.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {}

/// The `dsh-host-apiproxy` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiPlugin;

impl Plugin for ApiPlugin {
    type Config = ApiConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const {
            &[
                WEBSERVER.name(),
                AGENTS.name(),
                SESSIONS.name(),
                AGENT_DEFAULT_MODEL.name(),
                USER_APPROVAL.name(),
            ]
        }
    }

    async fn apply(&self, ctx: Context, _config: ApiConfig) -> Result<(), BoxError> {
        let server = ctx.require(&WEBSERVER)?;
        let api = Api {
            ctx: ctx.clone(),
            agents: ctx.require(&AGENTS)?,
            sessions: ctx.require(&SESSIONS)?,
            default_model: ctx.require(&AGENT_DEFAULT_MODEL)?,
            answerer: Arc::default(),
            titles: Arc::default(),
        };
        ctx.require(&USER_APPROVAL)?
            .answer_with(&ctx, Arc::clone(&api.answerer) as Arc<dyn ApprovalAnswerer>)?;
        let sessions = Router::new()
            .route("/api/sessions", get(sessions::list))
            .route(
                "/api/sessions/{id}/resume",
                post(sessions::resume)
                    .route_layer(from_fn_with_state(api.clone(), workspace::guard_resume)),
            )
            .route("/api/sessions/{id}/events", get(events::stream))
            .fallback(error::no_route)
            .method_not_allowed_fallback(error::wrong_method)
            .with_state(api.clone());
        let agents = Router::new()
            .route("/api/agents", post(agents::create))
            .route("/api/agents/{id}/messages", post(agents::send))
            .route("/api/agents/{id}/cancel", post(agents::cancel))
            .route("/api/agents/{id}/approvals/{qid}", post(approvals::answer))
            .fallback(error::no_route)
            .method_not_allowed_fallback(error::wrong_method)
            .with_state(api);
        server.mount(&ctx, "/api/sessions", sessions)?;
        server.mount(&ctx, "/api/agents", agents)?;
        Ok(())
    }
}
