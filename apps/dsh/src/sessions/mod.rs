//! `dsh sessions`: list, show, export, verify and convert stored sessions.
//!
//! Boots only the session store and persistence rows of the chosen profile, so the same
//! `--profile`/`--patch` that pick a store for a run pick it here. Nothing here writes to the
//! profile's store: reads go through `inspect`/`read_from`, which repair torn tails and open
//! turns in memory only. `convert` writes, but only to the destination store it builds.

mod convert;
mod destination;
mod transcript;

use std::path::Path;

use anyhow::Context as _;
use dsh_persistence::{SESSION_PERSISTENCE, SessionPersistence};
use dsh_persistence_jsonl::header_line::header_line;
use dsh_session::Canonical;
use dsh_session::json::to_js_string;

use self::destination::Destination;
use crate::args::SessionsAction;
use crate::output;
use crate::subset::with_rows;

/// Plugins `dsh sessions` boots: the store and any persistence provider.
fn is_storage_row(plugin: &str) -> bool {
    plugin == "dsh-session" || plugin.starts_with("dsh-persistence")
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
        SessionsAction::List { json } => list(store, *json).await,
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
        SessionsAction::Verify { id } => verify(store, id.as_deref()).await,
        SessionsAction::Convert { to, path, root, id } => {
            let cwd = std::env::current_dir().context("cannot read the working directory")?;
            let location = path.as_deref().or(root.as_deref());
            let destination = Destination::open(*to, location, home, &cwd)?;
            convert::convert(store, &destination, id.as_deref()).await
        }
    }
}

async fn list(store: &dyn SessionPersistence, json: bool) -> anyhow::Result<i32> {
    let mut headers = store.list().await?;
    headers.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let mut text = String::new();
    if !json && !headers.is_empty() {
        text.push_str("ID\tCREATED\tCWD\tEVENTS\n");
    }
    for header in headers {
        let events = store
            .read_from(&header.id, 0)
            .await
            .map(|events| events.len());
        if json {
            let mut object = serde_json::to_value(&header)?;
            if let Some(map) = object.as_object_mut() {
                let count = events
                    .as_ref()
                    .map_or(serde_json::Value::Null, |n| (*n).into());
                map.insert("events".into(), count);
                if let Err(error) = &events {
                    map.insert("error".into(), error.to_string().into());
                }
            }
            text.push_str(&to_js_string(&object));
        } else {
            let count = events.map_or_else(|_| "unreadable".to_owned(), |n| n.to_string());
            text.push_str(&format!(
                "{}\t{}\t{}\t{count}",
                header.id,
                transcript::iso_time(header.created_at),
                header.cwd.as_deref().unwrap_or("-")
            ));
        }
        text.push('\n');
    }
    output::stdout(&text);
    Ok(0)
}

async fn verify(store: &dyn SessionPersistence, id: Option<&str>) -> anyhow::Result<i32> {
    let ids = match id {
        Some(id) => vec![id.to_owned()],
        None => {
            let mut ids: Vec<String> = store.list().await?.into_iter().map(|h| h.id).collect();
            ids.sort();
            ids
        }
    };
    let mut bad = 0;
    let mut text = String::new();
    for id in &ids {
        match store.inspect(id).await {
            Ok(inspection) => {
                text.push_str(&format!("ok\t{id}\t{} events\n", inspection.events.len()));
            }
            Err(error) => {
                bad += 1;
                output::diagnostic(&error.to_string());
                text.push_str(&format!("bad\t{id}\n"));
            }
        }
    }
    output::stdout(&text);
    Ok(if bad == 0 { 0 } else { 1 })
}
