//! dsh's model-facing `str_replace_editor` tool (dsh's `@deepseek-ai/dsh-tool-str-replace-editor`).
//!
//! One tool, four commands, absolute paths only, over the mounted filesystem seam
//! ([`dsh_fs::FS`]):
//!
//! - `view`: a file with numbered lines (`     N  line`), optionally a `view_range`; or a
//!   directory's visible entries two levels deep (hidden names, `node_modules` and
//!   `__pycache__` left out). Output past `maxOutputChars` UTF-16 code units is clipped and
//!   marked ([`CLIPPED_MARKER`]).
//! - `create`: a new file; an existing path is refused.
//! - `str_replace`: one unique, literal, raw (line endings kept) occurrence of `old_str`
//!   replaced by `new_str`.
//! - `insert`: `new_str` inserted after line `insert_line`, no newline added.
//!
//! Each mutation asks the `fs/*` intents (so an observation policy can require a fresh
//! read), writes under the call's sandbox policy when the filesystem confines, and records
//! what it saw with `fs/observed`. A sandbox denial reads as
//! `[sandbox: file access denied under <mode> mode]` (`FS_SANDBOX_DENIED`); the tool offers
//! no escalation. Filesystem failures keep their `FsError` code and carry no remedy suffix.
//!
//! [`StrReplaceEditorPlugin`] registers the tool; [`StrReplaceEditorConfig`] is its row
//! config.

mod args;
mod clip;
mod config;
mod create;
mod error;
mod insert;
mod js;
mod listing;
mod plugin;
mod policy;
mod replace;
mod schema;
mod seam;
mod tool;
mod view;

pub use clip::CLIPPED_MARKER;
pub use config::{DEFAULT_MAX_OUTPUT_CHARS, StrReplaceEditorConfig};
pub use plugin::{PLUGIN_NAME, StrReplaceEditorPlugin};
pub use schema::{DEFAULT_DESCRIPTION, TOOL_NAME};
pub use tool::StrReplaceEditorTool;
