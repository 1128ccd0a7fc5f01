//! `dsh sessions`: list, show, export, verify and convert stored sessions.
//!
//! Boots only the session store and persistence rows of the chosen profile, so the same
//! `--profile`/`--patch` that pick a store for a run pick it here. Nothing here writes to the
//! profile's store: reads go through `inspect`/`read_from`, which repair torn tails and open
//! turns in memory only. `convert` writes, but only to the destination store it builds.

mod convert;
mod destination;
mod list;
mod transcript;
mod verify;

use std::path::Path;

use anyhow::Context as _;
use dsh_persistence::log_file::header_line::header_line;
use dsh_persistence::{SESSION_PERSISTENCE, SessionPersistence};
use dsh_protocol::json::to_js_string;
use dsh_session::Canonical;

use self::destination::Destination;
use crate::args::sessions::SessionsAction;
use crate::output;
use crate::subset::with_rows;

/// Plugins `dsh sessions` boots: the store and any persistence provider (every
/// `dsh-persistence*` row).
fn is_storage_row(plugin: &str) -> bool {
    plugin == dsh_session::PLUGIN_NAME || plugin.starts_with(crate::builtins::PERSISTENCE_PREFIX)
}

/// Runs one `dsh sessions` action; returns the exit code.
pub fn run(profile: &str, patches: &[String], action: &SessionsAction) -> anyhow::Result<i32> {
    // Reading sessions needs timers at most, never sockets.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(with_rows(
        profile,
        patches,
        is_storage_row,
        "the session store",
        |ctx, home| async move {
            match ctx.get(&SESSION_PERSISTENCE) {
                None => Err(anyhow::anyhow!(
                    "profile \"{profile}\" has no session persistence row (such as \
                     session-persistence-jsonl or session-persistence-sqlite)"
                )),
                Some(store) => act(store.as_ref(), action, &home).await,
            }
        },
    ))
}

async fn act(
    store: &dyn SessionPersistence,
    action: &SessionsAction,
    home: &Path,
) -> anyhow::Result<i32> {
    match action {
        SessionsAction::List { json } => list::list(store, *json).await,
        SessionsAction::Show { id } => {
            let inspection = store.inspect(id).await?;
            output::stdout(&transcript::render(&inspection));
            Ok(0)
        }
        SessionsAction::Export { id } => {
            let inspection = store.inspect(id).await?;
            let mut text = header_line(&inspection.header);
            text.push('\n');
            for event in &inspection.events {
                text.push_str(&to_js_string(&Canonical(event)));
                text.push('\n');
            }
            output::stdout(&text);
            Ok(0)
        }
        SessionsAction::Verify { id } => verify::verify(store, id.as_deref()).await,
        SessionsAction::Convert { to, path, root, id } => {
            let cwd = std::env::current_dir().context("cannot read the working directory")?;
            let location = path.as_deref().or(root.as_deref());
            let destination = Destination::open(*to, location, home, &cwd)?;
            convert::convert(store, &destination, id.as_deref()).await
        }
    }
}
