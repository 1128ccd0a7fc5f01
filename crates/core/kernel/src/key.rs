//! Typed names for service slots.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A typed name for a service slot.
///
/// The string is what YAML rows name in `inject`; the type is what Rust callers get back.
/// Seam crates define their own keys, for example
/// `pub const SHELL: ServiceKey<dyn ShellExecutor> = ServiceKey::new("shell");`, and the
/// key's crate is the only place that spells the name: everything else goes through the key.
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

    /// The slot's name, as rows spell it in `inject` and plugins list it in
    /// [`crate::Plugin::inject`]: `const { &[TOOLS.name(), SHELL.name()] }`.
    pub const fn name(&self) -> ServiceName {
        ServiceName(self.name)
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

/// The name of a service slot without its type: what a plugin's inject list holds.
///
/// Only a [`ServiceKey`] makes one ([`ServiceKey::name`]), so a plugin's inject list names
/// exactly the slots that keys provide and require.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServiceName(&'static str);

impl ServiceName {
    /// The name as rows spell it.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for ServiceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl fmt::Display for ServiceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
