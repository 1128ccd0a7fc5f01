//! The `dsh-token-meter` plugin (row `token-meter`): provides [`TokenMeter`] as
//! `tokenMeter` and keeps read sessions' folds current on `session/event`.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin};
use dsh_session::{EventNotice, LiveSession, SessionDisposed, SessionEventAppended};
use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::{Map, Value};

use crate::service::{TOKEN_METER, TokenMeter};

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-token-meter";

/// Row config of `dsh-token-meter`: must be `{}` (the estimator has no settings); any key
/// is refused with dsh's text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenMeterConfig {}

impl TokenMeterConfig {
    /// Checks a config map: `TokenMeterConfig: unknown key "<k>" (no settings are
    /// supported)` for its first key.
    pub fn from_map(map: &Map<String, Value>) -> Result<Self, String> {
        match map.keys().next() {
            Some(key) => Err(format!(
                "TokenMeterConfig: unknown key \"{key}\" (no settings are supported)"
            )),
            None => Ok(Self {}),
        }
    }
}

impl<'de> Deserialize<'de> for TokenMeterConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Option::<Map<String, Value>>::deserialize(deserializer)?.unwrap_or_default();
        Self::from_map(&map).map_err(D::Error::custom)
    }
}

/// The `dsh-token-meter` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenMeterPlugin;

impl Plugin for TokenMeterPlugin {
    type Config = TokenMeterConfig;

    async fn apply(&self, ctx: Context, _config: TokenMeterConfig) -> Result<(), BoxError> {
        let meter = Arc::new(TokenMeter::new());
        ctx.provide(&TOKEN_METER, Arc::clone(&meter))?;
        let observing = Arc::clone(&meter);
        ctx.on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            observing.observe(&notice.session);
            Ok(())
        })?;
        let retiring = Arc::clone(&meter);
        ctx.on::<SessionDisposed>(move |session: &Arc<LiveSession>| -> Result<(), BoxError> {
            retiring.forget(session);
            Ok(())
        })?;
        ctx.effect(move || meter.clear())?;
        Ok(())
    }
}
