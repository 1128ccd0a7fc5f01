//! dsh's `agent-instructions` plugin (`@deepseek-ai/dsh-agent-instructions`): the
//! `AGENTS.md` / `CLAUDE.md` files from the project root down to the session's cwd, put into
//! the conversation as a logged `user/message`, so a resumed session sees the same text.
//!
//! - **Discovery** through the `fs` provider (looked up at each step; without one the plugin
//!   does nothing), so the provider's sandbox and `/proc` rules apply: the user-global
//!   `<dshHome>/AGENTS.md`, then the project root (the first directory from the cwd upwards
//!   holding a `projectRootMarkers` entry, else the cwd) and every directory below it down to
//!   the cwd, broadest first. Each directory contributes every present base candidate, then
//!   every local overlay; paths are deduplicated, then same-directory files whose trimmed text
//!   has the same SHA-1. Symlinks are followed; a candidate that is a directory is absent.
//! - **Rendering** ([`render_workspace_context`]): one `<system-reminder>` holding dsh's intro
//!   and an `Instructions from: <path>` section per file, any `</system-reminder>` inside
//!   escaped, all within `maxBytes` (broadest files dropped first, then the most specific one
//!   cut at a code-point boundary, then the compact intro, then the budget notice alone).
//! - **Baseline**: the first entering step of a session without a compatible baseline in its
//!   visible history gets it right after its last claimed message (after the prompt, before
//!   the runtime-context snapshot), with the source `{kind:'agent-instructions',
//!   form:'instructions', baseline:true, baselineIdentity, changes}`. A visible baseline of
//!   another identity (other root or config) is replaced, saying so.
//! - **Updates**: after successful `read`/`write`/`edit` results of an agent, the next
//!   entering step also reconciles the directories between the cwd and each touched file, the
//!   baseline's files and every scope already visible, and adds `Additional instructions
//!   from`, `Updated instructions from` and `Instructions removed` sections (source without
//!   `baseline`). State is read back from the visible history, so resume and compaction
//!   reconcile instead of duplicating.
//!
//! Differences from dsh: updates are composed at the next entering step, not queued at the
//! front of the `next-step` inbox at `step/end` (the agent loop has no way to replace or
//! remove a queued message), so they always land after the step's claimed messages, nothing
//! about them is logged as `agent/inbox/spliced`, and touches not yet entered are lost if the
//! process stops (the next step still reconciles every visible and baseline scope). A
//! rejected step, or a first step entering with no messages, gets nothing; its touches wait
//! for the next entering step, and the baseline is composed then.

mod baseline;
mod budget;
mod compose;
mod config;
mod digest;
mod discover;
mod ordered;
mod paths;
mod plugin;
mod render;
mod source;
mod state;
mod updates;

pub use baseline::load_baseline_instructions;
pub use budget::TruncatedInstruction;
pub use config::{AgentInstructionsConfig, DEFAULT_MAX_SOURCE_BYTES, MaxBytes, ResolvedConfig};
pub use discover::{InstructionFile, LoadedInstructionFile};
pub use plugin::{AgentInstructionsPlugin, PLUGIN_NAME};
pub use render::{RenderedWorkspaceContext, render_workspace_context};

#[cfg(test)]
mod tests;
