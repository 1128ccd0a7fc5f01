//! What the model is told about `str_replace_editor`: its name, the default description and
//! the parameter and output schemas.
//!
//! The parameters have dsh's shape exactly (property names and order, types, the `command`
//! enum, the `view_range` items, `required`); the description texts are this port's own
//! wording of the same facts.

use serde_json::{Value, json};

/// The tool's name.
pub const TOOL_NAME: &str = "str_replace_editor";

/// The default tool description (config `description` replaces it).
pub const DEFAULT_DESCRIPTION: &str = "\
A file tool with four commands for looking at, creating and changing files by absolute path.
* Changes persist on disk from one call to the next and across the conversation with the user
* `view` on a file shows it with line numbers, much like `cat -n`; `view` on a directory lists the files and directories inside it up to 2 levels deep, leaving out hidden entries
* `create` refuses to run when a file already exists at `path`
* Output that is too long is cut short and ends with `<response clipped>`

How to use `str_replace`:
* `old_str` must match the original file EXACTLY, as one or more whole consecutive lines: every space and tab counts
* Nothing is replaced when `old_str` occurs more than once; include enough surrounding lines to make it occur only once
* `new_str` holds the lines that take the place of `old_str`";

/// The commands, in dsh's order.
pub const COMMANDS: [&str; 4] = ["view", "create", "str_replace", "insert"];

/// The compiled parameter schema: an open object (extra keys are accepted and ignored).
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "Which command to run: one of `view`, `create`, `str_replace` or \
                    `insert`.",
                "enum": COMMANDS
            },
            "path": {
                "type": "string",
                "description": "The absolute path of a file or directory, such as \
                    `/repo/file.py` or `/repo`."
            },
            "file_text": {
                "type": "string",
                "description": "For `create` (required there): the whole content of the new \
                    file."
            },
            "insert_line": {
                "type": "integer",
                "description": "For `insert` (required there): the line of `path` after which \
                    `new_str` goes; 0 inserts before the first line."
            },
            "new_str": {
                "type": "string",
                "description": "For `str_replace` (optional; left out, the match is simply \
                    removed): the replacement text. For `insert` (required there): the text to \
                    insert."
            },
            "old_str": {
                "type": "string",
                "description": "For `str_replace` (required there): the exact text in `path` \
                    to replace."
            },
            "view_range": {
                "type": "array",
                "description": "For `view` of a file (optional; without it the whole file is \
                    shown): the first and last line to show, counting from 1, so [11, 12] shows \
                    lines 11 and 12. Use `[start_line, -1]` to show everything from \
                    `start_line` to the end of the file.",
                "items": {"type": "integer"}
            }
        },
        "required": ["command", "path"]
    })
}

/// The output schema: the text the model reads.
pub fn output_schema() -> Value {
    json!({"type": "string"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_is_dshs() {
        let schema = parameters();
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "command",
                "path",
                "file_text",
                "insert_line",
                "new_str",
                "old_str",
                "view_range"
            ]
        );
        let command: Vec<&String> = schema["properties"]["command"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(command, ["type", "description", "enum"]);
        assert_eq!(schema["required"], json!(["command", "path"]));
        assert!(dsh_tools::schema::schema_violations(&schema, "parameters").is_empty());
        assert!(!DEFAULT_DESCRIPTION.starts_with('\n') && !DEFAULT_DESCRIPTION.ends_with('\n'));
    }
}
