//! The kernel: the root of one plugin runtime.

use std::sync::Arc;

use crate::audit::AuditError;
use crate::context::Context;
use crate::error::KernelError;
use crate::fiber::FiberId;
use crate::runtime::ROOT;
use crate::runtime::Runtime;

/// One plugin runtime. Its root context is always active; everything mounted under it lives
/// until [`Kernel::shutdown`].
pub struct Kernel {
    runtime: Arc<Runtime>,
}

impl Kernel {
    /// A new, empty runtime. Must be called from inside a tokio runtime, which runs the
    /// plugins' tasks.
    pub fn new() -> Result<Self, KernelError> {
        Ok(Self {
            runtime: Runtime::new()?,
        })
    }

    /// The root context: provide launcher services and mount rows through it.
    pub fn root(&self) -> Context {
        Context::new(Arc::clone(&self.runtime), ROOT)
    }

    /// Waits until no fiber is loading or unloading.
    pub async fn settle(&self) {
        self.runtime.wait_until(|st| st.busy() == 0).await;
    }

    /// The fibers mounted by fiber `id` that still exist, in mount order.
    pub fn children(&self, id: FiberId) -> Vec<FiberId> {
        self.runtime
            .lock()
            .fibers
            .get(&id)
            .map(|fiber| fiber.children.clone())
            .unwrap_or_default()
    }

    /// Checks that each of `fibers` is active; otherwise lists each failed fiber with its cause
    /// and each pending one with the services it waits for. Call after [`Kernel::settle`].
    pub fn audit(&self, fibers: &[FiberId]) -> Result<(), AuditError> {
        crate::audit::audit(&self.runtime.lock(), fibers)
    }

    /// Unloads everything: the root's registrations are undone newest first, which disposes
    /// every mounted fiber after its dependents.
    pub async fn shutdown(&self) {
        let effects = {
            let mut st = self.runtime.lock();
            st.fibers
                .get_mut(&ROOT)
                .map(|root| std::mem::take(&mut root.effects))
                .unwrap_or_default()
        };
        for effect in effects.into_iter().rev() {
            self.runtime.run_undo(effect.undo).await;
        }
    }

    /// [`Kernel::shutdown`], waiting at most `limit`: whether the tree unloaded in time. Undos
    /// still running then go on in the background; a process about to exit uses this so a
    /// stuck plugin cannot hold it.
    pub async fn shutdown_within(&self, limit: std::time::Duration) -> bool {
        tokio::time::timeout(limit, self.shutdown()).await.is_ok()
    }
}
