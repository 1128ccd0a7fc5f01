//! The runtime: one mutex-guarded table of fibers, services and listeners.
//!
//! The lock is never held across an `.await` and never while a plugin or listener runs. Every
//! change that can make a fiber startable or stale ([`Runtime::poke`]) is evaluated under the
//! lock, so the table is the single owner of lifecycle.

mod lifecycle;
mod services;

use crate::sync::lock;
use std::any::Any;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::error::KernelError;
use crate::fiber::FiberId;
use crate::fiber::FiberLabel;
use crate::fiber::FiberState;
use crate::plugin::Starter;

/// The shared runtime behind a [`crate::Kernel`] and every [`crate::Context`].
pub(crate) struct Runtime {
    state: Mutex<State>,
    /// Bumped after every change of fiber state, so waiters can re-check their condition.
    changes: watch::Sender<u64>,
    handle: Handle,
}

pub(crate) struct State {
    pub(crate) fibers: HashMap<FiberId, FiberRecord>,
    pub(crate) services: HashMap<String, ServiceSlot>,
    /// Service name -> fibers that inject it, to find whom a provider change concerns.
    injectors: HashMap<String, Vec<FiberId>>,
    pub(crate) listeners: HashMap<TypeId, ListenerTable>,
    next_id: u64,
    /// Fibers loading or unloading: the runtime is settled when this is zero.
    busy: usize,
    /// Values removed under the lock (services, listeners, fiber records), dropped once it is
    /// released so that no `Drop` of plugin code runs while it is held.
    graveyard: Vec<Box<dyn Any + Send>>,
}

pub(crate) struct FiberRecord {
    pub(crate) label: Arc<FiberLabel>,
    pub(crate) parent: Option<FiberId>,
    pub(crate) children: Vec<FiberId>,
    pub(crate) state: FiberState,
    pub(crate) inject: Vec<String>,
    /// `None` for the root, which is always active.
    starter: Option<Arc<Starter>>,
    /// Registrations in registration order; undone newest first.
    pub(crate) effects: Vec<EffectSlot>,
    /// The provisions of the injected services when the fiber last loaded.
    epoch: Vec<u64>,
    /// Bumped at every load and unload so a stale load result is ignored.
    token: u64,
    task: Option<AbortHandle>,
    pub(crate) error: Option<String>,
    /// Removed for good once unloaded.
    disposing: bool,
    /// Goes to `Failed` (not `Pending`) once unloaded.
    failing: bool,
}

pub(crate) struct ServiceSlot {
    pub(crate) provider: FiberId,
    pub(crate) provision: u64,
    /// An `Arc<T>` behind `Any`.
    pub(crate) value: Arc<dyn Any + Send + Sync>,
    pub(crate) type_name: &'static str,
    pub(crate) fields: Option<Value>,
}

pub(crate) struct EffectSlot {
    pub(crate) id: u64,
    pub(crate) undo: Undo,
}

/// How one registration is undone.
pub(crate) enum Undo {
    Run(Box<dyn FnOnce() + Send>),
    RunAsync(Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>),
    Service { name: String, provision: u64 },
    Listener { event: TypeId, id: u64 },
    Child(FiberId),
}

/// One event's listeners: an `Arc<[ListenerSlot<L>]>` behind `Any`, and how to remove one.
pub(crate) struct ListenerTable {
    pub(crate) list: Box<dyn Any + Send + Sync>,
    /// Removes one listener and returns the list it replaced.
    pub(crate) remove: fn(&mut Box<dyn Any + Send + Sync>, u64) -> Box<dyn Any + Send + Sync>,
}

/// The root fiber's id.
pub(crate) const ROOT: FiberId = FiberId(0);

impl Runtime {
    pub(crate) fn new() -> Result<Arc<Self>, KernelError> {
        let handle = Handle::try_current().map_err(|_| KernelError::NoRuntime)?;
        let mut fibers = HashMap::new();
        fibers.insert(
            ROOT,
            FiberRecord::new(FiberLabel::plugin("root"), None, Vec::new(), None),
        );
        if let Some(root) = fibers.get_mut(&ROOT) {
            root.state = FiberState::Active;
        }
        let (changes, _) = watch::channel(0);
        Ok(Arc::new(Self {
            state: Mutex::new(State {
                fibers,
                services: HashMap::new(),
                injectors: HashMap::new(),
                listeners: HashMap::new(),
                next_id: 1,
                busy: 0,
                graveyard: Vec::new(),
            }),
            changes,
            handle,
        }))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Releases the lock, then drops what was removed under it.
    pub(crate) fn release(&self, mut st: MutexGuard<'_, State>) {
        let garbage = std::mem::take(&mut st.graveyard);
        drop(st);
        drop(garbage);
    }

    /// Wakes everyone waiting in [`Runtime::wait_until`].
    pub(crate) fn notify(&self) {
        self.changes
            .send_modify(|version| *version = version.wrapping_add(1));
    }

    /// Waits until `done` holds for the table.
    pub(crate) async fn wait_until(&self, done: impl Fn(&State) -> bool) {
        let mut changes = self.changes.subscribe();
        loop {
            if done(&self.lock()) {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl State {
    pub(crate) fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub(crate) fn busy(&self) -> usize {
        self.busy
    }

    /// Keeps `value` until the lock is released (see [`Runtime::release`]).
    pub(crate) fn bury(&mut self, value: impl Any + Send) {
        self.graveyard.push(Box::new(value));
    }

    /// Removes service `name` if `provision` is still the one in the table, keeping its value
    /// until the lock is released; returns whether it did.
    pub(crate) fn take_service(&mut self, name: &str, provision: u64) -> bool {
        let owned = self
            .services
            .get(name)
            .is_some_and(|slot| slot.provision == provision);
        if let Some(slot) = owned.then(|| self.services.remove(name)).flatten() {
            self.bury(slot.value);
        }
        owned
    }

    /// Whether fiber `id` declared service `name` in its inject list.
    pub(crate) fn injects(&self, id: FiberId, name: &str) -> bool {
        self.fibers
            .get(&id)
            .is_some_and(|fiber| fiber.inject.iter().any(|injected| injected == name))
    }

    /// Why service `name` is not visible, for error messages.
    pub(crate) fn unavailable_reason(&self, name: &str) -> String {
        match self.services.get(name) {
            None => "no row provides it".to_owned(),
            Some(slot) => format!(
                "its provider, {}, is {}",
                self.label_of(slot.provider),
                self.state_of(slot.provider)
            ),
        }
    }

    pub(crate) fn state_of(&self, id: FiberId) -> FiberState {
        self.fibers
            .get(&id)
            .map_or(FiberState::Disposed, |fiber| fiber.state)
    }

    pub(crate) fn label_of(&self, id: FiberId) -> FiberLabel {
        self.fibers.get(&id).map_or_else(
            || FiberLabel::plugin("disposed fiber"),
            |fiber| (*fiber.label).clone(),
        )
    }

    /// Fails with [`KernelError::Inactive`] unless `id` may register effects now.
    pub(crate) fn check_live(&self, id: FiberId) -> Result<(), KernelError> {
        match self.fibers.get(&id) {
            Some(fiber) if matches!(fiber.state, FiberState::Loading | FiberState::Active) => {
                Ok(())
            }
            Some(fiber) => Err(KernelError::Inactive {
                fiber: (*fiber.label).clone(),
                state: fiber.state,
            }),
            None => Err(KernelError::Inactive {
                fiber: FiberLabel::plugin("disposed fiber"),
                state: FiberState::Disposed,
            }),
        }
    }

    /// Records an effect of `fiber` and returns its id.
    pub(crate) fn push_effect(&mut self, fiber: FiberId, undo: Undo) -> u64 {
        let id = self.next_id();
        if let Some(record) = self.fibers.get_mut(&fiber) {
            record.effects.push(EffectSlot { id, undo });
        }
        id
    }

    /// The provision of service `name` that `viewer` can see: the provider is active, or is
    /// `viewer` itself.
    pub(crate) fn visible_provision(&self, name: &str, viewer: FiberId) -> Option<u64> {
        let slot = self.services.get(name)?;
        let visible = slot.provider == viewer || self.state_of(slot.provider) == FiberState::Active;
        visible.then_some(slot.provision)
    }

    /// The injected services `id` still waits for.
    pub(crate) fn missing_services(&self, id: FiberId) -> Vec<String> {
        self.fibers.get(&id).map_or_else(Vec::new, |fiber| {
            fiber
                .inject
                .iter()
                .filter(|name| self.visible_provision(name, id).is_none())
                .cloned()
                .collect()
        })
    }

    fn set_state(&mut self, id: FiberId, state: FiberState) {
        let Some(fiber) = self.fibers.get_mut(&id) else {
            return;
        };
        let was_busy = fiber.state.is_transient();
        fiber.state = state;
        tracing::trace!(fiber = %fiber.label, state = %state, "fiber state");
        match (was_busy, state.is_transient()) {
            (false, true) => self.busy += 1,
            (true, false) => self.busy = self.busy.saturating_sub(1),
            _ => {}
        }
    }

    /// Adds a fiber in `Pending` and returns its id.
    pub(crate) fn insert_fiber(
        &mut self,
        label: FiberLabel,
        parent: FiberId,
        inject: Vec<String>,
        starter: Starter,
    ) -> FiberId {
        let id = FiberId(self.next_id());
        for name in &inject {
            self.injectors.entry(name.clone()).or_default().push(id);
        }
        self.fibers.insert(
            id,
            FiberRecord::new(label, Some(parent), inject, Some(Arc::new(starter))),
        );
        if let Some(parent) = self.fibers.get_mut(&parent) {
            parent.children.push(id);
        }
        id
    }

    fn remove_fiber(&mut self, id: FiberId) {
        self.set_state(id, FiberState::Disposed);
        let Some(fiber) = self.fibers.remove(&id) else {
            return;
        };
        for name in &fiber.inject {
            if let Some(injectors) = self.injectors.get_mut(name) {
                injectors.retain(|injector| *injector != id);
            }
        }
        if let Some(parent) = fiber.parent.and_then(|parent| self.fibers.get_mut(&parent)) {
            parent.children.retain(|child| *child != id);
        }
        self.bury(fiber);
    }
}

impl FiberRecord {
    fn new(
        label: FiberLabel,
        parent: Option<FiberId>,
        inject: Vec<String>,
        starter: Option<Arc<Starter>>,
    ) -> Self {
        Self {
            label: Arc::new(label),
            parent,
            children: Vec::new(),
            state: FiberState::Pending,
            inject,
            starter,
            effects: Vec::new(),
            epoch: Vec::new(),
            token: 0,
            task: None,
            error: None,
            disposing: false,
            failing: false,
        }
    }
}
