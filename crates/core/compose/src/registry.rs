//! The plugins a binary can mount, by the names rows use.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use dsh_kernel::DynPlugin;

/// The name of the built-in row kind that mounts its `config` rows as children.
pub const GROUP_PLUGIN: &str = "cordis:group";

/// Plugin names mapped to plugins. The binary fills it; composition only looks names up.
#[derive(Clone, Default)]
pub struct Registry {
    plugins: BTreeMap<String, Arc<dyn DynPlugin>>,
}

/// A plugin name was registered twice, or is reserved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin name \"{0}\" is already registered or reserved")]
pub struct RegistryError(pub String);

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `plugin` under `name`.
    pub fn register(&mut self, name: &str, plugin: impl DynPlugin) -> Result<(), RegistryError> {
        if name == GROUP_PLUGIN || self.plugins.contains_key(name) {
            return Err(RegistryError(name.to_owned()));
        }
        self.plugins.insert(name.to_owned(), Arc::new(plugin));
        Ok(())
    }

    /// The plugin registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynPlugin>> {
        self.plugins.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.plugins.keys().map(String::as_str)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.plugins.keys()).finish()
    }
}
