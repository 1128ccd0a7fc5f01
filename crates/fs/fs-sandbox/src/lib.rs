//! The `dsh-fs-sandbox` plugin (dsh's `@deepseek-ai/dsh-fs-sandbox`): provides `fs` as the
//! host disk behind the sandbox policy ([`SandboxedDisk`]).
//!
//! - `write_text` and `edit_text` run under the call's policy (the one the tool passes, else
//!   the standing one): nothing in `read-only`; in `workspace-write` only under the writable
//!   roots of [`dsh_shell::write_plan`] (the workspace, `/tmp`, the OS temp directory) and
//!   never inside a protected path (the session store, the harness's own files); anything in
//!   `danger-full-access`. The path is resolved again just before the check, so a link
//!   swapped in since the tool resolved it is judged by where it now points.
//! - Reads pass through, except the harness's own `/proc` entries (its memory, environment
//!   and descriptors), which are refused in every mode.
//!
//! The fence is a policy check in trusted code, not a kernel boundary: it narrows the window
//! between check and write to one resolution, as dsh's does.

mod fence;
mod plugin;

pub use fence::SandboxedDisk;
pub use plugin::{FsSandboxPlugin, PLUGIN_NAME};
