//! dsh's model-facing `bash` tool.
//!
//! A call's arguments are checked (dsh's rules past the schema), its working directory is the
//! session's workspace unless the model names one, its environment carries the managed
//! `DSH_*` variables and nothing the model sends, and it runs through the mounted shell
//! executor ([`dsh_shell::SHELL`]). The model reads stdout, a marked `[stderr]` section and
//! the status markers (`[exit code: N]`, `[timed out after Nms]`, `[killed by signal: X]`,
//! the truncation notice with the full output's path), exactly as dsh renders them
//! ([`render`]). A nonzero exit is a result, not an error.
//!
//! With background jobs enabled (the default), `run_in_background` starts the command as job
//! `bash-N`, and the `job_output`, `job_list` and `job_kill` tools read and stop it
//! ([`jobs`]).

pub mod args;
pub mod jobs;
mod plugin;
mod prompt;
pub mod render;
pub mod schema;
mod tool;
pub mod workdir;

pub use plugin::{PLUGIN_NAME, ToolBashConfig, ToolBashPlugin};
pub use prompt::{PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER};
pub use tool::BashTool;
