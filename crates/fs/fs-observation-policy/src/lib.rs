//! The `dsh-fs-observation-policy` plugin (dsh's `fs-observation-policy`): read before you
//! write. It decides the `fs/write-intent` and `fs/edit-intent` of every file tool call
//! from what the calling session has seen of the file, and records `fs/observed`. It
//! provides no service and does no I/O.
//!
//! | the session has seen the file | `fs/write-intent` | `fs/edit-intent` |
//! |---|---|---|
//! | present at version v | replace only while at v | edit only while at v |
//! | absent | create only | `cannot edit "<p>": not found` (`FS_NOT_FOUND`) |
//! | never, or the call has no session | create only | `edit requires reading "<p>" first` (`FS_NOT_OBSERVED`) |
//!
//! So overwriting a file the session never read fails with `FS_NOT_OBSERVED`, and writing
//! or editing one that changed since it was read (by `bash`, an editor, another session)
//! fails with `FS_STALE_VERSION`. Observations live in memory for the life of the plugin,
//! by session id: a session resumed in another process reads again. Calls outside a session (such as `dsh tools call`) have no
//! owner, so what they see is never kept: their writes only create, and they cannot edit.
//!
//! Both deciders answer without calling `next`: the first decider registered wins.

mod state;

use std::sync::Arc;

use dsh_fs::events::{FsEditIntentEvent, FsObservedEvent, FsWriteIntentEvent};
use dsh_fs::{FsError, FsErrorCode, FsObservation, FsWriteIntent, quoted};
use dsh_kernel::{BoxError, Context, Plugin};

pub use state::Observations;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-fs-observation-policy";

/// The `dsh-fs-observation-policy` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsObservationPolicyPlugin;

impl Plugin for FsObservationPolicyPlugin {
    type Config = serde_json::Value;

    async fn apply(&self, ctx: Context, _config: serde_json::Value) -> Result<(), BoxError> {
        let seen = Arc::new(Observations::default());
        let writes = Arc::clone(&seen);
        ctx.on::<FsWriteIntentEvent>(move |args: dsh_fs::events::FsIntentArgs, _next| {
            let seen = Arc::clone(&writes);
            async move {
                let intent = match seen.get(args.actor.session_id.as_deref(), &args.target) {
                    Some(FsObservation::Present(version)) => {
                        FsWriteIntent::ReplaceIfVersion(version)
                    }
                    Some(FsObservation::Absent) | None => FsWriteIntent::CreateIfAbsent,
                };
                Ok(Some(intent))
            }
        })?;
        let edits = Arc::clone(&seen);
        ctx.on::<FsEditIntentEvent>(move |args: dsh_fs::events::FsIntentArgs, _next| {
            let seen = Arc::clone(&edits);
            async move {
                let shown = quoted(&args.target.display_path);
                match seen.get(args.actor.session_id.as_deref(), &args.target) {
                    Some(FsObservation::Present(version)) => Ok(Some(version)),
                    Some(FsObservation::Absent) => Err(FsError::new(
                        FsErrorCode::NotFound,
                        format!("cannot edit {shown}: not found"),
                    )),
                    None => Err(FsError::new(
                        FsErrorCode::NotObserved,
                        format!("edit requires reading {shown} first"),
                    )),
                }
            }
        })?;
        ctx.on::<FsObservedEvent>(move |observed: &dsh_fs::FsObserved| {
            seen.record(observed);
            Ok(())
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
