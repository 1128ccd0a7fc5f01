//! The `dsh-host-webserver` plugin (row `webserver`): a loopback HTTP server. Other rows
//! mount their routes under a path prefix ([`WebServer::mount`]); every request first passes
//! the [`Fence`] and the body limit. Connections live under the row's limits (see
//! [`crate::conn`]): a header-read and an idle timeout, and a cap on how many are open.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use dsh_kernel::sync::lock;
use dsh_kernel::{BoxError, Context, Disposer, Plugin, ServiceKey};
use dsh_shell::SANDBOX_PROTECTION;
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;

use crate::conn::{ConnHandle, ConnectionLimits, GuardedListener, track_response};
use crate::fence::Fence;
use crate::login::{LOGIN_CODE_TTL, LOGIN_PATH, LoginCodes};
use crate::secret::random_hex;
use crate::startup::WILDCARD_REFUSAL;

/// The plugin's name in rows.
pub const SERVER_PLUGIN_NAME: &str = "dsh-host-webserver";

/// The server service (`ctx.webserver`); its fields are `host`, `port` and `url`.
pub const WEBSERVER: ServiceKey<WebServer> = ServiceKey::new("webserver");

/// The default request body limit (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long the unload waits for open requests (a live event stream never ends on its own).
const DRAIN: Duration = Duration::from_secs(2);

/// Row config of `dsh-host-webserver`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebServerConfig {
    /// The bind host: `127.0.0.1` (the default; nothing else is accepted yet).
    #[serde(default = "default_host")]
    pub host: String,
    /// The port (default 3080; 0 lets the OS pick one).
    #[serde(default = "default_port")]
    pub port: u16,
    /// Extra authorities the fence accepts (`--trusted-host`).
    #[serde(default)]
    pub trusted_hosts: Vec<String>,
    /// The largest request body, in bytes (default 1 MiB).
    pub max_body_bytes: Option<usize>,
    /// How long a client has to send a request head, from its connect or from the first
    /// byte of a later request, in milliseconds (default 10,000).
    pub header_read_timeout_ms: Option<u64>,
    /// How long a connection with no request in flight stays open, in milliseconds
    /// (default 60,000). An open event stream is a request in flight.
    pub idle_timeout_ms: Option<u64>,
    /// How long a client has, from the end of a request head, to send its body and get its
    /// answer, in milliseconds (default 30,000); a streamed answer such as the event stream
    /// is not bounded once it started.
    pub request_timeout_ms: Option<u64>,
    /// How many connections may be open at once (default 256).
    pub max_connections: Option<usize>,
}

fn default_host() -> String {
    "127.0.0.1".to_owned()
}

fn default_port() -> u16 {
    3080
}

/// A mounted route table.
struct Mounted {
    id: u64,
    prefix: String,
    router: Router,
}

#[derive(Default)]
struct Mounts {
    next_id: u64,
    tables: Vec<Mounted>,
}

/// The running server.
pub struct WebServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    fence: Fence,
    max_body_bytes: usize,
    login_codes: Arc<LoginCodes>,
    mounts: Mutex<Mounts>,
}

impl Shared {
    fn mounts(&self) -> MutexGuard<'_, Mounts> {
        lock(&self.mounts)
    }
}

impl std::fmt::Debug for WebServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl WebServer {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The per-launch token the API requires.
    pub fn token(&self) -> &str {
        self.shared.fence.token()
    }

    /// A fresh one-time login code: a page opened at `<url>/#login=<code>` trades it once,
    /// within 60 s, for the token (`POST /api/login`). The browser opener is given this, never
    /// the token.
    pub fn login_code(&self) -> Result<String, BoxError> {
        Ok(self.shared.login_codes.issue()?)
    }

    /// Serves `router` for paths under `prefix` (`/api/sessions`, `/`) for as long as
    /// `owner`'s fiber is loaded; the longest matching prefix wins. Two tables may not share
    /// a prefix.
    pub fn mount(
        &self,
        owner: &Context,
        prefix: &str,
        router: Router,
    ) -> Result<Disposer, BoxError> {
        if !prefix.starts_with('/') {
            return Err(
                format!("webserver: a mount prefix starts with '/' (got {prefix:?})").into(),
            );
        }
        let id = {
            let mut mounts = self.shared.mounts();
            if mounts.tables.iter().any(|table| table.prefix == prefix) {
                return Err(format!("webserver: the prefix {prefix} is already mounted").into());
            }
            mounts.next_id += 1;
            let id = mounts.next_id;
            let router = router.layer(DefaultBodyLimit::max(self.shared.max_body_bytes));
            mounts.tables.push(Mounted {
                id,
                prefix: prefix.to_owned(),
                router,
            });
            id
        };
        let shared = Arc::downgrade(&self.shared);
        Ok(owner.effect(move || {
            if let Some(shared) = shared.upgrade() {
                shared.mounts().tables.retain(|table| table.id != id);
            }
        })?)
    }
}

/// An error answer: `status` with `{"error": message}`.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

/// Every request: its connection is busy until the response is sent, then the fence, the
/// body limit and the longest mounted prefix.
async fn dispatch(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let in_flight = request
        .extensions()
        .get::<ConnectInfo<ConnHandle>>()
        .map(|ConnectInfo(ConnHandle(connection))| connection.start_request());
    let response = route(&shared, request).await;
    match in_flight {
        Some(in_flight) => {
            in_flight.answered();
            track_response(response, in_flight)
        }
        None => response,
    }
}

/// The fence, the body limit, then the longest mounted prefix.
async fn route(shared: &Shared, request: Request) -> Response {
    if let Err(refusal) = shared
        .fence
        .check(request.method(), request.uri(), request.headers())
    {
        return json_error(refusal.status, &refusal.message);
    }
    let path = request.uri().path().to_owned();
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|length| length > shared.max_body_bytes) {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("request body over {} bytes", shared.max_body_bytes),
        );
    }
    let router = {
        let mounts = shared.mounts();
        mounts
            .tables
            .iter()
            .filter(|table| under(&path, &table.prefix))
            .max_by_key(|table| table.prefix.len())
            .map(|table| table.router.clone())
    };
    let Some(router) = router else {
        return json_error(
            StatusCode::NOT_FOUND,
            &format!("nothing is served at {path}"),
        );
    };
    match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Whether `path` is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    prefix == "/"
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Binds the server's socket: the one place the port is taken (on loopback only).
async fn bind_loopback(config: &WebServerConfig) -> Result<tokio::net::TcpListener, BoxError> {
    match config.host.as_str() {
        "127.0.0.1" => {}
        "0.0.0.0" => return Err(WILDCARD_REFUSAL.trim_start_matches("error: ").into()),
        other => {
            return Err(format!(
                "host must be 127.0.0.1 (got {other:?}): the web host listens on loopback only"
            )
            .into());
        }
    }
    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port))
        .await
        .map_err(|error| {
            format!(
                "cannot listen on {}:{}: {error} (another dsh web may be running there; pass \
                 --port 0 to pick a free port)",
                config.host, config.port
            )
        })?;
    Ok(listener)
}

/// The `dsh-host-webserver` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebServerPlugin;

impl Plugin for WebServerPlugin {
    type Config = WebServerConfig;

    async fn apply(&self, ctx: Context, config: WebServerConfig) -> Result<(), BoxError> {
        let limits = ConnectionLimits::from_config(
            config.header_read_timeout_ms,
            config.idle_timeout_ms,
            config.request_timeout_ms,
            config.max_connections,
        )?;
        let listener = bind_loopback(&config).await?;
        let addr = listener.local_addr()?;
        // No confined command may connect to this port (the launcher's registry fences it
        // for the shell; the fence goes when this row unloads).
        if let Some(protection) = ctx.get(&SANDBOX_PROTECTION) {
            let fence = protection.fence_port(addr.port());
            ctx.effect(move || drop(fence))?;
        } else {
            tracing::warn!(
                "webserver: no sandboxProtection registry in this tree, so confined commands \
                 can connect to port {} (provide one on the root before mounting rows)",
                addr.port()
            );
        }
        let token = random_hex("webserver: cannot make the launch token")?;
        let login_codes = Arc::new(LoginCodes::new(LOGIN_CODE_TTL));
        let login = crate::login::router(Arc::clone(&login_codes), &token);
        let shared = Arc::new(Shared {
            fence: Fence::new(addr.port(), &config.trusted_hosts, token),
            max_body_bytes: config.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            login_codes,
            mounts: Mutex::default(),
        });
        let app = Router::new()
            .fallback(dispatch)
            .with_state(Arc::clone(&shared))
            .into_make_service_with_connect_info::<ConnHandle>();
        let listener = GuardedListener::new(listener, limits);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
            if let Err(error) = served {
                tracing::error!("webserver: serving failed: {error}");
            }
        });
        ctx.effect_async(move || async move {
            let _ = stop.send(());
            let abort = serving.abort_handle();
            if tokio::time::timeout(DRAIN, serving).await.is_err() {
                abort.abort();
            }
        })?;
        let server = Arc::new(WebServer { addr, shared });
        let fields =
            json!({"host": addr.ip().to_string(), "port": addr.port(), "url": server.url()});
        let health = Router::new().route(
            "/api/health",
            get(|| async { axum::Json(json!({"ok": true})) }),
        );
        server.mount(&ctx, "/api/health", health)?;
        server.mount(&ctx, LOGIN_PATH, login)?;
        ctx.provide_with_fields(&WEBSERVER, server, fields)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_segments() {
        assert!(under("/api/sessions", "/api/sessions"));
        assert!(under("/api/sessions/x", "/api/sessions"));
        assert!(!under("/api/sessionsx", "/api/sessions"));
        assert!(under("/index.html", "/"));
    }
}
