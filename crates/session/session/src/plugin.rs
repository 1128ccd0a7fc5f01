//! The `dsh-session` plugin: provides the [`SessionStore`] as the `sessions` service.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use serde::Deserialize;

use crate::store::{SESSIONS, SessionStore};

/// Row config of `dsh-session`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionConfig {
    /// Check dsh's relational invariants (turn/step enclosure, call/result pairing) on every
    /// append, refusing events that break them.
    #[serde(default)]
    pub invariants: bool,
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-session";

/// The `dsh-session` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionPlugin;

impl Plugin for SessionPlugin {
    type Config = SessionConfig;

    async fn apply(&self, ctx: Context, config: SessionConfig) -> Result<(), BoxError> {
        let store = Arc::new(SessionStore::new(ctx.clone()).with_invariants(config.invariants));
        ctx.provide(&SESSIONS, Arc::clone(&store))?;
        // Live sessions hold the context; dropping them on unload breaks that cycle.
        ctx.effect(move || store.clear())?;
        Ok(())
    }
}
