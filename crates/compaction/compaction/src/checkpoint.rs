//! The checkpoint source: how a summary's replacement `user/message` names its origin.

use serde_json::{Map, Value};

/// The source `kind` of a checkpoint.
pub const CHECKPOINT_SOURCE_KIND: &str = "plugin";
/// The source `plugin` of a checkpoint.
pub const CHECKPOINT_SOURCE_PLUGIN: &str = "compact";

/// The checkpoint source `{kind:'plugin', plugin:'compact', compactionId, [sourceCommandId]}`,
/// keys in that order, `sourceCommandId` omitted when `None`.
pub fn compact_checkpoint_source(compaction_id: &str, source_command_id: Option<&str>) -> Value {
    let mut source = Map::new();
    source.insert("kind".into(), CHECKPOINT_SOURCE_KIND.into());
    source.insert("plugin".into(), CHECKPOINT_SOURCE_PLUGIN.into());
    source.insert("compactionId".into(), compaction_id.into());
    if let Some(command) = source_command_id {
        source.insert("sourceCommandId".into(), command.into());
    }
    Value::Object(source)
}

/// Whether a message source is a compaction checkpoint (`kind == 'plugin'` and
/// `plugin == 'compact'`), whichever backend wrote it.
pub fn is_compact_checkpoint_source(source: &Value) -> bool {
    source.get("kind").and_then(Value::as_str) == Some(CHECKPOINT_SOURCE_KIND)
        && source.get("plugin").and_then(Value::as_str) == Some(CHECKPOINT_SOURCE_PLUGIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_optional_command() {
        let plain = compact_checkpoint_source("c1", None);
        assert_eq!(
            serde_json::to_string(&plain).ok().as_deref(),
            Some(r#"{"kind":"plugin","plugin":"compact","compactionId":"c1"}"#)
        );
        let with = compact_checkpoint_source("c1", Some("cmd"));
        assert_eq!(
            serde_json::to_string(&with).ok().as_deref(),
            Some(
                r#"{"kind":"plugin","plugin":"compact","compactionId":"c1","sourceCommandId":"cmd"}"#
            )
        );
        assert!(is_compact_checkpoint_source(&with));
    }

    #[test]
    fn recognition_ignores_backend_identity() {
        assert!(is_compact_checkpoint_source(
            &json!({"plugin": "compact", "kind": "plugin"})
        ));
        assert!(!is_compact_checkpoint_source(
            &json!({"kind": "plugin", "plugin": "other"})
        ));
        assert!(!is_compact_checkpoint_source(&json!({"kind": "user"})));
        assert!(!is_compact_checkpoint_source(&json!("compact")));
    }
}
