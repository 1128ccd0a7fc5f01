//! `dsh sessions list`: one line (or JSON object) per stored session, and every log that
//! cannot be read reported on stderr with its path and the reason. A bad log never hides the
//! healthy ones; it only makes the exit code 1, at the end.

use dsh_persistence::{SessionListing, SessionPersistence, UnreadableSession};
use dsh_protocol::json::to_js_string;
use serde_json::{Map, Value};

use super::transcript;
use crate::output;

/// Lists every session of `store`, oldest first, then the unreadable artifacts; returns the
/// exit code (1 when any log could not be read).
pub async fn list(store: &dyn SessionPersistence, json: bool) -> anyhow::Result<i32> {
    let SessionListing {
        mut sessions,
        mut unreadable,
    } = store.list_with_unreadable().await?;
    sessions.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    sort_unreadable(&mut unreadable);
    let mut bad = 0_usize;
    let mut text = String::new();
    if !json && !sessions.is_empty() {
        text.push_str("ID\tCREATED\tCWD\tEVENTS\n");
    }
    for header in sessions {
        let events = store
            .read_from(&header.id, 0)
            .await
            .map(|events| events.len());
        if let Err(error) = &events {
            bad += 1;
            output::diagnostic(&error.to_string());
        }
        if json {
            let mut object = serde_json::to_value(&header)?;
            if let Some(map) = object.as_object_mut() {
                let count = events.as_ref().map_or(Value::Null, |n| (*n).into());
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
    for artifact in &unreadable {
        bad += 1;
        output::diagnostic(&artifact.error);
        if json {
            text.push_str(&to_js_string(&unreadable_row(artifact)));
            text.push('\n');
        }
    }
    output::stdout(&text);
    Ok(if bad == 0 { 0 } else { 1 })
}

/// Orders unreadable artifacts by path, then id, so runs print them alike.
pub fn sort_unreadable(unreadable: &mut [UnreadableSession]) {
    unreadable.sort_by(|a, b| (&a.path, &a.id).cmp(&(&b.path, &b.id)));
}

/// The `--json` row of an unreadable artifact: its id when the store names one, its path,
/// `"events": null` and the error.
fn unreadable_row(artifact: &UnreadableSession) -> Value {
    let mut row = Map::new();
    if let Some(id) = &artifact.id {
        row.insert("id".into(), id.clone().into());
    }
    if let Some(path) = &artifact.path {
        row.insert("path".into(), path.display().to_string().into());
    }
    row.insert("events".into(), Value::Null);
    row.insert("error".into(), artifact.error.clone().into());
    Value::Object(row)
}
