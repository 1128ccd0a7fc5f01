//! The canonical values of both tools (what `tool/result` keeps and post-execute listeners may
//! replace) and their output schemas.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `glob`'s value: the search root as shown, and every path found, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobValue {
    /// `.` without a `path` argument, else the argument made workdir-relative.
    pub root: String,
    /// Every file found, workdir-relative where possible.
    pub paths: Vec<String>,
}

/// `grep`'s value: every match found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepValue {
    /// The matches, each file's together and in line order.
    pub matches: Vec<GrepMatch>,
}

/// One matched line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrepMatch {
    /// The file, workdir-relative where possible.
    pub path: String,
    /// The 1-based line number.
    pub line_number: u64,
    /// The whole line without its terminator, or `(line is not valid UTF-8)`.
    pub line: String,
}

/// The line text shown for a matched line that is not valid UTF-8.
pub const NOT_UTF8_LINE: &str = "(line is not valid UTF-8)";

/// dsh's output schema of `glob`.
pub fn glob_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "root": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["root", "paths"]
    })
}

/// dsh's output schema of `grep`.
pub fn grep_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "path": {"type": "string"},
                        "lineNumber": {"type": "integer"},
                        "line": {"type": "string"}
                    },
                    "required": ["path", "lineNumber", "line"]
                }
            }
        },
        "required": ["matches"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_serialize_with_dshs_keys() {
        let value = GrepValue {
            matches: vec![GrepMatch {
                path: "a.ts".into(),
                line_number: 3,
                line: "x".into(),
            }],
        };
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"matches":[{"path":"a.ts","lineNumber":3,"line":"x"}]}"#
        );
        let glob: GlobValue = serde_json::from_value(json!({"root": ".", "paths": ["a"]})).unwrap();
        assert_eq!(glob.paths, ["a"]);
    }
}
