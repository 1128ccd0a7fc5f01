//! Fiber identity, labels and lifecycle states.

use std::fmt;

/// The identity of one plugin instance (a fiber) inside a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FiberId(pub(crate) u64);

/// Where a fiber is in its lifecycle. The numeric values are Cordis's, so diagnostics read alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FiberState {
    /// Waiting for its injected services (or its parent) to become active.
    Pending = 0,
    /// Its config is being resolved and its `apply` is running.
    Loading = 1,
    /// `apply` returned successfully and its dependencies are unchanged.
    Active = 2,
    /// `apply` or config resolution failed; its effects have been undone.
    Failed = 3,
    /// Removed for good.
    Disposed = 4,
    /// Its effects are being undone, newest first.
    Unloading = 5,
}

impl FiberState {
    /// The lower-case name used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Loading => "loading",
            Self::Active => "active",
            Self::Failed => "failed",
            Self::Disposed => "disposed",
            Self::Unloading => "unloading",
        }
    }

    /// Whether the fiber is between states (loading or unloading).
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Loading | Self::Unloading)
    }
}

impl fmt::Display for FiberState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How messages name a fiber: the composition row it came from (if any) and its plugin.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FiberLabel {
    /// The row id, when the fiber was mounted from a composition row.
    pub row: Option<String>,
    /// The plugin name.
    pub plugin: String,
}

impl FiberLabel {
    /// A label for a fiber mounted from row `row` with plugin `plugin`.
    pub fn row(row: impl Into<String>, plugin: impl Into<String>) -> Self {
        Self {
            row: Some(row.into()),
            plugin: plugin.into(),
        }
    }

    /// A label for a fiber that no row names (the root, or a plugin's own child).
    pub fn plugin(plugin: impl Into<String>) -> Self {
        Self {
            row: None,
            plugin: plugin.into(),
        }
    }
}

impl fmt::Display for FiberLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.row {
            Some(row) => write!(f, "row \"{row}\" ({})", self.plugin),
            None => write!(f, "plugin \"{}\"", self.plugin),
        }
    }
}
