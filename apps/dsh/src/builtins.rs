//! The plugins built into this binary, by the names rows use.
//!
//! Each seam crate exports its plugins; this is the one place that names them all. A row
//! whose plugin is not registered here fails at boot with an error naming the row and the
//! plugin. Nothing is registered yet: the plugin crates (session, persistence, shell, tools,
//! llm, agent loop, apps) land in their own issues, each adding its line here.

use dsh_compose::Registry;

/// The registry of built-in plugins.
pub fn registry() -> Registry {
    Registry::new()
}
