//! dsh's `DSH_*` environment registry: the `shellEnv` service ([`SHELL_ENV`]).
//!
//! Every model shell call gets a fresh snapshot of harness-owned variables, merged last into
//! the command's environment (the shell runner drops every ambient `DSH_*` name, so a fact
//! that is unavailable is absent, never stale):
//!
//! - `DSH_HOME`: always; the plugin's `dshHome`, else a non-blank `$DSH_HOME`, else `~/.dsh`,
//!   made absolute.
//! - `DSH_SHELL`: always `1`.
//! - `DSH_SESSION_ID`: the session's id, when the call belongs to a session.
//! - `DSH_SESSION_JSONL`: the session's JSONL file, from the built-in `session-persistence`
//!   contributor, when the persistence service stores sessions as JSONL files.
//!
//! Plugins contribute more with [`ShellEnv::register`]: a unique name, declared
//! `DSH_[A-Z][A-Z0-9_]*` keys with descriptions, one owner per key.

mod error;
mod home;
mod plugin;
mod registry;

pub use error::ShellEnvError;
pub use home::resolve_dsh_home;
pub use plugin::{
    PLUGIN_NAME, SESSION_JSONL_DESCRIPTION, SESSION_PERSISTENCE_CONTRIBUTOR, ShellEnvConfig,
    ShellEnvPlugin, session_persistence_contributor,
};
pub use registry::{
    DSH_HOME, DSH_SESSION_ID, DSH_SESSION_JSONL, DSH_SHELL, RESERVED_KEYS, SHELL_ENV, ShellEnv,
    ShellEnvContributor, ShellEnvFacts, ShellEnvRegistration, ShellEnvResolver,
    ShellEnvVariableInfo,
};
