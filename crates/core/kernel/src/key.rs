//! Typed names for service slots.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A typed name for a service slot.
///
/// The string is what YAML rows name in `inject`; the type is what Rust callers get back.
/// Seam crates define their own keys, for example
/// `pub const SHELL: ServiceKey<dyn ShellExecutor> = ServiceKey::new("shell");`.
pub struct ServiceKey<T: ?Sized> {
    name: &'static str,
    _type: PhantomData<fn() -> Arc<T>>,
}

impl<T: ?Sized> ServiceKey<T> {
    /// A key for the service slot called `name`.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            _type: PhantomData,
        }
    }

    /// The slot's name, as rows spell it in `inject`.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T: ?Sized> Clone for ServiceKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for ServiceKey<T> {}

impl<T: ?Sized> fmt::Debug for ServiceKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ServiceKey").field(&self.name).finish()
    }
}
