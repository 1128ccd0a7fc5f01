//! The model-facing schemas of `read`, `write`, `edit` and `read_image`: dsh 0.1's property
//! names, types, order and required lists, in our own words.

use serde_json::{Map, Value, json};

/// The escalation modes a file operation may ask for.
pub const ESCALATION_TARGETS: [&str; 2] = ["workspace-write", "danger-full-access"];

/// `read`'s description.
pub const READ_DESCRIPTION: &str =
    "Read a UTF-8 text file; the result shows each line with its number.";
/// `write`'s description.
pub const WRITE_DESCRIPTION: &str = "Create a UTF-8 text file, or replace all of its content.";
/// `edit`'s description.
pub const EDIT_DESCRIPTION: &str =
    "Change an existing UTF-8 text file by replacing literal text with new text.";
/// `read_image`'s description.
pub const READ_IMAGE_DESCRIPTION: &str = "Read a PNG, JPEG, WebP or GIF file as an image the \
    model can look at. Large images are scaled down by the harness, and the result says how to \
    map coordinates back to the original. Several images may be read at once. Needs a model \
    route that accepts image input; on a text-only model the call fails and says so.";

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// `read`'s parameters; `limit`'s description names the configured line cap.
pub fn read_parameters(read_limit: u64) -> Value {
    object(
        json!({
            "file_path": {"type": "string", "description": "The file to read (absolute, or relative to the session's directory)."},
            "offset": {"type": "number", "description": "The first line to show, counting from 1 (default 1)."},
            "limit": {"type": "number", "description": format!("How many lines to show at most (default {read_limit}).")}
        }),
        &["file_path"],
    )
}

/// The escalation pair a confining filesystem adds to `write` and `edit`.
fn escalation_properties() -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "sandbox_permissions".into(),
        json!({
            "type": "string",
            "description": "A wider sandbox mode for this one file operation. Use it only to \
                retry an operation the sandbox has just denied; it needs a justification and \
                the user's approval.",
            "enum": ESCALATION_TARGETS
        }),
    );
    properties.insert(
        "justification".into(),
        json!({
            "type": "string",
            "description": "With sandbox_permissions: one sentence telling the user why this \
                file operation needs the wider access."
        }),
    );
    properties
}

fn with_escalation(mut properties: Value, escalation: bool) -> Value {
    if escalation && let Some(map) = properties.as_object_mut() {
        map.extend(escalation_properties());
    }
    properties
}

/// `write`'s parameters.
pub fn write_parameters(escalation: bool) -> Value {
    let properties = json!({
        "file_path": {"type": "string", "description": "The file to write (absolute, or relative to the session's directory)."},
        "content": {"type": "string", "description": "The complete new UTF-8 content."}
    });
    object(
        with_escalation(properties, escalation),
        &["file_path", "content"],
    )
}

/// `edit`'s parameters.
pub fn edit_parameters(escalation: bool) -> Value {
    let properties = json!({
        "file_path": {"type": "string", "description": "The file to edit (absolute, or relative to the session's directory)."},
        "old_string": {"type": "string", "description": "The exact text to replace, matched literally."},
        "new_string": {"type": "string", "description": "The text to put in its place, taken literally; an empty string deletes the match."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence. By default (false) old_string must occur exactly once."}
    });
    object(
        with_escalation(properties, escalation),
        &["file_path", "old_string", "new_string"],
    )
}

/// `read_image`'s parameters.
pub fn read_image_parameters() -> Value {
    object(
        json!({
            "file_path": {"type": "string", "description": "The image file (absolute, or relative to the session's directory)."}
        }),
        &["file_path"],
    )
}
