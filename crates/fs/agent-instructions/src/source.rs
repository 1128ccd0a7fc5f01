//! The durable vocabulary: scope keys, the changes a message records, its `source`
//! (`{kind:'agent-instructions', form:'instructions', baseline?, baselineIdentity?,
//! changes}`), and what the visible history says about them. State is rebuilt from the
//! session's visible surface, never from prompt prose, so resume and compaction reconcile.

use dsh_protocol::kinds::USER_MESSAGE;
use dsh_protocol::{ContentBlock, Message, MessageSource};
use dsh_session::LiveSession;
use serde_json::{Map, Value, json};

use crate::ordered::OrderedMap;
use crate::paths;

/// The `kind` of the messages this plugin writes.
pub(crate) const SOURCE_KIND: &str = "agent-instructions";
/// The context form of every message it writes.
pub(crate) const SOURCE_FORM: &str = "instructions";
/// The directory part of the user-global file's scope key.
pub(crate) const USER_GLOBAL_DIRECTORY: &str = "user-global";
/// Joins a scope's directory and candidate name; no path or file name contains it.
const SCOPE_SEPARATOR: char = '\0';

/// The key of one candidate file: its directory (`user-global`, `.`, or root-relative) and
/// its name.
pub(crate) fn candidate_scope_key(directory: &str, name: &str) -> String {
    format!("{directory}{SCOPE_SEPARATOR}{name}")
}

/// The directory and the candidate name of a scope key.
pub(crate) fn decode_scope_key(scope: &str) -> (&str, &str) {
    scope.split_once(SCOPE_SEPARATOR).unwrap_or((scope, ""))
}

/// The scope directory of a display path: `user-global` for the home file, else its
/// directory (`.` at the root).
pub(crate) fn scope_for_display_path(display_path: &str) -> String {
    if display_path == "~/.dsh/AGENTS.md" || display_path == "$DSH_HOME/AGENTS.md" {
        USER_GLOBAL_DIRECTORY.to_owned()
    } else {
        paths::dirname(display_path)
    }
}

/// The scope key of a loaded file.
pub(crate) fn instruction_scope_key(display_path: &str) -> String {
    candidate_scope_key(
        &scope_for_display_path(display_path),
        &paths::basename(display_path),
    )
}

/// What a change did to a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// The file's text entered the conversation.
    Set,
    /// Its new text replaced what entered before.
    Replace,
    /// It no longer applies.
    Remove,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "set" => Some(Self::Set),
            "replace" => Some(Self::Replace),
            "remove" => Some(Self::Remove),
            _ => None,
        }
    }
}

/// One recorded transition: `{action, scope, path, digest?}` (the SHA-1 of the whole text,
/// absent on a removal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) action: Action,
    pub(crate) scope: String,
    pub(crate) path: String,
    pub(crate) digest: Option<String>,
}

impl Change {
    /// Whether the scope is active after this change.
    pub(crate) fn is_active(&self) -> bool {
        self.action != Action::Remove
    }

    fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("action".into(), json!(self.action.as_str()));
        map.insert("scope".into(), json!(self.scope));
        map.insert("path".into(), json!(self.path));
        if let Some(digest) = &self.digest {
            map.insert("digest".into(), json!(digest));
        }
        Value::Object(map)
    }

    /// The well-formed changes of a logged `changes` array (malformed entries are skipped).
    fn parse_all(changes: Option<&Value>) -> Vec<Self> {
        let Some(Value::Array(items)) = changes else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| {
                let action = Action::parse(item.get("action")?.as_str()?)?;
                let scope = item.get("scope")?.as_str()?.to_owned();
                let path = item.get("path")?.as_str()?.to_owned();
                let digest = match item.get("digest") {
                    None => None,
                    Some(Value::String(digest)) => Some(digest.clone()),
                    Some(_) => return None,
                };
                Some(Self {
                    action,
                    scope,
                    path,
                    digest,
                })
            })
            .collect()
    }
}

/// The source of a message this plugin writes; `baseline_identity` marks a baseline.
pub(crate) fn message_source(baseline_identity: Option<&str>, changes: &[Change]) -> MessageSource {
    let mut map = Map::new();
    map.insert("kind".into(), json!(SOURCE_KIND));
    map.insert("form".into(), json!(SOURCE_FORM));
    if let Some(identity) = baseline_identity {
        map.insert("baseline".into(), json!(true));
        map.insert("baselineIdentity".into(), json!(identity));
    }
    map.insert(
        "changes".into(),
        Value::Array(changes.iter().map(Change::to_json).collect()),
    );
    MessageSource::Other(map)
}

/// A user message with `texts` as its text blocks and a source of this plugin.
pub(crate) fn instructions_message(
    texts: Vec<String>,
    baseline_identity: Option<&str>,
    changes: &[Change],
) -> Message {
    Message::user(
        texts.into_iter().map(ContentBlock::text).collect(),
        message_source(baseline_identity, changes),
    )
}

/// What an `agent-instructions` source says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceView {
    /// It is a complete baseline.
    pub(crate) baseline: bool,
    /// The baseline's identity.
    pub(crate) baseline_identity: Option<String>,
    /// Its changes.
    pub(crate) changes: Vec<Change>,
}

impl SourceView {
    /// The view of `source` when it is this plugin's.
    pub(crate) fn read(source: &Value) -> Option<Self> {
        if source.get("kind")?.as_str()? != SOURCE_KIND {
            return None;
        }
        Some(Self {
            baseline: source.get("baseline") == Some(&Value::Bool(true)),
            baseline_identity: source
                .get("baselineIdentity")
                .and_then(Value::as_str)
                .map(str::to_owned),
            changes: Change::parse_all(source.get("changes")),
        })
    }

    /// The view of a typed message's source.
    pub(crate) fn of_message(message: &Message) -> Option<Self> {
        serde_json::to_value(&message.source)
            .ok()
            .and_then(|source| Self::read(&source))
    }
}

/// The sources of this plugin's visible `user/message`s: in surface (model) order, and in log
/// order.
fn visible_sources(session: &LiveSession) -> (Vec<SourceView>, Vec<SourceView>) {
    session.with(|session| {
        let events = session.events();
        let view = |seq: u64| {
            let event = events.get(usize::try_from(seq).ok()?)?;
            if event.kind != USER_MESSAGE {
                return None;
            }
            SourceView::read(event.data.get("source")?)
        };
        let nodes = session.surface().nodes();
        let by_surface = nodes.iter().filter_map(|seq| view(*seq)).collect();
        let mut seqs = nodes.to_vec();
        seqs.sort_unstable();
        let by_log = seqs.into_iter().filter_map(view).collect();
        (by_surface, by_log)
    })
}

/// What the model currently sees: its visible history plus the messages `authority` is
/// about to add (the step's claimed messages).
pub(crate) struct VisibleState {
    /// The most recent visible baseline (authority first, then the surface from its end).
    pub(crate) baseline: Option<SourceView>,
    /// The latest change of every scope (history in log order, then authority), in
    /// first-seen order.
    pub(crate) changes: OrderedMap<Change>,
}

impl VisibleState {
    /// Reads `session`'s surface together with `authority`.
    pub(crate) fn read(session: &LiveSession, authority: &[Message]) -> Self {
        let (by_surface, by_log) = visible_sources(session);
        let authority: Vec<SourceView> = authority
            .iter()
            .filter_map(SourceView::of_message)
            .collect();
        let baseline = authority
            .iter()
            .rev()
            .chain(by_surface.iter().rev())
            .find(|view| view.baseline)
            .cloned();
        let mut changes = OrderedMap::default();
        for view in by_log.iter().chain(&authority) {
            for change in &view.changes {
                changes.insert(change.scope.clone(), change.clone());
            }
        }
        Self { baseline, changes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_keys_pair_a_directory_with_a_name() {
        assert_eq!(instruction_scope_key("AGENTS.md"), ".\0AGENTS.md");
        assert_eq!(instruction_scope_key("a/b/CLAUDE.md"), "a/b\0CLAUDE.md");
        assert_eq!(
            instruction_scope_key("~/.dsh/AGENTS.md"),
            "user-global\0AGENTS.md"
        );
        assert_eq!(
            instruction_scope_key("$DSH_HOME/AGENTS.md"),
            "user-global\0AGENTS.md"
        );
        assert_eq!(
            decode_scope_key("nested\0AGENTS.md"),
            ("nested", "AGENTS.md")
        );
    }

    #[test]
    fn a_source_is_written_in_dshs_key_order_and_read_back() {
        let changes = [
            Change {
                action: Action::Set,
                scope: ".\0AGENTS.md".into(),
                path: "AGENTS.md".into(),
                digest: Some("d".into()),
            },
            Change {
                action: Action::Remove,
                scope: "x\0AGENTS.md".into(),
                path: "x/AGENTS.md".into(),
                digest: None,
            },
        ];
        let source = serde_json::to_value(message_source(Some("{}"), &changes)).unwrap();
        assert_eq!(
            source.to_string(),
            r#"{"kind":"agent-instructions","form":"instructions","baseline":true,"baselineIdentity":"{}","changes":[{"action":"set","scope":".\u0000AGENTS.md","path":"AGENTS.md","digest":"d"},{"action":"remove","scope":"x\u0000AGENTS.md","path":"x/AGENTS.md"}]}"#
        );
        let view = SourceView::read(&source).unwrap();
        assert!(view.baseline);
        assert_eq!(view.changes, changes);
        let update = serde_json::to_value(message_source(None, &[])).unwrap();
        assert_eq!(
            update,
            json!({"kind": "agent-instructions", "form": "instructions", "changes": []})
        );
    }

    #[test]
    fn malformed_changes_and_other_sources_are_ignored() {
        let source = json!({"kind": "agent-instructions", "changes": [
            {"action": "set", "scope": "s", "path": "p"},
            {"action": "bogus", "scope": "s", "path": "p"},
            {"action": "set", "scope": 1, "path": "p"},
            {"action": "set", "scope": "s", "path": "p", "digest": 5},
            "nonsense",
        ]});
        assert_eq!(SourceView::read(&source).unwrap().changes.len(), 1);
        assert!(SourceView::read(&json!({"kind": "plugin", "changes": []})).is_none());
    }
}
