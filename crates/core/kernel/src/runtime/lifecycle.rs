//! Loading and unloading fibers as their dependencies come and go.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;

use super::FiberRecord;
use super::Runtime;
use super::State;
use super::Undo;
use crate::context::Context;
use crate::error::StartError;
use crate::error::error_chain;
use crate::error::panic_message;
use crate::fiber::FiberId;
use crate::fiber::FiberState;

impl Runtime {
    /// Re-evaluates `ids`: starts those that became startable and unloads those whose
    /// dependencies changed. Call under the lock after every change that concerns them.
    pub(crate) fn poke(self: &Arc<Self>, st: &mut State, ids: &[FiberId]) {
        for &id in ids {
            let Some(fiber) = st.fibers.get(&id) else {
                continue;
            };
            let epoch = current_epoch(st, id, fiber);
            let parent_ready = fiber.parent.is_none_or(|parent| {
                matches!(
                    st.state_of(parent),
                    FiberState::Loading | FiberState::Active
                )
            });
            match fiber.state {
                FiberState::Pending if !fiber.disposing && parent_ready => {
                    if let Some(epoch) = epoch {
                        self.start_load(st, id, epoch);
                    }
                }
                FiberState::Failed if !fiber.disposing && parent_ready => {
                    // A failed fiber retries when one of its providers is replaced.
                    if let Some(epoch) = epoch.filter(|epoch| *epoch != fiber.epoch) {
                        self.start_load(st, id, epoch);
                    }
                }
                FiberState::Loading | FiberState::Active
                    if fiber.starter.is_some() && epoch.as_ref() != Some(&fiber.epoch) =>
                {
                    self.start_unload(st, id);
                }
                _ => {}
            }
        }
    }

    fn start_load(self: &Arc<Self>, st: &mut State, id: FiberId, epoch: Vec<u64>) {
        let Some(fiber) = st.fibers.get_mut(&id) else {
            return;
        };
        let Some(starter) = fiber.starter.clone() else {
            return;
        };
        fiber.epoch = epoch;
        fiber.token += 1;
        fiber.error = None;
        let token = fiber.token;
        tracing::debug!(fiber = %fiber.label, "loading");
        st.set_state(id, FiberState::Loading);
        let ctx = Context::new(Arc::clone(self), id);
        let runtime = Arc::clone(self);
        let task = self.handle().spawn(async move {
            // A panicking plugin fails its fiber like an error would, rather than leaving it
            // loading forever.
            let result = AssertUnwindSafe(starter.start(ctx))
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| Err(StartError::Panic(panic_message(panic.as_ref()))));
            runtime.finish_load(id, token, result);
        });
        if let Some(fiber) = st.fibers.get_mut(&id) {
            fiber.task = Some(task.abort_handle());
        }
    }

    fn finish_load(self: &Arc<Self>, id: FiberId, token: u64, result: Result<(), StartError>) {
        let mut st = self.lock();
        let Some(fiber) = st.fibers.get_mut(&id) else {
            return;
        };
        if fiber.token != token || fiber.state != FiberState::Loading {
            return;
        }
        fiber.task = None;
        match result {
            Ok(()) => match st.fibers.get(&id) {
                Some(fiber) if current_epoch(&st, id, fiber).as_ref() == Some(&fiber.epoch) => {
                    tracing::debug!(fiber = %fiber.label, "active");
                    let mut concerned = fiber.children.clone();
                    for effect in &fiber.effects {
                        if let Undo::Service { name, .. } = &effect.undo {
                            concerned.extend(st.injectors.get(name).into_iter().flatten());
                        }
                    }
                    st.set_state(id, FiberState::Active);
                    self.poke(&mut st, &concerned);
                }
                _ => self.start_unload(&mut st, id),
            },
            Err(error) => {
                let cause = error_chain(&error);
                tracing::debug!(fiber = %fiber.label, "failed: {cause}");
                fiber.error = Some(cause);
                fiber.failing = true;
                self.start_unload(&mut st, id);
            }
        }
        self.release(st);
        self.notify();
    }

    /// Moves `id` to `Unloading`: its dependents unload first, then its effects are undone
    /// newest first, then it returns to `Pending` (or `Failed`, or is removed when disposing).
    pub(crate) fn start_unload(self: &Arc<Self>, st: &mut State, id: FiberId) {
        let Some(fiber) = st.fibers.get_mut(&id) else {
            return;
        };
        if let Some(task) = fiber.task.take() {
            task.abort();
        }
        fiber.token += 1;
        tracing::debug!(fiber = %fiber.label, "unloading");
        let effects = std::mem::take(&mut fiber.effects);
        st.set_state(id, FiberState::Unloading);
        // Its services leave the table now (a replacement provider may come at once); the
        // fibers that injected them unload before any of its own effects is undone.
        let mut dependents = Vec::new();
        for effect in &effects {
            if let Undo::Service { name, provision } = &effect.undo {
                st.take_service(name, *provision);
                dependents.extend(st.injectors.get(name).into_iter().flatten().copied());
            }
        }
        self.poke(st, &dependents);
        let runtime = Arc::clone(self);
        self.handle().spawn(async move {
            runtime
                .wait_until(|st| {
                    dependents
                        .iter()
                        .all(|dependent| st.state_of(*dependent) != FiberState::Unloading)
                })
                .await;
            for effect in effects.into_iter().rev() {
                runtime.run_undo(effect.undo).await;
            }
            runtime.finish_unload(id);
        });
    }

    fn finish_unload(self: &Arc<Self>, id: FiberId) {
        let mut st = self.lock();
        let Some(fiber) = st.fibers.get_mut(&id) else {
            return;
        };
        if fiber.disposing {
            tracing::debug!(fiber = %fiber.label, "disposed");
            st.remove_fiber(id);
        } else if fiber.failing {
            fiber.failing = false;
            st.set_state(id, FiberState::Failed);
            // A provider may have changed while it was failing.
            self.poke(&mut st, &[id]);
        } else {
            st.set_state(id, FiberState::Pending);
            self.poke(&mut st, &[id]);
        }
        self.release(st);
        self.notify();
    }

    /// Undoes one registration.
    pub(crate) async fn run_undo(self: &Arc<Self>, undo: Undo) {
        match undo {
            Undo::Run(undo) => {
                if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(undo)) {
                    tracing::error!(
                        "an effect panicked while being undone: {}",
                        panic_message(panic.as_ref())
                    );
                }
            }
            Undo::RunAsync(undo) => {
                if let Err(panic) = AssertUnwindSafe(async move { undo().await })
                    .catch_unwind()
                    .await
                {
                    tracing::error!(
                        "an effect panicked while being undone: {}",
                        panic_message(panic.as_ref())
                    );
                }
            }
            Undo::Listener { event, id } => {
                let mut st = self.lock();
                if let Some(table) = st.listeners.get_mut(&event) {
                    let replaced = (table.remove)(&mut table.list, id);
                    st.bury(replaced);
                }
                self.release(st);
            }
            Undo::Service { name, provision } => self.withdraw(&name, provision).await,
            Undo::Child(child) => self.dispose_fiber(child).await,
        }
    }

    /// Removes `id` for good, waiting until its effects are undone.
    pub(crate) async fn dispose_fiber(self: &Arc<Self>, id: FiberId) {
        {
            let mut st = self.lock();
            let Some(fiber) = st.fibers.get_mut(&id) else {
                return;
            };
            fiber.disposing = true;
            match fiber.state {
                FiberState::Pending | FiberState::Failed => {
                    st.remove_fiber(id);
                    self.release(st);
                    self.notify();
                    return;
                }
                FiberState::Loading | FiberState::Active => self.start_unload(&mut st, id),
                FiberState::Unloading | FiberState::Disposed => {}
            }
            self.release(st);
        }
        self.notify();
        self.wait_until(|st| !st.fibers.contains_key(&id)).await;
    }

    /// Undoes one effect of `fiber` ahead of its unload (what a [`crate::Disposer`] does).
    pub(crate) async fn dispose_effect(self: &Arc<Self>, fiber: FiberId, effect: u64) {
        let undo = {
            let mut st = self.lock();
            st.fibers.get_mut(&fiber).and_then(|record| {
                let index = record.effects.iter().position(|slot| slot.id == effect)?;
                Some(record.effects.remove(index).undo)
            })
        };
        if let Some(undo) = undo {
            self.run_undo(undo).await;
        }
    }
}

/// The provisions of `fiber`'s injected services as it sees them now, if all are visible.
fn current_epoch(st: &State, id: FiberId, fiber: &FiberRecord) -> Option<Vec<u64>> {
    fiber
        .inject
        .iter()
        .map(|name| st.visible_provision(name, id))
        .collect()
}
