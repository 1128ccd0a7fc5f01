//! Plugins built from closures, and a shared log, for the kernel tests.

use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;

use dsh_kernel::BoxError;
use dsh_kernel::ConfigSource;
use dsh_kernel::Context;
use dsh_kernel::FiberHandle;
use dsh_kernel::FiberLabel;
use dsh_kernel::Mount;
use dsh_kernel::Plugin;
use dsh_kernel::ServiceName;
use futures_util::future::BoxFuture;
use serde_json::Value;

type Apply = Arc<dyn Fn(Context, Value) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

/// A plugin whose `apply` is a closure and whose inject list is given.
pub struct Probe {
    inject: &'static [ServiceName],
    apply: Apply,
}

impl Plugin for Probe {
    type Config = Value;

    fn inject(&self) -> &'static [ServiceName] {
        self.inject
    }

    async fn apply(&self, ctx: Context, config: Value) -> Result<(), BoxError> {
        (self.apply)(ctx, config).await
    }
}

pub fn probe<F, Fut>(inject: &'static [ServiceName], apply: F) -> Probe
where
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    Probe {
        inject,
        apply: Arc::new(move |ctx, config| Box::pin(apply(ctx, config))),
    }
}

/// Mounts `plugin` under the root as row `row`.
pub fn mount_row(ctx: &Context, row: &str, plugin: Probe, config: Value) -> FiberHandle {
    ctx.mount(Mount {
        label: FiberLabel::row(row, format!("test-{row}")),
        plugin: Arc::new(plugin),
        inject: Vec::new(),
        config: ConfigSource::Value(config),
    })
    .unwrap()
}

/// A log shared between test plugins.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}
