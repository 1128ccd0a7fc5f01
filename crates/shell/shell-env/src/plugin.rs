//! The `dsh-shell-env` plugin: provides `shellEnv` with the session-persistence contributor.

use std::collections::BTreeMap;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use dsh_persistence::{LocationKind, SESSION_PERSISTENCE};
use serde::Deserialize;

use crate::home::resolve_dsh_home;
use crate::registry::{DSH_SESSION_JSONL, SHELL_ENV, ShellEnv, ShellEnvContributor};

/// The name of the built-in contributor owning `DSH_SESSION_JSONL`.
pub const SESSION_PERSISTENCE_CONTRIBUTOR: &str = "session-persistence";
/// dsh's description of `DSH_SESSION_JSONL`.
pub const SESSION_JSONL_DESCRIPTION: &str = "Absolute target path of the current session JSONL when the active persistence backend provides one.";

/// Row config of `dsh-shell-env` (dsh's key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShellEnvConfig {
    /// The harness home exposed as `DSH_HOME` (default: `$DSH_HOME`, else `~/.dsh`).
    pub dsh_home: Option<String>,
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-shell-env";

/// The `dsh-shell-env` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellEnvPlugin;

impl Plugin for ShellEnvPlugin {
    type Config = ShellEnvConfig;

    async fn apply(&self, ctx: Context, config: ShellEnvConfig) -> Result<(), BoxError> {
        let home = resolve_dsh_home(
            config.dsh_home.as_deref(),
            std::env::var_os("DSH_HOME").as_deref(),
            std::env::home_dir().as_deref(),
            &std::env::current_dir()?,
        )?;
        let registry = Arc::new(ShellEnv::new(&home));
        ctx.provide(&SHELL_ENV, Arc::clone(&registry))?;
        registry.register_in(&ctx, session_persistence_contributor(ctx.clone()))?;
        Ok(())
    }
}

/// The built-in contributor: `DSH_SESSION_JSONL` is where the session persistence service
/// (looked up through `ctx` at each call; it is optional) locates the session, when that
/// location is a JSONL file.
pub fn session_persistence_contributor(ctx: Context) -> ShellEnvContributor {
    ShellEnvContributor::new(SESSION_PERSISTENCE_CONTRIBUTOR, move |facts| {
        let mut values = BTreeMap::new();
        let location = facts.session.as_ref().and_then(|header| {
            ctx.get(&SESSION_PERSISTENCE)
                .and_then(|persistence| persistence.locate(header))
        });
        if let Some(location) = location.filter(|location| location.kind == LocationKind::Jsonl) {
            values.insert(
                DSH_SESSION_JSONL.to_owned(),
                location.path.to_string_lossy().into_owned(),
            );
        }
        values
    })
    .variable(DSH_SESSION_JSONL, SESSION_JSONL_DESCRIPTION)
}
