//! What `write` and `edit` share: the call's policy, its target, the mapping of failures to
//! what the model reads, and the diff metadata of the result.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsError, FsTarget};
use dsh_shell::SandboxExecutionPolicy;
use dsh_tools::{ToolError, ToolRunContext};
use serde_json::{Value, json};

use crate::blocking::on_disk;
use crate::context::{FsSandbox, session_cwd};
use crate::diff::hunk_diffs;
use crate::error::{map_denial, remediate, tool_error};

/// One mutation call, ready to run: its policy and target.
pub struct Mutation {
    /// The policy the call runs under (`None` over a non-confining filesystem).
    pub policy: Option<SandboxExecutionPolicy>,
    /// The file.
    pub target: FsTarget,
    escalation: bool,
}

impl Mutation {
    /// Resolves the call's policy (asking for an escalation when the model did), then its
    /// path: against the real workspace root under a policy, else the session's directory.
    pub async fn prepare(
        sandbox: &FsSandbox,
        fs: &Arc<dyn FileSystem>,
        args: &Value,
        run: &ToolRunContext,
        file_path: &str,
    ) -> Result<Self, ToolError> {
        let policy = sandbox.resolve_policy(args, run).await?;
        let escalation = sandbox.escalation();
        let cwd = match &policy {
            Some(policy) => Some(
                dsh_shell::canonical_path(&policy.workspace_root)
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => session_cwd(run, file_path),
        };
        let path = file_path.to_owned();
        let resolved = on_disk(fs, move |fs| fs.resolve(&path, cwd.as_deref())).await;
        let mode = policy.as_ref().map(|policy| policy.mode);
        let target =
            resolved.map_err(|error| tool_error(remediate(map_denial(error, mode, escalation))))?;
        Ok(Self {
            policy,
            target,
            escalation,
        })
    }

    /// A failure as the model reads it: a sandbox denial as dsh's marker (with the
    /// escalation hint when offered), a stale or unread file with dsh's remedy.
    pub fn fail(&self, error: FsError) -> ToolError {
        let mode = self.policy.as_ref().map(|policy| policy.mode);
        tool_error(remediate(map_denial(error, mode, self.escalation)))
    }
}

/// `{diffs}` between a value's `before` and `after` (none when either is missing).
pub fn diff_meta(value: &Value, file_path: &str) -> Value {
    let diffs = match (
        value.get("before").and_then(Value::as_str),
        value.get("after").and_then(Value::as_str),
    ) {
        (Some(before), Some(after)) => hunk_diffs(file_path, before, after),
        _ => Vec::new(),
    };
    json!({ "diffs": diffs })
}
