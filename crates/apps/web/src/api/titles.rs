//! Titles of live sessions for the session list: the last `session/title`, else the first
//! line of the first message the user typed. Each session's log is read once: a list
//! request reads only the events logged since the previous one.

use std::collections::HashMap;
use std::sync::Mutex;

use dsh_kernel::sync::lock;
use dsh_protocol::kinds;
use dsh_session::LiveSession;
use serde_json::Value;

/// The longest title the list gives, in characters.
const TITLE_CHARS: usize = 60;

/// What the log said so far, and how far it was read.
#[derive(Default)]
struct Seen {
    /// Events read.
    read: usize,
    /// The last `session/title`.
    titled: Option<String>,
    /// The first line the user typed.
    typed: Option<String>,
}

/// The titles of live sessions, kept up to date incrementally.
#[derive(Default)]
pub(crate) struct Titles {
    seen: Mutex<HashMap<String, Seen>>,
}

impl Titles {
    /// `session`'s title, reading only what was logged since the last call.
    pub(crate) fn of(&self, session: &LiveSession) -> Option<String> {
        let mut seen = lock(&self.seen);
        let entry = seen.entry(session.id().to_owned()).or_default();
        session.with(|log| {
            let events = log.events();
            for event in events.get(entry.read..).unwrap_or_default() {
                match &*event.kind {
                    kinds::SESSION_TITLE => {
                        if let Some(title) = event.data.get("title").and_then(Value::as_str) {
                            entry.titled = Some(title.to_owned());
                        }
                    }
                    kinds::USER_MESSAGE if entry.typed.is_none() => {
                        entry.typed = typed_line(&event.data);
                    }
                    _ => {}
                }
            }
            entry.read = events.len();
        });
        entry.titled.clone().or_else(|| entry.typed.clone())
    }

    /// Forgets the sessions that are no longer live.
    pub(crate) fn keep_only(&self, live: &[String]) {
        lock(&self.seen).retain(|id, _| live.contains(id));
    }
}

/// The first line of a message the user typed (not a plugin's or the runtime's).
fn typed_line(message: &Value) -> Option<String> {
    if message.pointer("/source/kind").and_then(Value::as_str) != Some("user") {
        return None;
    }
    message
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|block| block.get("text").and_then(Value::as_str))
        .map(first_line)
}

/// The first non-blank line of `text`, cut to [`TITLE_CHARS`] characters with an ellipsis.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_typed_line_cut_to_size() {
        assert_eq!(first_line("\n  fix the build \nthen test"), "fix the build");
        let long = "x".repeat(80);
        let cut = first_line(&long);
        assert_eq!(cut.chars().count(), TITLE_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(first_line(""), "");
    }
}
