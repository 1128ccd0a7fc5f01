//! The model-facing file tools of dsh (dsh's `@deepseek-ai/dsh-tool-fs`): `read`, `write`,
//! `edit` and `read_image`, over the `fs` service.
//!
//! - `read` returns a numbered window (`offset`, `limit`) with dsh's footers and caps (2000
//!   lines, 2000-character lines, 51200 bytes); large files are streamed, so memory is
//!   bounded by the window. It records what it saw (`fs/observed`).
//! - `write` and `edit` ask the `fs/write-intent` / `fs/edit-intent` deciders (the
//!   observation policy: read before you write) and mutate atomically; their results carry
//!   diff hunks as presentation metadata. Over a confining filesystem they run under the
//!   session's sandbox policy and offer dsh's one-shot escalation (`sandbox_permissions` +
//!   `justification`), approved through the `approval` service.
//! - `read_image` checks its arguments and the calling model's image input as dsh does;
//!   without an attachment store (none is composed yet) it then fails with dsh's clear error.

mod blocking;
mod config;
mod context;
mod diff;
mod edit;
mod error;
mod mutation;
mod plugin;
mod prompt;
mod read;
mod read_image;
mod render;
mod schema;
mod window;
mod write;

pub use config::{ReadCaps, ToolFsConfig};
pub use error::FS_ESCALATION_HINT;
pub use plugin::{PLUGIN_NAME, ToolFsPlugin};
pub use prompt::SECTIONS as PROMPT_SECTIONS;
pub use window::{Window, WindowBuilder, WindowLine, WindowRequest};
