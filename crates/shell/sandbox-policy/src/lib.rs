//! The sandbox policy service (`ctx.sandboxPolicy`, dsh's `sandbox-policy`).
//!
//! It owns the deployment's default file mode and fallback workspace root, and resolves the
//! policy of each call: an approved escalation outranks the session's last `sandbox/mode`
//! event, which outranks the default; the workspace root is the session's `cwd`; the
//! protected paths are those of the `sandboxProtection` registry (dsh's home, patch
//! layers, session stores) and the row's `protectedPaths`. Shell executors confine by it;
//! the bash tool asks it before every call.

mod plugin;
mod prompt;
mod service;

pub use plugin::{CONFIGURED_OWNER, PLUGIN_NAME, SandboxPolicyConfig, SandboxPolicyPlugin};
pub use prompt::{POLICY_CONTEXT_NAME, POLICY_CONTEXT_ORDER};
pub use service::{LocalSandboxPolicy, last_sandbox_mode, policy_context};
