//! The route table: which adapter serves each provider, under which registration, with the
//! retry policy captured when it registered.

use std::sync::{Arc, Mutex, Weak};

use dsh_kernel::sync::lock;

use crate::adapter::LlmAdapter;
use crate::failure::{LlmFailure, codes};
use crate::model::ProviderInfo;
use crate::retry::RetryPolicy;

/// One provider route.
#[derive(Clone)]
pub(super) struct Route {
    pub(super) registration: u64,
    pub(super) info: ProviderInfo,
    pub(super) adapter: Arc<dyn LlmAdapter>,
    pub(super) retry_policy: RetryPolicy,
}

/// Every route, in registration order.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) next_registration: u64,
    pub(super) routes: Vec<Route>,
}

impl Routes {
    pub(super) fn find(&self, provider: &str) -> Option<&Route> {
        self.routes.iter().find(|route| route.info.id == provider)
    }
}

/// The table the runtime and its prepared calls share.
pub(super) type Shared = Arc<Mutex<Routes>>;

/// The route of `provider`; `NO_ADAPTER` when none serves it.
pub(super) fn find(routes: &Mutex<Routes>, provider: &str) -> Result<Route, LlmFailure> {
    lock(routes)
        .find(provider)
        .cloned()
        .ok_or_else(|| LlmFailure::no_adapter(provider))
}

/// Whether `a` and `b` are the same adapter instance.
pub(super) fn same_adapter(a: &Arc<dyn LlmAdapter>, b: &Arc<dyn LlmAdapter>) -> bool {
    std::ptr::eq(Arc::as_ptr(a).cast::<()>(), Arc::as_ptr(b).cast::<()>())
}

/// `DUPLICATE_ADAPTER` for a route that is already served.
pub(super) fn duplicate(provider: &str) -> LlmFailure {
    LlmFailure::new(
        codes::DUPLICATE_ADAPTER,
        format!("an adapter for provider \"{provider}\" is already registered"),
    )
}

/// Removes the routes of `registration`; whether any were there.
pub(super) fn unregister(routes: &Weak<Mutex<Routes>>, registration: u64) -> bool {
    let Some(routes) = routes.upgrade() else {
        return false;
    };
    let removed: Vec<Route> = {
        let mut table = lock(&routes);
        let (removed, kept) = std::mem::take(&mut table.routes)
            .into_iter()
            .partition(|route| route.registration == registration);
        table.routes = kept;
        removed
    };
    // Adapters may run arbitrary code when dropped; not under the lock.
    let any = !removed.is_empty();
    drop(removed);
    any
}
