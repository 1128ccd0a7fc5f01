//! `create`: a new file, never an overwrite.

use dsh_fs::{FsObservation, FsWriteIntent};
use dsh_tools::{ToolError, ToolRunContext};

use crate::args::{Command, EditorArgs, required_for_command};
use crate::policy::MutationPolicy;
use crate::seam::Seam;

/// Runs `create`: refuses a path where anything exists (a plain error that records
/// nothing), asks `fs/write-intent` (default: create only if absent), writes under the call's
/// sandbox policy and records the new file as present.
pub(crate) async fn create(
    seam: &Seam,
    policy: &MutationPolicy,
    args: &EditorArgs,
    run: &ToolRunContext,
) -> Result<String, ToolError> {
    let content = required_for_command(
        args.file_text.as_deref(),
        "file_text",
        Command::Create,
        true,
    )?;
    let sandbox = policy.resolve(run);
    let target = seam.resolve(&args.path).await?;
    let display = &target.display_path;
    if seam.stat(&target).await?.is_some() {
        return Err(ToolError::new(format!(
            "File already exists at: {display}. Cannot overwrite files using command `create`."
        )));
    }
    let intent = seam
        .write_intent(&target, Some(FsWriteIntent::CreateIfAbsent))
        .await?;
    let outcome = seam
        .write_text(&target, content.to_owned(), intent, sandbox.clone())
        .await
        .map_err(|error| MutationPolicy::map_error(error, sandbox.as_ref()))?;
    seam.observe(&target, FsObservation::Present(outcome.version))?;
    Ok(format!("New file created successfully at: {display}"))
}
