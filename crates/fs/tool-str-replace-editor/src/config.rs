//! The row config of `dsh-tool-str-replace-editor` and its checks.

use serde::Deserialize;

use crate::js::is_blank;
use crate::schema::DEFAULT_DESCRIPTION;

/// How many UTF-16 code units a view returns before it is clipped, by default.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 16_000;

/// JavaScript's `Number.MAX_SAFE_INTEGER` (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Row config of `dsh-tool-str-replace-editor` (dsh's keys).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StrReplaceEditorConfig {
    /// The most UTF-16 code units a view returns before it is clipped (default 16000; a
    /// positive safe integer).
    pub max_output_chars: Option<f64>,
    /// The model-facing tool description (default: the built-in command guide; must not be
    /// blank).
    pub description: Option<String>,
}

/// A checked config: the values the tool runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditorSettings {
    /// The clipping limit, in UTF-16 code units.
    pub max_output_chars: usize,
    /// The tool description.
    pub description: String,
}

impl StrReplaceEditorConfig {
    /// The values with defaults filled in, or dsh's load error.
    pub(crate) fn settings(&self) -> Result<EditorSettings, String> {
        let max = self
            .max_output_chars
            .unwrap_or(DEFAULT_MAX_OUTPUT_CHARS as f64);
        if !(max.fract() == 0.0 && max > 0.0 && max <= MAX_SAFE_INTEGER) {
            return Err(
                "tool-str-replace-editor: maxOutputChars must be a positive safe integer".into(),
            );
        }
        let description = self
            .description
            .clone()
            .unwrap_or_else(|| DEFAULT_DESCRIPTION.to_owned());
        if is_blank(&description) {
            return Err("tool-str-replace-editor: description must be non-empty".into());
        }
        Ok(EditorSettings {
            // A safe integer fits a 64-bit usize; elsewhere the limit saturates.
            max_output_chars: usize::try_from(max as u64).unwrap_or(usize::MAX),
            description,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn settings(config: serde_json::Value) -> Result<EditorSettings, String> {
        serde_json::from_value::<StrReplaceEditorConfig>(config)
            .map_err(|error| error.to_string())?
            .settings()
    }

    #[test]
    fn defaults_and_checks() {
        let defaults = settings(json!({})).unwrap();
        assert_eq!(defaults.max_output_chars, 16_000);
        assert_eq!(defaults.description, DEFAULT_DESCRIPTION);
        assert_eq!(
            settings(json!({"maxOutputChars": 10, "description": "mine"})).unwrap(),
            EditorSettings {
                max_output_chars: 10,
                description: "mine".into()
            }
        );
        let bad_max = "tool-str-replace-editor: maxOutputChars must be a positive safe integer";
        for max in [
            json!(0),
            json!(-3),
            json!(1.5),
            json!(9_007_199_254_740_992_u64),
        ] {
            assert_eq!(
                settings(json!({"maxOutputChars": max})).unwrap_err(),
                bad_max
            );
        }
        assert_eq!(
            settings(json!({"maxOutputChars": 9_007_199_254_740_991_u64}))
                .unwrap()
                .max_output_chars,
            9_007_199_254_740_991
        );
        assert_eq!(
            settings(json!({"description": " \n\t"})).unwrap_err(),
            "tool-str-replace-editor: description must be non-empty"
        );
        assert!(settings(json!({"maxChars": 3})).is_err());
    }
}
