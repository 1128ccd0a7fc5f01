//! The dsh web host (dsh's `dsh-web-app` startup and `dsh-host-webserver`): the web app's
//! command line, and a loopback HTTP server that other rows mount routes on.
//!
//! - [`WebStartupPlugin`] (row `web-startup`) parses `--host`, `--port`, `--trusted-host`
//!   and `--no-open` and provides `webStartup`.
//! - [`WebServerPlugin`] (row `webserver`) listens on `127.0.0.1` (never a wildcard address)
//!   and provides `webserver` ([`WebServer`]). Before any route runs, each request passes the
//!   [`Fence`]: its `Host` must be this server's (or a `--trusted-host`), an `Origin` must be
//!   this server's, everything under `/api/` needs the per-launch token (header
//!   `x-dsh-token` or `Authorization: Bearer`; a `GET` may carry it as `?token=`; never a
//!   cookie), and a body over the limit (1 MiB) is refused with 413. No CORS headers are ever
//!   sent. `GET /api/health` answers `{"ok": true}`; `POST /api/login` trades a one-time
//!   login code for the token. Connections must send their request head in time, are closed
//!   when idle, and at most `maxConnections` are open at once.
//!
//! - [`ApiPlugin`] (row `api-gateway`) mounts the session API (`docs/web-api.md`): list
//!   sessions, create an agent, send a message, cancel, resume, answer an approval question,
//!   and a live event stream.
//! - [`WebRuntimePlugin`] (row `web-runtime`) serves the browser UI embedded from `ui/`,
//!   prints `dsh web: <url>/#token=<token>` once the tree has booted and opens the default
//!   browser ([`BrowserOpener`]) on `<url>/#login=<code>`, a one-time code the page trades
//!   for the token; the page keeps the token from the URL's fragment.

mod api;
mod assets;
mod conn;
mod fence;
mod login;
mod opener;
mod runtime;
mod secret;
mod server;
mod startup;

pub use api::{API_PLUGIN_NAME, ApiConfig, ApiPlugin};
pub use conn::limits::{
    DEFAULT_HEADER_READ_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS,
};
pub use fence::{Fence, Refusal, TOKEN_HEADER, TOKEN_QUERY};
pub use login::{LOGIN_CODE_TTL, LOGIN_PATH};
pub use opener::BrowserOpener;
pub use runtime::{RUNTIME_PLUGIN_NAME, WebRuntimeConfig, WebRuntimePlugin};
pub use server::{
    DEFAULT_MAX_BODY_BYTES, SERVER_PLUGIN_NAME, WEBSERVER, WebServer, WebServerConfig,
    WebServerPlugin,
};
pub use startup::{
    ParsedWeb, STARTUP_PLUGIN_NAME, WEB_STARTUP, WILDCARD_REFUSAL, WebStartup, WebStartupConfig,
    WebStartupPlugin, parse,
};
