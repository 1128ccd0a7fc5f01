//! The grammar of `dsh tools`.

use clap::Subcommand;

pub(super) const TOOLS_EXAMPLES: &str = "\
Examples:
  dsh tools list                           the headless profile's tools, one line each
  dsh tools list --json                    every tool with its full parameter schema
  dsh tools call bash '{\"command\":\"ls\",\"description\":\"List files\"}'
                                           run one call; print what the model would read";

/// What `dsh tools` does.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ToolsAction {
    /// List the tools: names and one-line descriptions.
    List {
        /// One JSON object per tool and line: name, description, parameters.
        #[arg(long)]
        json: bool,
    },
    /// Run one call through the whole tool pipeline, outside any model turn, and print the
    /// text the model would receive. Exit 0 when the call produced a result (a nonzero
    /// shell exit is a result), 1 when the tool failed.
    Call {
        /// The tool name.
        name: String,
        /// The arguments, as one JSON object.
        #[arg(value_name = "json args")]
        arguments: String,
    },
}
