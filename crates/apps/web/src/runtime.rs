//! The `dsh-web-app` plugin (row `web-runtime`): serves the browser UI (embedded in the
//! binary), and once the tree has booted prints the URL and opens the default browser.
//!
//! The printed URL carries the per-launch token in its fragment (`/#token=…`), which
//! browsers never send to a server nor put in a `Referer`; the page moves it into storage
//! scoped to this origin (scheme, host and port) and out of the address bar. The browser
//! opener, whose command line any local process can read, gets `/#login=<code>` instead: a
//! one-time code the page trades for the token.

use std::io::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_launch::LOADER;
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
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct WebRuntimeConfig {
    /// Open the default browser once the tree has booted (default true; `--no-open` and an
    /// SSH session turn it off).
    pub open_browser: bool,
    /// Print `dsh web: <url>` once the tree has booted (default true).
    pub print_url: bool,
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

    fn inject(&self) -> &'static [ServiceName] {
        const { &[WEBSERVER.name()] }
    }

    async fn apply(&self, ctx: Context, config: WebRuntimeConfig) -> Result<(), BoxError> {
        let server = ctx.require(&WEBSERVER)?;
        let pages = Router::new()
            .route("/", get(|| asset(Uri::from_static("/index.html"))))
            .fallback(get(asset));
        server.mount(&ctx, "/", pages)?;
        let loader = ctx.get(&LOADER);
        ctx.spawn(async move {
            // The URL is good only once every row (the API among them) has mounted.
            if let Some(loader) = loader {
                loader.settled().await;
            }
            announce(&server, config, &BrowserOpener::default()).await;
        })?;
        Ok(())
    }
}

/// Prints the URL and opens the browser, as the config and the environment allow.
async fn announce(server: &Arc<WebServer>, config: WebRuntimeConfig, opener: &BrowserOpener) {
    let url = format!("{}/#token={}", server.url(), server.token());
    if config.print_url {
        say(&format!("dsh web: {url}"));
    }
    if !config.open_browser {
        return;
    }
    if in_ssh_session() {
        let port = server.addr().port();
        say(&format!(
            "dsh web: not opening a browser in an SSH session; forward the port \
             (ssh -L {port}:127.0.0.1:{port}) and visit the URL"
        ));
        return;
    }
    say("dsh web: opening the default browser; pass --no-open to disable");
    if let Err(reason) = open_signed_in(server, opener).await {
        // A closed stderr leaves nobody to tell; the server keeps serving either way.
        let _ = writeln!(
            std::io::stderr().lock(),
            "web-app: could not open the default browser because {reason}; visit {url} \
             manually"
        );
    }
}

/// Opens the browser on `<url>/#login=<code>`, a fresh one-time code (never the token: the
/// opener's command line is public). The error follows "because".
async fn open_signed_in(server: &WebServer, opener: &BrowserOpener) -> Result<(), String> {
    let code = server
        .login_code()
        .map_err(|error| format!("no login code could be made ({error})"))?;
    opener
        .open(&format!("{}/#login={code}", server.url()))
        .await
}

/// One line on stdout, flushed at once (a script may be waiting for the URL).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
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

#[cfg(test)]
mod tests {
    use dsh_kernel::Kernel;
    use serde_json::{Value, json};

    use super::*;
    use crate::server::WebServerPlugin;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_opener_gets_a_one_time_login_code_and_never_the_token() {
        let kernel = Kernel::new().unwrap();
        kernel
            .root()
            .plugin(WebServerPlugin, json!({"port": 0}))
            .unwrap();
        kernel.settle().await;
        let server = kernel.root().require(&WEBSERVER).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("argv");
        let script = format!("printf %s \"$0\" > {}", seen.display());
        let opener = BrowserOpener::command("sh", &["-c", &script]);
        open_signed_in(&server, &opener).await.unwrap();
        let handed = std::fs::read_to_string(&seen).unwrap_or_default();
        let code = handed
            .strip_prefix(&format!("{}/#login=", server.url()))
            .unwrap_or_else(|| panic!("the opener got {handed:?}"))
            .to_owned();
        assert_eq!(code.len(), 64, "{handed}");
        assert!(!handed.contains(server.token()), "{handed}");

        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let login = || {
            client
                .post(format!("{}/api/login", server.url()))
                .json(&json!({"code": code}))
                .send()
        };
        let first = login().await.unwrap();
        assert_eq!(first.status(), reqwest::StatusCode::OK);
        assert_eq!(
            first
                .headers()
                .get("cache-control")
                .map(axum::http::HeaderValue::as_bytes),
            Some(&b"no-store"[..])
        );
        let body: Value = first.json().await.unwrap_or_default();
        assert_eq!(body, json!({"token": server.token()}));
        let again = login().await.unwrap();
        assert_eq!(again.status(), reqwest::StatusCode::FORBIDDEN);
        let body: Value = again.json().await.unwrap_or_default();
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|error| error.starts_with("login code refused")),
            "{body}"
        );
        kernel.shutdown().await;
    }
}
