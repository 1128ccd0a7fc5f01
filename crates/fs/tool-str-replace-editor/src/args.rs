//! A call's arguments, read from the JSON the registry has already validated against the
//! schema, and dsh's per-command "required" checks.
//!
//! The registry refuses arguments of the wrong type before the tool runs, so the type checks
//! here only guard against a caller that bypasses it; they answer with the registry's texts.

use dsh_tools::ToolError;
use serde_json::{Map, Value};

use crate::schema::COMMANDS;

/// The four commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Show a file or list a directory.
    View,
    /// Create a new file.
    Create,
    /// Replace one unique occurrence.
    StrReplace,
    /// Insert text after a line.
    Insert,
}

impl Command {
    /// dsh's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Create => "create",
            Self::StrReplace => "str_replace",
            Self::Insert => "insert",
        }
    }
}

/// The arguments of one call. Numbers stay `f64`, as in JavaScript: the range checks and
/// their texts work on the numbers as sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EditorArgs {
    /// The command.
    pub command: Command,
    /// The path as sent (it must be absolute).
    pub path: String,
    /// `create`'s content.
    pub file_text: Option<String>,
    /// `insert`'s line.
    pub insert_line: Option<f64>,
    /// The replacement (`str_replace`) or inserted text (`insert`).
    pub new_str: Option<String>,
    /// The text to replace.
    pub old_str: Option<String>,
    /// `view`'s range, checked by the view itself.
    pub view_range: Option<Vec<f64>>,
}

impl EditorArgs {
    /// Reads the arguments of a call.
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let empty = Map::new();
        let map = args.as_object().unwrap_or(&empty);
        let command_name = required_string(map, "command")?;
        let command = match command_name.as_str() {
            "view" => Command::View,
            "create" => Command::Create,
            "str_replace" => Command::StrReplace,
            "insert" => Command::Insert,
            _ => {
                return Err(violation(format!(
                    "\"command\" must be one of {}",
                    dsh_protocol::json::to_js_string(&COMMANDS)
                )));
            }
        };
        let view_range = match map.get("view_range") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| integer(item, &format!("view_range[{index}]")))
                    .collect::<Result<Vec<f64>, ToolError>>()?,
            ),
            Some(_) => return Err(violation("\"view_range\" must be an array".to_owned())),
        };
        Ok(Self {
            command,
            path: required_string(map, "path")?,
            file_text: optional_string(map, "file_text")?,
            insert_line: map
                .get("insert_line")
                .map(|value| integer(value, "insert_line"))
                .transpose()?,
            new_str: optional_string(map, "new_str")?,
            old_str: optional_string(map, "old_str")?,
            view_range,
        })
    }
}

/// The value of `parameter`, which `command` requires: ``Parameter `<p>` is required for
/// command: <c>``; with `allow_empty` false an empty string is refused too (``Parameter `<p>`
/// is empty for command: <c>``).
pub(crate) fn required_for_command<'a>(
    value: Option<&'a str>,
    parameter: &str,
    command: Command,
    allow_empty: bool,
) -> Result<&'a str, ToolError> {
    let command = command.as_str();
    let Some(value) = value else {
        return Err(ToolError::new(format!(
            "Parameter `{parameter}` is required for command: {command}"
        )));
    };
    if !allow_empty && value.is_empty() {
        return Err(ToolError::new(format!(
            "Parameter `{parameter}` is empty for command: {command}"
        )));
    }
    Ok(value)
}

fn violation(text: String) -> ToolError {
    ToolError::invalid_args(&[text])
}

fn required_string(map: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
    optional_string(map, key)?
        .ok_or_else(|| violation(format!("missing required property \"{key}\"")))
}

fn optional_string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(violation(format!("\"{key}\" must be a string"))),
    }
}

fn integer(value: &Value, path: &str) -> Result<f64, ToolError> {
    value
        .as_f64()
        .filter(|number| number.fract() == 0.0)
        .ok_or_else(|| violation(format!("\"{path}\" must be an integer")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_are_read_as_sent() {
        let args = EditorArgs::parse(&json!({
            "command": "insert", "path": "/a", "insert_line": 2.0, "new_str": "x",
            "view_range": [1, -1], "extra": true
        }))
        .unwrap();
        assert_eq!(args.command, Command::Insert);
        assert_eq!(args.insert_line, Some(2.0));
        assert_eq!(args.view_range, Some(vec![1.0, -1.0]));
        assert_eq!(args.old_str, None);
    }

    #[test]
    fn the_wrong_types_get_the_registrys_texts() {
        let message = |args| EditorArgs::parse(&args).unwrap_err().message().to_owned();
        assert_eq!(
            message(json!({"command": "delete", "path": "/a"})),
            "invalid arguments: \"command\" must be one of [\"view\",\"create\",\"str_replace\",\"insert\"]"
        );
        assert_eq!(
            message(json!({"command": "view"})),
            "invalid arguments: missing required property \"path\""
        );
        assert_eq!(
            message(json!({"command": "view", "path": "/a", "view_range": [1, 1.5]})),
            "invalid arguments: \"view_range[1]\" must be an integer"
        );
    }

    #[test]
    fn required_parameters() {
        assert_eq!(
            required_for_command(None, "file_text", Command::Create, true)
                .unwrap_err()
                .message(),
            "Parameter `file_text` is required for command: create"
        );
        assert_eq!(
            required_for_command(Some(""), "old_str", Command::StrReplace, false)
                .unwrap_err()
                .message(),
            "Parameter `old_str` is empty for command: str_replace"
        );
        assert_eq!(
            required_for_command(Some(""), "new_str", Command::Insert, true),
            Ok("")
        );
    }
}
