//! This example's own plugin: the `word_count` tool, registered into dsh's tool registry.
//!
//! A plugin is a type implementing [`dsh_kernel::Plugin`]: it names the services it needs
//! (`inject`), and its `apply` registers what it offers. Registrations belong to the plugin's
//! fiber and are undone when it unloads, so the tool disappears with the row.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_tools::{FnTool, TOOLS, ToolError, ToolOutput};
use serde::Serialize;
use serde_json::{Value, json};

/// The plugin's name in rows (`name: example-word-count`).
pub const PLUGIN_NAME: &str = "example-word-count";

/// The tool's model-facing name.
pub const TOOL_NAME: &str = "word_count";

/// What [`count`] found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Runs of non-whitespace characters.
    pub words: usize,
    /// Lines, as [`str::lines`] splits them (a final newline does not start another line).
    pub lines: usize,
    /// Unicode scalar values.
    pub characters: usize,
}

/// Counts the words, lines and characters of `text`.
pub fn count(text: &str) -> Counts {
    Counts {
        words: text.split_whitespace().count(),
        lines: text.lines().count(),
        characters: text.chars().count(),
    }
}

/// The `word_count` tool: takes `{"text": "..."}` and answers with its [`Counts`] as JSON
/// (`{"words":6,"lines":1,"characters":18}`).
pub fn tool() -> FnTool {
    let parameters = json!({
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "The text to measure, verbatim."
            }
        },
        "required": ["text"]
    });
    FnTool::new(
        TOOL_NAME,
        "Count the words, lines and characters of a text.",
        parameters,
        // The registry validated the arguments against `parameters`: `text` is a string.
        |args: Value, _run| async move {
            let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
            let value = serde_json::to_value(count(text))
                .map_err(|error| ToolError::new(format!("cannot encode the counts: {error}")))?;
            Ok(ToolOutput::json(value))
        },
    )
    .concurrency_safe(|_| true)
}

/// The `example-word-count` plugin: registers [`tool`] into the `tools` service. It takes no
/// config.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordCountPlugin;

impl Plugin for WordCountPlugin {
    type Config = ();

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name()] }
    }

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        let tools = ctx.require(&TOOLS)?;
        tools.register(&ctx, Arc::new(tool()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_lines_and_characters() {
        assert_eq!(
            count("to be or\nnot to bé\n"),
            Counts {
                words: 6,
                lines: 2,
                characters: 19
            }
        );
        assert_eq!(
            count(""),
            Counts {
                words: 0,
                lines: 0,
                characters: 0
            }
        );
    }
}
