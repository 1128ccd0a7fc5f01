//! When the whole tree has booted.

use dsh_kernel::ServiceKey;
use tokio::sync::watch;

/// Tells app rows when the whole tree has booted (dsh's `ctx.loader.await()`): rows mount
/// concurrently, so an app that drives agents waits for it before starting, lest an
/// adapter or tool row is still loading.
pub const LOADER: ServiceKey<Loader> = ServiceKey::new("loader");

/// The boot state a launcher publishes; see [`LOADER`].
#[derive(Debug)]
pub struct Loader {
    settled: watch::Sender<bool>,
}

impl Default for Loader {
    fn default() -> Self {
        Self::new()
    }
}

impl Loader {
    /// A loader whose tree has not booted yet.
    pub fn new() -> Self {
        Self {
            settled: watch::channel(false).0,
        }
    }

    /// Marks the tree booted (every row active and audited).
    pub fn mark_settled(&self) {
        self.settled.send_replace(true);
    }

    /// Waits until the tree has booted. A boot that fails never settles: the launcher then
    /// unloads the tree, which stops the waiting task.
    pub async fn settled(&self) {
        let mut settled = self.settled.subscribe();
        let _ = settled.wait_for(|settled| *settled).await;
    }
}
