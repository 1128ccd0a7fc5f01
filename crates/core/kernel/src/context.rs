//! A plugin's handle on the runtime.

use std::any::Any;
use std::any::type_name;
use std::future::Future;
use std::sync::Arc;
use std::sync::Weak;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::error::KernelError;
use crate::fiber::FiberId;
use crate::fiber::FiberLabel;
use crate::fiber::FiberState;
use crate::key::ServiceKey;
use crate::plugin::ConfigSource;
use crate::plugin::Mount;
use crate::plugin::Plugin;
use crate::plugin::Starter;
use crate::runtime::Runtime;
use crate::runtime::Undo;

/// One fiber's handle on the runtime. Everything registered through it (services, listeners,
/// child plugins, effects) belongs to that fiber and is undone, newest first, when it unloads.
#[derive(Clone)]
pub struct Context {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) fiber: FiberId,
}

impl Context {
    pub(crate) fn new(runtime: Arc<Runtime>, fiber: FiberId) -> Self {
        Self { runtime, fiber }
    }

    /// The fiber this context belongs to.
    pub fn fiber(&self) -> FiberId {
        self.fiber
    }

    /// How messages name this fiber.
    pub fn label(&self) -> FiberLabel {
        self.runtime.lock().label_of(self.fiber)
    }

    /// The fiber's current state.
    pub fn state(&self) -> FiberState {
        self.runtime.lock().state_of(self.fiber)
    }

    /// The service under `key` if it is provided, its provider is active (or is this fiber) and
    /// it has the key's type. This is the optional-dependency lookup: hold the result only
    /// briefly, since nothing unloads this fiber when an uninjected provider goes away.
    pub fn get<T: ?Sized + Send + Sync + 'static>(&self, key: &ServiceKey<T>) -> Option<Arc<T>> {
        let st = self.runtime.lock();
        st.visible_provision(key.name().as_str(), self.fiber)?;
        st.services
            .get(key.name().as_str())
            .and_then(|slot| slot.value.downcast_ref::<Arc<T>>())
            .cloned()
    }

    /// The service under `key`, which this fiber must inject (or provide itself).
    pub fn require<T: ?Sized + Send + Sync + 'static>(
        &self,
        key: &ServiceKey<T>,
    ) -> Result<Arc<T>, KernelError> {
        let st = self.runtime.lock();
        let name = key.name().as_str();
        let slot = st.services.get(name);
        let own = slot.is_some_and(|slot| slot.provider == self.fiber);
        if !own && !st.injects(self.fiber, name) && self.fiber != crate::runtime::ROOT {
            return Err(KernelError::NotInjected {
                service: name.to_owned(),
                fiber: st.label_of(self.fiber),
            });
        }
        let Some(slot) = slot.filter(|_| st.visible_provision(name, self.fiber).is_some()) else {
            return Err(KernelError::Unavailable {
                service: name.to_owned(),
                fiber: st.label_of(self.fiber),
                reason: st.unavailable_reason(name),
            });
        };
        slot.value
            .downcast_ref::<Arc<T>>()
            .cloned()
            .ok_or_else(|| KernelError::TypeMismatch {
                service: name.to_owned(),
                expected: type_name::<T>(),
                actual: slot.type_name,
                fiber: st.label_of(self.fiber),
            })
    }

    /// The JSON fields service `name` exposes to config expressions (`ctx.<name>.<field>`).
    /// `Ok(None)` when the service exposes none. The fiber must inject the service.
    pub fn service_fields(&self, name: &str) -> Result<Option<Value>, KernelError> {
        let st = self.runtime.lock();
        if !st.injects(self.fiber, name) {
            return Err(KernelError::NotInjected {
                service: name.to_owned(),
                fiber: st.label_of(self.fiber),
            });
        }
        match st.visible_provision(name, self.fiber) {
            Some(_) => Ok(st.services.get(name).and_then(|slot| slot.fields.clone())),
            None => Err(KernelError::Unavailable {
                service: name.to_owned(),
                fiber: st.label_of(self.fiber),
                reason: st.unavailable_reason(name),
            }),
        }
    }

    /// Provides `value` as the service under `key`. Dependents see it once this fiber is
    /// active; it is withdrawn (and they unload) when this fiber unloads or the disposer runs.
    pub fn provide<T: ?Sized + Send + Sync + 'static>(
        &self,
        key: &ServiceKey<T>,
        value: Arc<T>,
    ) -> Result<Disposer, KernelError> {
        self.provide_inner(key, value, None)
    }

    /// Like [`Context::provide`], also exposing `fields` to the config expressions of rows that
    /// inject the service (`ctx.<name>.<field>`).
    pub fn provide_with_fields<T: ?Sized + Send + Sync + 'static>(
        &self,
        key: &ServiceKey<T>,
        value: Arc<T>,
        fields: Value,
    ) -> Result<Disposer, KernelError> {
        self.provide_inner(key, value, Some(fields))
    }

    fn provide_inner<T: ?Sized + Send + Sync + 'static>(
        &self,
        key: &ServiceKey<T>,
        value: Arc<T>,
        fields: Option<Value>,
    ) -> Result<Disposer, KernelError> {
        let boxed: Arc<dyn Any + Send + Sync> = Arc::new(value);
        let effect = self.runtime.provide(
            self.fiber,
            key.name().as_str(),
            boxed,
            type_name::<T>(),
            fields,
        )?;
        Ok(self.disposer(effect))
    }

    /// Registers `undo` to run when this fiber unloads.
    pub fn effect(&self, undo: impl FnOnce() + Send + 'static) -> Result<Disposer, KernelError> {
        self.push(Undo::Run(Box::new(undo)))
    }

    /// Registers an async `undo` to run (and be awaited) when this fiber unloads.
    pub fn effect_async<F, Fut>(&self, undo: F) -> Result<Disposer, KernelError>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let undo: Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send> =
            Box::new(move || Box::pin(undo()));
        self.push(Undo::RunAsync(undo))
    }

    /// Runs `task` on the runtime until it ends or this fiber unloads (which aborts it).
    pub fn spawn(
        &self,
        task: impl Future<Output = ()> + Send + 'static,
    ) -> Result<Disposer, KernelError> {
        self.runtime.lock().check_live(self.fiber)?;
        let task = self.runtime.handle().spawn(task).abort_handle();
        let abort = task.clone();
        self.effect(move || abort.abort())
            .inspect_err(|_| task.abort())
    }

    /// Mounts `plugin` as a child fiber with `config`. It starts once its injected services are
    /// active, and is disposed when this fiber unloads.
    pub fn plugin<P: Plugin>(
        &self,
        plugin: P,
        config: impl Into<ConfigSource>,
    ) -> Result<FiberHandle, KernelError> {
        // `my_crate::plugins::Greeter<T>` is labelled `Greeter`.
        let path = type_name::<P>().split('<').next().unwrap_or_default();
        let name = path.rsplit("::").next().unwrap_or(path);
        self.mount(Mount {
            label: FiberLabel::plugin(name),
            plugin: Arc::new(plugin),
            inject: Vec::new(),
            config: config.into(),
        })
    }

    /// Mounts a plugin held as a [`crate::DynPlugin`] as a child fiber, as rows are mounted.
    pub fn mount(&self, mount: Mount) -> Result<FiberHandle, KernelError> {
        // The plugin's own services first, then the row's, each once.
        let mut inject: Vec<String> = Vec::new();
        let mut add = |name: &str| {
            if !inject.iter().any(|known| known == name) {
                inject.push(name.to_owned());
            }
        };
        for name in mount.plugin.inject() {
            add(name.as_str());
        }
        for name in &mount.inject {
            add(name);
        }

        let mut st = self.runtime.lock();
        st.check_live(self.fiber)?;
        let starter = Starter::new(mount.plugin, mount.config);
        let id = st.insert_fiber(mount.label, self.fiber, inject, starter);
        st.push_effect(self.fiber, Undo::Child(id));
        self.runtime.poke(&mut st, &[id]);
        self.runtime.release(st);
        self.runtime.notify();
        Ok(FiberHandle {
            runtime: Arc::clone(&self.runtime),
            id,
        })
    }

    fn push(&self, undo: Undo) -> Result<Disposer, KernelError> {
        let mut st = self.runtime.lock();
        st.check_live(self.fiber)?;
        let effect = st.push_effect(self.fiber, undo);
        Ok(self.disposer(effect))
    }

    pub(crate) fn disposer(&self, effect: u64) -> Disposer {
        Disposer {
            runtime: Arc::downgrade(&self.runtime),
            fiber: self.fiber,
            effect,
        }
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("fiber", &self.fiber)
            .finish()
    }
}

/// Undoes one registration before its fiber unloads. Dropping it does nothing: the
/// registration then lives until the fiber unloads.
pub struct Disposer {
    runtime: Weak<Runtime>,
    fiber: FiberId,
    effect: u64,
}

impl Disposer {
    /// Undoes the registration now (once; later calls and fiber unloads skip it).
    pub async fn dispose(self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.dispose_effect(self.fiber, self.effect).await;
        }
    }
}

impl std::fmt::Debug for Disposer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Disposer")
            .field("fiber", &self.fiber)
            .field("effect", &self.effect)
            .finish()
    }
}

/// A mounted fiber, as returned to whoever mounted it.
#[derive(Clone)]
pub struct FiberHandle {
    runtime: Arc<Runtime>,
    id: FiberId,
}

impl FiberHandle {
    /// The fiber's id.
    pub fn id(&self) -> FiberId {
        self.id
    }

    /// The fiber's current state (`Disposed` once removed).
    pub fn state(&self) -> FiberState {
        self.runtime.lock().state_of(self.id)
    }

    /// Why the fiber failed, when it did.
    pub fn error(&self) -> Option<String> {
        self.runtime
            .lock()
            .fibers
            .get(&self.id)
            .and_then(|fiber| fiber.error.clone())
    }

    /// Removes the fiber for good, waiting until its effects are undone.
    pub async fn dispose(&self) {
        self.runtime.dispose_fiber(self.id).await;
    }
}

impl std::fmt::Debug for FiberHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FiberHandle").field("id", &self.id).finish()
    }
}
