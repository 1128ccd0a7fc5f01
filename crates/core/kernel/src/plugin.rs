//! Plugins, their configs, and how a fiber is started.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::BoxError;
use crate::error::StartError;
use crate::fiber::FiberLabel;
use crate::key::ServiceName;

/// A plugin: a typed config, the services it needs, and what it does when it starts.
///
/// Everything `apply` registers through its [`Context`] (services, listeners, child plugins,
/// effects) belongs to the plugin's fiber and is undone, newest first, when the fiber unloads.
pub trait Plugin: Send + Sync + 'static {
    /// The config a row's `config` is deserialized into. An absent config deserializes from
    /// `null` when the type accepts it, else from an empty map (so `#[serde(default)]` works).
    type Config: DeserializeOwned + Send + 'static;

    /// The services that must be provided and active before `apply` runs, named through
    /// their keys: `const { &[TOOLS.name(), SHELL.name()] }`.
    fn inject(&self) -> &'static [ServiceName] {
        &[]
    }

    /// Starts the plugin. A returned error fails the fiber; the error is kept for the audit.
    fn apply(
        &self,
        ctx: Context,
        config: Self::Config,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// The object-safe form of [`Plugin`] that registries hold; every `Plugin` is one.
pub trait DynPlugin: Send + Sync + 'static {
    /// The services that must be provided and active before the plugin starts.
    fn inject(&self) -> &'static [ServiceName];

    /// Deserializes `config` into the plugin's config type and runs `apply`.
    fn start(
        self: Arc<Self>,
        ctx: Context,
        config: Value,
    ) -> BoxFuture<'static, Result<(), StartError>>;
}

impl<P: Plugin> DynPlugin for P {
    fn inject(&self) -> &'static [ServiceName] {
        Plugin::inject(self)
    }

    fn start(
        self: Arc<Self>,
        ctx: Context,
        config: Value,
    ) -> BoxFuture<'static, Result<(), StartError>> {
        Box::pin(async move {
            let config = decode_config::<P::Config>(config)?;
            self.apply(ctx, config).await.map_err(StartError::Apply)
        })
    }
}

fn decode_config<C: DeserializeOwned>(value: Value) -> Result<C, StartError> {
    if value.is_null() {
        if let Ok(config) = serde_json::from_value::<C>(Value::Null) {
            return Ok(config);
        }
        return decode_value(Value::Object(serde_json::Map::new()));
    }
    decode_value(value)
}

fn decode_value<C: DeserializeOwned>(value: Value) -> Result<C, StartError> {
    serde_path_to_error::deserialize(value).map_err(|error| StartError::Config {
        path: error.path().to_string(),
        message: error.into_inner().to_string(),
    })
}

/// Resolves a fiber's config at each activation.
pub type ConfigResolver = Arc<dyn Fn(&Context) -> Result<Value, BoxError> + Send + Sync>;

/// Where a fiber's config comes from. A resolver runs at every activation, after the fiber's
/// injected services are active, so it can read them (this is how config expressions work).
#[derive(Clone)]
pub enum ConfigSource {
    /// A fixed value.
    Value(Value),
    /// A function of the fiber's context.
    Resolver(ConfigResolver),
}

impl ConfigSource {
    /// No config: the plugin gets its config type's empty form.
    pub fn none() -> Self {
        Self::Value(Value::Null)
    }

    /// A config computed at each activation.
    pub fn resolver(
        resolve: impl Fn(&Context) -> Result<Value, BoxError> + Send + Sync + 'static,
    ) -> Self {
        Self::Resolver(Arc::new(resolve))
    }

    fn resolve(&self, ctx: &Context) -> Result<Value, StartError> {
        match self {
            Self::Value(value) => Ok(value.clone()),
            Self::Resolver(resolve) => resolve(ctx).map_err(StartError::Resolve),
        }
    }
}

impl From<Value> for ConfigSource {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

impl fmt::Debug for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value(value) => f.debug_tuple("Value").field(value).finish(),
            Self::Resolver(_) => f.write_str("Resolver(..)"),
        }
    }
}

/// A request to mount a plugin held as a [`DynPlugin`], as composition rows are mounted.
pub struct Mount {
    /// How messages name the fiber.
    pub label: FiberLabel,
    /// The plugin.
    pub plugin: Arc<dyn DynPlugin>,
    /// Services to wait for besides those the plugin declares (a row's `inject`).
    pub inject: Vec<String>,
    /// The fiber's config.
    pub config: ConfigSource,
}

/// What a fiber runs each time it loads.
pub(crate) struct Starter {
    plugin: Arc<dyn DynPlugin>,
    config: ConfigSource,
}

impl Starter {
    pub(crate) fn new(plugin: Arc<dyn DynPlugin>, config: ConfigSource) -> Self {
        Self { plugin, config }
    }

    pub(crate) async fn start(&self, ctx: Context) -> Result<(), StartError> {
        let config = self.config.resolve(&ctx)?;
        Arc::clone(&self.plugin).start(ctx, config).await
    }
}
