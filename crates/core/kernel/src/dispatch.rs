//! Registering listeners and dispatching events through a [`Context`].

use std::any::Any;
use std::any::TypeId;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::join_all;

use crate::context::Context;
use crate::context::Disposer;
use crate::error::DispatchError;
use crate::error::KernelError;
use crate::error::ListenerFailure;
use crate::events::BailMode;
use crate::events::EmitMode;
use crate::events::Event;
use crate::events::IntoListener;
use crate::events::ListenerSlot;
use crate::events::Mode;
use crate::events::Next;
use crate::events::ParallelMode;
use crate::events::SerialMode;
use crate::events::Snapshot;
use crate::events::WaterfallListener;
use crate::events::WaterfallMode;
use crate::runtime::ListenerTable;
use crate::runtime::Undo;

type ListenerOf<E> = <<E as Event>::Mode as Mode>::Listener;

impl Context {
    /// Listens to `E` after the listeners registered before. For a waterfall, later listeners
    /// sit further inside the chain.
    pub fn on<E: Event>(
        &self,
        listener: impl IntoListener<E::Mode>,
    ) -> Result<Disposer, KernelError> {
        self.listen::<E>(listener.into_listener(), false)
    }

    /// Listens to `E` before every listener registered so far (outermost, for a waterfall).
    pub fn on_first<E: Event>(
        &self,
        listener: impl IntoListener<E::Mode>,
    ) -> Result<Disposer, KernelError> {
        self.listen::<E>(listener.into_listener(), true)
    }

    fn listen<E: Event>(
        &self,
        listener: ListenerOf<E>,
        first: bool,
    ) -> Result<Disposer, KernelError> {
        let mut st = self.runtime.lock();
        st.check_live(self.fiber)?;
        let id = st.next_id();
        let owner = st.fibers.get(&self.fiber).map_or_else(
            || Arc::new(st.label_of(self.fiber)),
            |fiber| Arc::clone(&fiber.label),
        );
        let slot = ListenerSlot {
            id,
            owner,
            listener,
        };
        let event = TypeId::of::<E>();
        let table = st.listeners.entry(event).or_insert_with(|| ListenerTable {
            list: Box::new(Snapshot::<ListenerOf<E>>::from(Vec::new())),
            remove: remove_listener::<ListenerOf<E>>,
        });
        let current = table
            .list
            .downcast_ref::<Snapshot<ListenerOf<E>>>()
            .map(|list| list.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let mut updated = Vec::with_capacity(current.len() + 1);
        if first {
            updated.push(slot);
            updated.extend(current);
        } else {
            updated.extend(current);
            updated.push(slot);
        }
        table.list = Box::new(Snapshot::<ListenerOf<E>>::from(updated));
        let effect = st.push_effect(self.fiber, Undo::Listener { event, id });
        Ok(self.disposer(effect))
    }

    fn snapshot<E: Event>(&self) -> Snapshot<ListenerOf<E>> {
        self.runtime
            .lock()
            .listeners
            .get(&TypeId::of::<E>())
            .and_then(|table| table.list.downcast_ref::<Snapshot<ListenerOf<E>>>())
            .cloned()
            .unwrap_or_else(|| Snapshot::from(Vec::new()))
    }

    /// How many listeners `E` has right now.
    pub fn listener_count<E: Event>(&self) -> usize {
        self.snapshot::<E>().len()
    }

    /// Calls every listener of `E` in order with `args`. All run even when some fail; the
    /// failures are returned together.
    pub fn emit<E>(&self, args: &<E::Mode as EmitMode>::Args) -> Result<(), DispatchError>
    where
        E: Event,
        E::Mode: EmitMode<Listener = crate::events::EmitListener<<E::Mode as EmitMode>::Args>>,
    {
        let mut failures = Vec::new();
        for slot in self.snapshot::<E>().iter() {
            if let Err(error) = (slot.listener)(args) {
                failures.push(failure(E::NAME, slot.owner.as_ref(), error));
            }
        }
        outcome(E::NAME, failures)
    }

    /// Starts every listener of `E` at once and awaits them all; failures are returned
    /// together.
    pub async fn parallel<E>(
        &self,
        args: <E::Mode as ParallelMode>::Args,
    ) -> Result<(), DispatchError>
    where
        E: Event,
        E::Mode: ParallelMode<
            Listener = crate::events::ParallelListener<<E::Mode as ParallelMode>::Args>,
        >,
    {
        let args = Arc::new(args);
        let snapshot = self.snapshot::<E>();
        let results = join_all(
            snapshot
                .iter()
                .map(|slot| (slot.listener)(Arc::clone(&args))),
        )
        .await;
        let failures = snapshot
            .iter()
            .zip(results)
            .filter_map(|(slot, result)| {
                result
                    .err()
                    .map(|error| failure(E::NAME, slot.owner.as_ref(), error))
            })
            .collect();
        outcome(E::NAME, failures)
    }

    /// Awaits the listeners of `E` one at a time; the first `Some` answer is returned and the
    /// rest are skipped. The first error stops the chain.
    pub async fn serial<E>(
        &self,
        args: <E::Mode as SerialMode>::Args,
    ) -> Result<Option<<E::Mode as SerialMode>::Output>, DispatchError>
    where
        E: Event,
        E::Mode: SerialMode<
            Listener = crate::events::SerialListener<
                <E::Mode as SerialMode>::Args,
                <E::Mode as SerialMode>::Output,
            >,
        >,
    {
        let args = Arc::new(args);
        for slot in self.snapshot::<E>().iter() {
            match (slot.listener)(Arc::clone(&args)).await {
                Ok(Some(answer)) => return Ok(Some(answer)),
                Ok(None) => {}
                Err(error) => {
                    return Err(DispatchError {
                        event: E::NAME,
                        failures: vec![failure(E::NAME, slot.owner.as_ref(), error)],
                    });
                }
            }
        }
        Ok(None)
    }

    /// Calls the listeners of `E` in order; the first `Some` answer is returned and the rest
    /// are skipped. The first error stops the chain.
    pub fn bail<E>(
        &self,
        args: &<E::Mode as BailMode>::Args,
    ) -> Result<Option<<E::Mode as BailMode>::Output>, DispatchError>
    where
        E: Event,
        E::Mode: BailMode<
            Listener = crate::events::BailListener<
                <E::Mode as BailMode>::Args,
                <E::Mode as BailMode>::Output,
            >,
        >,
    {
        for slot in self.snapshot::<E>().iter() {
            match (slot.listener)(args) {
                Ok(Some(answer)) => return Ok(Some(answer)),
                Ok(None) => {}
                Err(error) => {
                    return Err(DispatchError {
                        event: E::NAME,
                        failures: vec![failure(E::NAME, slot.owner.as_ref(), error)],
                    });
                }
            }
        }
        Ok(None)
    }

    /// Runs `args` down the listeners of `E`, outermost first, with `inner` at the bottom, and
    /// returns what comes back up. A listener that does not call `next` short-circuits.
    pub fn waterfall<E, F, Fut>(
        &self,
        args: <E::Mode as WaterfallMode>::Args,
        inner: F,
    ) -> impl Future<Output = <E::Mode as WaterfallMode>::Output> + Send + 'static
    where
        E: Event,
        E::Mode: WaterfallMode<
            Listener = WaterfallListener<
                <E::Mode as WaterfallMode>::Args,
                <E::Mode as WaterfallMode>::Output,
            >,
        >,
        F: FnOnce(<E::Mode as WaterfallMode>::Args) -> Fut + Send + 'static,
        Fut: Future<Output = <E::Mode as WaterfallMode>::Output> + Send + 'static,
    {
        let next = Next::start(
            self.snapshot::<E>(),
            Box::new(move |args| Box::pin(inner(args))),
        );
        next.run(args)
    }
}

/// Replaces `list` with a copy without listener `id`; returns the old list, to be dropped
/// once the lock is released.
fn remove_listener<L: Clone + Send + Sync + 'static>(
    list: &mut Box<dyn Any + Send + Sync>,
    id: u64,
) -> Box<dyn Any + Send + Sync> {
    let kept: Vec<ListenerSlot<L>> = list
        .downcast_ref::<Snapshot<L>>()
        .map(|current| {
            current
                .iter()
                .filter(|slot| slot.id != id)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    std::mem::replace(list, Box::new(Snapshot::<L>::from(kept)))
}

fn failure(
    event: &'static str,
    owner: &crate::fiber::FiberLabel,
    error: crate::error::BoxError,
) -> ListenerFailure {
    tracing::warn!(event, listener = %owner, "listener failed: {error}");
    ListenerFailure {
        owner: owner.clone(),
        error,
    }
}

fn outcome(event: &'static str, failures: Vec<ListenerFailure>) -> Result<(), DispatchError> {
    if failures.is_empty() {
        Ok(())
    } else {
        Err(DispatchError { event, failures })
    }
}
