//! dsh's model-facing `glob` and `grep` tools (dsh's `@deepseek-ai/dsh-tool-fs-search`),
//! searching in process with the ripgrep crates instead of spawning `rg`.
//!
//! - `glob` lists the files whose paths match a glob, as `rg --files --glob=<pattern>
//!   --sort=modified --no-ignore --hidden` does with dsh's VCS excludes: files only, hidden and
//!   ignored files included, `.git`/`.svn`/`.hg`/`.bzr`/`.jj`/`.sl` left out (even as the root),
//!   oldest modification first. A pattern without `/` matches file names at any depth.
//! - `grep` searches contents as `rg --json --regexp=<pattern> [--glob=<include>]` does:
//!   ripgrep's ignore rules (`.gitignore` inside git repositories, `.ignore`, `.rgignore`,
//!   hidden files skipped), its binary detection, Rust regex syntax, a parallel walk with each
//!   file's matches kept together and in line order.
//!
//! Both run off the async runtime ([`run`]) under the `timeoutMs` budget (`TOOL_TIMEOUT`) and
//! the caller's cancellation (`SEARCH_ABORTED`), and stop promptly when either fires. The model
//! reads dsh's texts ([`render`]): caps with their footers, the optional top-level sampling of
//! an over-cap glob page ([`sample`]), line previews cut at a UTF-8 boundary. An over-cap result
//! of a session's direct call is saved whole to a private file ([`spill`]) whose path the
//! footer gives. Each direct call's result carries dsh's search-card metadata ([`meta`]), bounded in
//! size; a nested call's has none.
//! Failures are dsh's `SearchError`s ([`error`]); those ripgrep reports on its stderr (a
//! rejected pattern, an unreachable path, an unreadable entry, nothing searched) quote ripgrep
//! 15's own text ([`stderr`]). Paths are shown relative to the session's
//! directory where they lie inside it ([`workdir`]); the harness's own `/proc` entries are
//! never searched ([`walk`]).

pub mod args;
mod batch;
pub mod config;
pub mod error;
mod glob;
pub mod glob_search;
mod grep;
pub mod grep_search;
pub mod meta;
mod plugin;
pub mod prompt;
pub mod render;
pub mod run;
pub mod sample;
pub mod schema;
pub mod spill;
pub mod stderr;
pub mod value;
pub mod walk;
pub mod workdir;

pub use config::{SearchCaps, ToolFsSearchConfig};
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use plugin::{PLUGIN_NAME, ToolFsSearchPlugin};
pub use prompt::{GLOB_SECTION_NAME, GLOB_SECTION_ORDER, GREP_SECTION_NAME, GREP_SECTION_ORDER};
