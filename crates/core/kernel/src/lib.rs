//! The dsh plugin kernel: the Cordis model in Rust.
//!
//! A [`Kernel`] holds services by name ([`ServiceKey`]), plugins ([`Plugin`]) mounted as
//! fibers, and typed events ([`Event`]). The rules:
//!
//! - A fiber starts once every service it injects is provided and its provider is active.
//! - When a provider goes away or is replaced, its dependents unload first (their effects
//!   undone newest first) and go back to pending; they load again, with freshly resolved config,
//!   once their services are active again.
//! - A second provider for one service is an error naming both fibers.
//! - Every registration (service, listener, child plugin, effect) belongs to the registering
//!   fiber and returns a [`Disposer`]; unloading the fiber undoes them all, newest first.
//! - Events dispatch in one of five modes fixed by the event type: [`Emit`], [`Parallel`],
//!   [`Serial`], [`Bail`], [`Waterfall`]. No lock is held while a listener runs.
//! - [`Kernel::audit`] reports every fiber that did not activate, with its cause or the
//!   services it waits for.
//!
//! ```
//! use std::sync::Arc;
//! use dsh_kernel::{BoxError, Context, Kernel, Plugin, ServiceKey};
//!
//! const GREETING: ServiceKey<String> = ServiceKey::new("greeting");
//!
//! struct Greeter;
//! impl Plugin for Greeter {
//!     type Config = String;
//!     async fn apply(&self, ctx: Context, config: String) -> Result<(), BoxError> {
//!         ctx.provide(&GREETING, Arc::new(config))?;
//!         Ok(())
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let kernel = Kernel::new()?;
//! let fiber = kernel.root().plugin(Greeter, serde_json::json!("hello"))?;
//! kernel.settle().await;
//! kernel.audit(&[fiber.id()])?;
//! assert_eq!(*kernel.root().require(&GREETING)?, "hello");
//! kernel.shutdown().await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod audit;
mod context;
mod dispatch;
mod error;
mod events;
mod fiber;
mod kernel;
mod key;
mod plugin;
mod runtime;
pub mod sync;

pub use audit::AuditError;
pub use audit::AuditIssue;
pub use audit::AuditProblem;
pub use context::Context;
pub use context::Disposer;
pub use context::FiberHandle;
pub use error::BoxError;
pub use error::DispatchError;
pub use error::KernelError;
pub use error::ListenerFailure;
pub use error::StartError;
pub use error::error_chain;
pub use error::panic_message;
pub use events::Bail;
pub use events::BailListener;
pub use events::BailMode;
pub use events::Emit;
pub use events::EmitListener;
pub use events::EmitMode;
pub use events::Event;
pub use events::IntoListener;
pub use events::Mode;
pub use events::Next;
pub use events::Parallel;
pub use events::ParallelListener;
pub use events::ParallelMode;
pub use events::Serial;
pub use events::SerialListener;
pub use events::SerialMode;
pub use events::Waterfall;
pub use events::WaterfallListener;
pub use events::WaterfallMode;
pub use fiber::FiberId;
pub use fiber::FiberLabel;
pub use fiber::FiberState;
pub use kernel::Kernel;
pub use key::ServiceKey;
pub use key::ServiceName;
pub use plugin::ConfigResolver;
pub use plugin::ConfigSource;
pub use plugin::DynPlugin;
pub use plugin::Mount;
pub use plugin::Plugin;
