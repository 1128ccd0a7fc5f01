//! What the launcher protects from confined commands before any row mounts: `$DSH_HOME`
//! (patch layers, profiles, settings, credentials, the default session stores) and each
//! `--patch` file. Rows add what they own to the same registry (`sandboxProtection`).

use std::sync::Arc;

use dsh_shell::{ProtectedPath, Protection, SandboxProtection};

use crate::prepare::Prepared;

/// How `$DSH_HOME` is named in refusals.
pub const HOME_OWNER: &str = "dsh's home ($DSH_HOME)";

/// How a `--patch` file is named in refusals.
pub const PATCH_OWNER: &str = "a patch layer given with --patch";

/// The registry of a launch and the entries the launcher holds in it (they last as long as
/// the returned handles).
pub fn for_launch(prepared: &Prepared) -> (Arc<SandboxProtection>, Vec<Protection>) {
    let registry = SandboxProtection::new();
    // The profile's scaffolding has created the home by now.
    let home = prepared.home.root();
    let mut held = vec![registry.protect_path(ProtectedPath::new(home, HOME_OWNER))];
    for patch in &prepared.patch_files {
        held.push(registry.protect_path(ProtectedPath::new(patch, PATCH_OWNER)));
    }
    (registry, held)
}
