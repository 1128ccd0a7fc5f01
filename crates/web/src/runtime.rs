//! The `dsh-web-app` plugin (row `web-runtime`): serves the browser UI (embedded in the
//! binary), turns the printed URL's token into a cookie, and once the tree has booted prints
//! the URL and opens the default browser.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use dsh_compose::launch::LOADER;
use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::assets;
use crate::opener::{BrowserOpener, in_ssh_session};
use crate::server::{WEBSERVER, WebServer};

/// The plugin's name in rows.
pub const RUNTIME_PLUGIN_NAME: &str = "dsh-web-app";

/// Only our own files run, and they talk only to this server.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// Row config of `dsh-web-app`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebRuntimeConfig {
    /// Open the default browser once the tree has booted (default true; `--no-open` and an
    /// SSH session turn it off).
    #[serde(default = "yes")]
    pub open_browser: bool,
    /// Print `dsh web: <url>` once the tree has booted (default true).
    #[serde(default = "yes")]
    pub print_url: bool,
}

fn yes() -> bool {
    true
}

impl Default for WebRuntimeConfig {
    fn default() -> Self {
        Self {
            open_browser: true,
            print_url: true,
        }
    }
}

/// The `dsh-web-app` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebRuntimePlugin;

impl Plugin for WebRuntimePlugin {
    type Config = WebRuntimeConfig;

    fn inject(&self) -> &'static [&'static str] {
        &["webserver"]
    }

    async fn apply(&self, ctx: Context, config: WebRuntimeConfig) -> Result<(), BoxError> {
        let server = ctx.require(&WEBSERVER)?;
        let pages = Router::new()
            .route("/", get(index))
            .fallback(get(asset))
            .with_state(Arc::clone(&server));
        server.mount(&ctx, "/", pages)?;
        let url = format!("{}/?token={}", server.url(), server.token());
        let loader = ctx.get(&LOADER);
        ctx.spawn(async move {
            // The URL is good only once every row (the API among them) has mounted.
            if let Some(loader) = loader {
                loader.settled().await;
            }
            announce(&url, config, &BrowserOpener::default()).await;
        })?;
        Ok(())
    }
}

/// Prints the URL and hands it to the browser, as the config and the environment allow.
async fn announce(url: &str, config: WebRuntimeConfig, opener: &BrowserOpener) {
    if config.print_url {
        say(&format!("dsh web: {url}"));
    }
    if !config.open_browser {
        return;
    }
    if in_ssh_session() {
        say(
            "dsh web: not opening a browser in an SSH session; forward the port \
             (ssh -L <port>:127.0.0.1:<port>) and visit the URL",
        );
        return;
    }
    say("dsh web: opening the default browser; pass --no-open to disable");
    if let Err(reason) = opener.open(url).await {
        // A closed stderr leaves nobody to tell; the server keeps serving either way.
        let _ = writeln!(
            std::io::stderr().lock(),
            "web-app: could not open the default browser because {reason}; visit {url} manually"
        );
    }
}

/// One line on stdout, flushed at once (a script may be waiting for the URL).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// `GET /`: the page; with `?token=`, first trade the token for a cookie and come back
/// without it, so the token leaves the address bar and the history.
async fn index(
    State(server): State<Arc<WebServer>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(token) = query.get("token") else {
        return asset(Uri::from_static("/index.html")).await;
    };
    if !server.fence().is_token(token) {
        return page(
            StatusCode::FORBIDDEN,
            "text/plain; charset=utf-8",
            b"wrong token: open the URL that this launch of dsh web printed\n",
        );
    }
    let cookie = format!(
        "{}={token}; Path=/; HttpOnly; SameSite=Strict",
        server.fence().cookie_name()
    );
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Any other path: the embedded file of that name.
async fn asset(uri: Uri) -> Response {
    match assets::find(uri.path()) {
        Some((body, content_type)) => page(StatusCode::OK, content_type, body),
        None => page(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            b"not found\n",
        ),
    }
}

fn page(status: StatusCode, content_type: &'static str, body: &'static [u8]) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
