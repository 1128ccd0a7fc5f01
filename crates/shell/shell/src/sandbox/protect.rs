//! What the harness keeps out of confined commands' reach even inside a writable root: its
//! own control files (paths no confined command may write) and its own servers (loopback
//! ports no confined command may connect to).
//!
//! The launcher provides one [`SandboxProtection`] on the root context before any row
//! mounts ([`SANDBOX_PROTECTION`]), holding `$DSH_HOME` and the patch layers; rows add what
//! they own (a server its port) for as long as they hold the returned [`Protection`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use dsh_kernel::sync::lock;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// The registry of protected paths and fenced ports (`ctx.sandboxProtection`).
pub const SANDBOX_PROTECTION: dsh_kernel::ServiceKey<SandboxProtection> =
    dsh_kernel::ServiceKey::new("sandboxProtection");

/// A path confined commands may read but never write, and what it is (for messages).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProtectedPath {
    /// The path (absolute; a directory protects everything beneath it).
    pub path: PathBuf,
    /// What it is, in words that fit "… (<owner>)": `dsh's home ($DSH_HOME)`.
    pub owner: String,
}

impl ProtectedPath {
    /// A protected `path` described as `owner`.
    pub fn new(path: impl Into<PathBuf>, owner: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            owner: owner.into(),
        }
    }
}

/// Protected paths and fenced loopback ports, each held by a [`Protection`].
#[derive(Debug)]
pub struct SandboxProtection {
    state: Mutex<State>,
    changes: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    paths: BTreeMap<u64, ProtectedPath>,
    ports: BTreeMap<u64, u16>,
}

/// Holds one entry of a [`SandboxProtection`]; dropping it withdraws the entry.
#[derive(Debug)]
#[must_use = "dropping a Protection withdraws it at once"]
pub struct Protection {
    registry: Weak<SandboxProtection>,
    id: u64,
}

impl Drop for Protection {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.update(|state| {
                state.paths.remove(&self.id);
                state.ports.remove(&self.id);
            });
        }
    }
}

impl SandboxProtection {
    /// An empty registry.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::default()),
            changes: watch::Sender::new(0),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state());
        self.changes
            .send_modify(|epoch| *epoch = epoch.wrapping_add(1));
    }

    fn add(self: &Arc<Self>, change: impl FnOnce(&mut State, u64)) -> Protection {
        let mut id = 0;
        self.update(|state| {
            id = state.next_id;
            state.next_id += 1;
            change(state, id);
        });
        Protection {
            registry: Arc::downgrade(self),
            id,
        }
    }

    /// Keeps `path` out of every confined command's writes while the handle lives.
    pub fn protect_path(self: &Arc<Self>, path: ProtectedPath) -> Protection {
        self.add(|state, id| {
            state.paths.insert(id, path);
        })
    }

    /// Keeps every confined command from connecting to TCP `port` while the handle lives.
    pub fn fence_port(self: &Arc<Self>, port: u16) -> Protection {
        self.add(|state, id| {
            state.ports.insert(id, port);
        })
    }

    /// The protected paths, in registration order.
    pub fn paths(&self) -> Vec<ProtectedPath> {
        self.state().paths.values().cloned().collect()
    }

    /// The fenced ports, sorted and without duplicates.
    pub fn fenced_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.state().ports.values().copied().collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }

    /// Changes whenever an entry is added or withdrawn.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_as_long_as_their_handles() {
        let registry = SandboxProtection::new();
        let mut changes = registry.changes();
        let home = registry.protect_path(ProtectedPath::new("/h/.dsh", "dsh's home"));
        let port = registry.fence_port(3080);
        let again = registry.fence_port(3080);
        assert!(changes.has_changed().unwrap_or(false));
        changes.mark_unchanged();
        assert_eq!(
            registry.paths(),
            vec![ProtectedPath::new("/h/.dsh", "dsh's home")]
        );
        assert_eq!(registry.fenced_ports(), vec![3080]);
        drop(port);
        assert_eq!(registry.fenced_ports(), vec![3080], "one holder is left");
        drop(again);
        drop(home);
        assert!(registry.fenced_ports().is_empty());
        assert!(registry.paths().is_empty());
        assert!(changes.has_changed().unwrap_or(false));
    }
}
