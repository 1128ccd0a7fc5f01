//! `dsh sessions verify [<id>]`: read and validate one log or every log of the store, the
//! ones that cannot even be listed (a damaged header, a FIFO in place of a log) included.

use dsh_persistence::{SessionListing, SessionPersistence, UnreadableSession};

use super::list::sort_unreadable;
use crate::output;

/// What one line of the report is about.
enum Subject {
    /// A listed session, read in full.
    Session(String),
    /// An artifact the listing could not read.
    Unreadable(UnreadableSession),
}

impl Subject {
    /// How the report names it: the id, or the path when no id is known.
    fn label(&self) -> String {
        match self {
            Self::Session(id) => id.clone(),
            Self::Unreadable(artifact) => match (&artifact.id, &artifact.path) {
                (Some(id), _) => id.clone(),
                (None, Some(path)) => path.display().to_string(),
                (None, None) => "(unknown)".to_owned(),
            },
        }
    }
}

/// Verifies `id`, or every session and unreadable artifact; prints `ok <id> <n> events` or
/// `bad <id>` (the reason on stderr) for each; returns 1 if any is bad.
pub async fn verify(store: &dyn SessionPersistence, id: Option<&str>) -> anyhow::Result<i32> {
    let subjects = match id {
        Some(id) => vec![Subject::Session(id.to_owned())],
        None => {
            let SessionListing {
                mut sessions,
                mut unreadable,
            } = store.list_with_unreadable().await?;
            sessions.sort_by(|a, b| a.id.cmp(&b.id));
            sort_unreadable(&mut unreadable);
            let mut subjects: Vec<Subject> = sessions
                .into_iter()
                .map(|header| Subject::Session(header.id))
                .chain(unreadable.into_iter().map(Subject::Unreadable))
                .collect();
            subjects.sort_by_cached_key(Subject::label);
            subjects
        }
    };
    let mut bad = 0;
    let mut text = String::new();
    for subject in &subjects {
        let label = subject.label();
        let outcome = match subject {
            Subject::Session(id) => store
                .inspect(id)
                .await
                .map(|inspection| inspection.events.len())
                .map_err(|error| error.to_string()),
            Subject::Unreadable(artifact) => Err(artifact.error.clone()),
        };
        match outcome {
            Ok(events) => text.push_str(&format!("ok\t{label}\t{events} events\n")),
            Err(reason) => {
                bad += 1;
                output::diagnostic(&reason);
                text.push_str(&format!("bad\t{label}\n"));
            }
        }
    }
    output::stdout(&text);
    Ok(if bad == 0 { 0 } else { 1 })
}
