//! The `dsh-web-app` plugin (row `web-runtime`): serves the browser UI (embedded in the
//! binary), and once the tree has booted prints the URL and opens the default browser.
//!
//! The URL carries the per-launch token in its fragment (`/#token=…`), which browsers never
//! send to a server nor put in a `Referer`; the page moves it into storage scoped to this
//! origin (scheme, host and port) and out of the address bar.

use std::io::Write as _;

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use dsh_compose::launch::LOADER;
use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::assets;
use crate::opener::{BrowserOpener, LaunchPage, in_ssh_session};
use crate::server::WEBSERVER;

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

    fn inject(&self) -> &'static [&'static str] {
        &["webserver"]
    }

    async fn apply(&self, ctx: Context, config: WebRuntimeConfig) -> Result<(), BoxError> {
        let server = ctx.require(&WEBSERVER)?;
        let pages = Router::new()
            .route("/", get(|| asset(Uri::from_static("/index.html"))))
            .fallback(get(asset));
        server.mount(&ctx, "/", pages)?;
        let url = format!("{}/#token={}", server.url(), server.token());
        let port = server.addr().port();
        let loader = ctx.get(&LOADER);
        ctx.spawn(async move {
            // The URL is good only once every row (the API among them) has mounted.
            if let Some(loader) = loader {
                loader.settled().await;
            }
            let _page = announce(&url, port, config, &BrowserOpener::default()).await;
            // The page the browser was handed lives until the row unloads, which aborts
            // this task and so removes it.
            std::future::pending::<()>().await;
        })?;
        Ok(())
    }
}

/// Prints the URL and hands it to the browser, as the config and the environment allow;
/// returns the launch page the browser was given, if any.
async fn announce(
    url: &str,
    port: u16,
    config: WebRuntimeConfig,
    opener: &BrowserOpener,
) -> Option<LaunchPage> {
    if config.print_url {
        say(&format!("dsh web: {url}"));
    }
    if !config.open_browser {
        return None;
    }
    if in_ssh_session() {
        say(&format!(
            "dsh web: not opening a browser in an SSH session; forward the port \
             (ssh -L {port}:127.0.0.1:{port}) and visit the URL"
        ));
        return None;
    }
    say("dsh web: opening the default browser; pass --no-open to disable");
    match opener.open(url).await {
        Ok(page) => page,
        Err(reason) => {
            // A closed stderr leaves nobody to tell; the server keeps serving either way.
            let _ = writeln!(
                std::io::stderr().lock(),
                "web-app: could not open the default browser because {reason}; visit {url} \
                 manually"
            );
            None
        }
    }
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
