//! Typed events and their five dispatch modes.
//!
//! An event is a type that names itself and fixes its mode once, so a listener of the wrong
//! shape does not compile:
//!
//! ```
//! use dsh_kernel::{Event, Waterfall};
//!
//! /// Runs a command; listeners may rewrite it, or answer without calling `next`.
//! struct RunCommand;
//! impl Event for RunCommand {
//!     const NAME: &'static str = "demo/run-command";
//!     type Mode = Waterfall<String, String>;
//! }
//! ```
//!
//! | mode | listener | dispatch |
//! |---|---|---|
//! | [`Emit`] | `Fn(&A) -> Result<(), BoxError>` | every listener runs in order; failures are collected and returned |
//! | [`Parallel`] | `Fn(Arc<A>) -> impl Future<Output = Result<(), BoxError>>` | all start, all are awaited; failures are collected |
//! | [`Serial`] | `Fn(Arc<A>) -> impl Future<Output = Result<Option<R>, BoxError>>` | one at a time; the first `Some` wins, the first error stops |
//! | [`Bail`] | `Fn(&A) -> Result<Option<R>, BoxError>` | like serial, synchronous |
//! | [`Waterfall`] | `Fn(A, Next<A, R>) -> impl Future<Output = R>` | middleware: the first listener is outermost; not calling `next` short-circuits |

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::error::BoxError;

/// A typed event: its name and dispatch mode.
pub trait Event: 'static {
    /// The event name, as diagnostics print it (`tools/execute`).
    const NAME: &'static str;
    /// The dispatch mode, which fixes the payload and listener types.
    type Mode: Mode;
}

/// A dispatch mode: the shape of its listeners.
pub trait Mode: 'static {
    /// The stored form of one listener.
    type Listener: Clone + Send + Sync + 'static;
}

/// Observers called in order with a shared reference; each failure is collected.
pub struct Emit<A>(PhantomData<fn(A)>);
/// Async listeners started together and all awaited; failures are collected.
pub struct Parallel<A>(PhantomData<fn(A)>);
/// Async listeners awaited one at a time until one answers `Some`.
pub struct Serial<A, R>(PhantomData<fn(A) -> R>);
/// Sync listeners called in order until one answers `Some`.
pub struct Bail<A, R>(PhantomData<fn(A) -> R>);
/// Middleware: each listener gets the arguments and the rest of the chain as [`Next`].
pub struct Waterfall<A, R>(PhantomData<fn(A) -> R>);

/// Stored emit listener.
pub type EmitListener<A> = Arc<dyn Fn(&A) -> Result<(), BoxError> + Send + Sync>;
/// Stored parallel listener.
pub type ParallelListener<A> =
    Arc<dyn Fn(Arc<A>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;
/// Stored serial listener.
pub type SerialListener<A, R> =
    Arc<dyn Fn(Arc<A>) -> BoxFuture<'static, Result<Option<R>, BoxError>> + Send + Sync>;
/// Stored bail listener.
pub type BailListener<A, R> = Arc<dyn Fn(&A) -> Result<Option<R>, BoxError> + Send + Sync>;
/// Stored waterfall listener.
pub type WaterfallListener<A, R> =
    Arc<dyn Fn(A, Next<A, R>) -> BoxFuture<'static, R> + Send + Sync>;

impl<A: 'static> Mode for Emit<A> {
    type Listener = EmitListener<A>;
}
impl<A: 'static> Mode for Parallel<A> {
    type Listener = ParallelListener<A>;
}
impl<A: 'static, R: 'static> Mode for Serial<A, R> {
    type Listener = SerialListener<A, R>;
}
impl<A: 'static, R: 'static> Mode for Bail<A, R> {
    type Listener = BailListener<A, R>;
}
impl<A: 'static, R: 'static> Mode for Waterfall<A, R> {
    type Listener = WaterfallListener<A, R>;
}

/// A closure that can listen in mode `M`.
pub trait IntoListener<M: Mode> {
    /// The stored form of this listener.
    fn into_listener(self) -> M::Listener;
}

impl<A, F> IntoListener<Emit<A>> for F
where
    A: 'static,
    F: Fn(&A) -> Result<(), BoxError> + Send + Sync + 'static,
{
    fn into_listener(self) -> EmitListener<A> {
        Arc::new(self)
    }
}

impl<A, F, Fut> IntoListener<Parallel<A>> for F
where
    A: 'static,
    F: Fn(Arc<A>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    fn into_listener(self) -> ParallelListener<A> {
        Arc::new(move |args| Box::pin(self(args)))
    }
}

impl<A, R, F, Fut> IntoListener<Serial<A, R>> for F
where
    A: 'static,
    R: 'static,
    F: Fn(Arc<A>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<R>, BoxError>> + Send + 'static,
{
    fn into_listener(self) -> SerialListener<A, R> {
        Arc::new(move |args| Box::pin(self(args)))
    }
}

impl<A, R, F> IntoListener<Bail<A, R>> for F
where
    A: 'static,
    R: 'static,
    F: Fn(&A) -> Result<Option<R>, BoxError> + Send + Sync + 'static,
{
    fn into_listener(self) -> BailListener<A, R> {
        Arc::new(self)
    }
}

impl<A, R, F, Fut> IntoListener<Waterfall<A, R>> for F
where
    A: 'static,
    R: 'static,
    F: Fn(A, Next<A, R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    fn into_listener(self) -> WaterfallListener<A, R> {
        Arc::new(move |args, next| Box::pin(self(args, next)))
    }
}

/// The rest of a waterfall chain: the next listener, or the caller's inner function at the
/// bottom. It can be run once; a listener that never runs it short-circuits the chain.
pub struct Next<A, R> {
    chain: Snapshot<WaterfallListener<A, R>>,
    index: usize,
    inner: Box<dyn FnOnce(A) -> BoxFuture<'static, R> + Send>,
}

impl<A: Send + 'static, R: Send + 'static> Next<A, R> {
    pub(crate) fn start(
        chain: Snapshot<WaterfallListener<A, R>>,
        inner: Box<dyn FnOnce(A) -> BoxFuture<'static, R> + Send>,
    ) -> Self {
        Self {
            chain,
            index: 0,
            inner,
        }
    }

    /// Runs the rest of the chain with `args` and returns its result.
    pub fn run(self, args: A) -> BoxFuture<'static, R> {
        match self
            .chain
            .get(self.index)
            .map(|slot| Arc::clone(&slot.listener))
        {
            Some(listener) => listener(
                args,
                Next {
                    chain: self.chain,
                    index: self.index + 1,
                    inner: self.inner,
                },
            ),
            None => (self.inner)(args),
        }
    }
}

/// One registered listener with its owner, as stored in the listener table.
pub(crate) struct ListenerSlot<L> {
    pub(crate) id: u64,
    pub(crate) owner: Arc<crate::fiber::FiberLabel>,
    pub(crate) listener: L,
}

impl<L: Clone> Clone for ListenerSlot<L> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            owner: Arc::clone(&self.owner),
            listener: self.listener.clone(),
        }
    }
}

/// A snapshot of one event's listeners, cheap to clone; dispatch runs on a snapshot so no lock
/// is held while a listener runs.
pub(crate) type Snapshot<L> = Arc<[ListenerSlot<L>]>;

/// Modes whose dispatch takes the payload by reference and returns at once.
pub trait EmitMode: Mode {
    /// The payload.
    type Args: 'static;
}
/// Modes whose dispatch awaits every listener together.
pub trait ParallelMode: Mode {
    /// The payload.
    type Args: Send + Sync + 'static;
}
/// Modes whose dispatch awaits listeners one at a time until one answers.
pub trait SerialMode: Mode {
    /// The payload.
    type Args: Send + Sync + 'static;
    /// The answer.
    type Output: Send + 'static;
}
/// Modes whose dispatch calls sync listeners until one answers.
pub trait BailMode: Mode {
    /// The payload.
    type Args: 'static;
    /// The answer.
    type Output: 'static;
}
/// Middleware modes.
pub trait WaterfallMode: Mode {
    /// The arguments passed down the chain.
    type Args: Send + 'static;
    /// The result passed back up.
    type Output: Send + 'static;
}

impl<A: 'static> EmitMode for Emit<A> {
    type Args = A;
}
impl<A: Send + Sync + 'static> ParallelMode for Parallel<A> {
    type Args = A;
}
impl<A: Send + Sync + 'static, R: Send + 'static> SerialMode for Serial<A, R> {
    type Args = A;
    type Output = R;
}
impl<A: 'static, R: 'static> BailMode for Bail<A, R> {
    type Args = A;
    type Output = R;
}
impl<A: Send + 'static, R: Send + 'static> WaterfallMode for Waterfall<A, R> {
    type Args = A;
    type Output = R;
}
