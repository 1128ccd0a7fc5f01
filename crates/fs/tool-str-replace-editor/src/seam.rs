//! One call's view of the filesystem seam: the blocking [`FileSystem`] methods run on a
//! blocking thread, the `fs/*` events dispatched with the call as actor, and dsh's common
//! path handling (`resolveTarget`, `statExisting`).
//!
//! The filesystem takes no signal, so cancellation is checked before each filesystem step:
//! a cancelled call stops with dsh's `<verb> aborted` (`FS_ABORTED`) before touching the disk
//! again. A started step always runs to its end.

use std::path::Path;
use std::sync::Arc;

use dsh_fs::events::{edit_intent, observe, write_intent};
use dsh_fs::{
    FileSystem, FsActor, FsError, FsErrorCode, FsInfo, FsKind, FsObservation, FsTarget, FsVersion,
    FsWriteIntent, FsWriteOutcome,
};
use dsh_kernel::Context;
use dsh_shell::SandboxExecutionPolicy;
use dsh_tools::{CancellationToken, ToolError, ToolRunContext};

use crate::args::Command;
use crate::error::{from_fs, fs_failure};
use crate::js::is_blank;
use crate::schema::TOOL_NAME;

/// The filesystem as one call uses it.
pub(crate) struct Seam {
    ctx: Context,
    fs: Arc<dyn FileSystem>,
    signal: CancellationToken,
    actor: FsActor,
}

impl Seam {
    /// The seam of the call `run`; events dispatch through `ctx`.
    pub fn new(ctx: &Context, fs: &Arc<dyn FileSystem>, run: &ToolRunContext) -> Self {
        Self {
            ctx: ctx.clone(),
            fs: Arc::clone(fs),
            signal: run.signal.clone(),
            actor: FsActor {
                session_id: run
                    .caller
                    .as_ref()
                    .and_then(|caller| caller.session_id.clone()),
                tool_name: TOOL_NAME.to_owned(),
                call_id: run.call_id.clone(),
            },
        }
    }

    /// Runs `work` on a blocking thread, unless the call is already cancelled (then
    /// `<verb> aborted`).
    pub async fn blocking<T, F>(&self, verb: &str, work: F) -> Result<T, FsError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn FileSystem, &CancellationToken) -> Result<T, FsError> + Send + 'static,
    {
        if self.signal.is_cancelled() {
            return Err(FsError::aborted(verb));
        }
        let fs = Arc::clone(&self.fs);
        let signal = self.signal.clone();
        tokio::task::spawn_blocking(move || work(fs.as_ref(), &signal))
            .await
            .unwrap_or_else(|error| {
                let message = format!("filesystem call failed: {error}");
                Err(FsError::plain(
                    message.clone(),
                    std::io::Error::other(message),
                ))
            })
    }

    /// dsh's `resolveTarget`: a non-blank absolute path, resolved with no cwd.
    pub async fn resolve(&self, path: &str) -> Result<FsTarget, ToolError> {
        if is_blank(path) {
            return Err(ToolError::new("path must be a non-empty string"));
        }
        if !Path::new(path).is_absolute() {
            return Err(ToolError::new(format!(
                "The path {path} is not an absolute path, it should start with `/`. Maybe you \
                 meant /{path}?"
            )));
        }
        let path = path.to_owned();
        self.blocking("resolve", move |fs, _| fs.resolve(&path, None))
            .await
            .map_err(|error| from_fs(&error))
    }

    /// Metadata of `target`; `None` when nothing is there.
    pub async fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, ToolError> {
        let target = target.clone();
        self.blocking("stat", move |fs, _| fs.stat(&target))
            .await
            .map_err(|error| from_fs(&error))
    }

    /// dsh's `statExisting`: a miss records absence and fails `FS_NOT_FOUND`; a directory is
    /// only good for `view`.
    pub async fn stat_existing(
        &self,
        target: &FsTarget,
        command: Command,
    ) -> Result<FsInfo, ToolError> {
        let display = &target.display_path;
        let Some(info) = self.stat(target).await? else {
            self.observe(target, FsObservation::Absent)?;
            return Err(fs_failure(
                FsErrorCode::NotFound,
                format!("The path {display} does not exist. Please provide a valid path."),
            ));
        };
        if info.kind == FsKind::Directory && command != Command::View {
            return Err(fs_failure(
                FsErrorCode::NotRegularFile,
                format!(
                    "The path {display} is a directory and only the `view` command can be used \
                     on directories"
                ),
            ));
        }
        Ok(info)
    }

    /// The whole text of `target`, as stored (line endings kept).
    pub async fn read_text(&self, target: &FsTarget) -> Result<String, ToolError> {
        let target = target.clone();
        self.blocking("read", move |fs, _| fs.read_text(&target))
            .await
            .map_err(|error| from_fs(&error))
    }

    /// Writes `content` under `intent` and `policy`; the error is left for the caller to map.
    pub async fn write_text(
        &self,
        target: &FsTarget,
        content: String,
        intent: Option<FsWriteIntent>,
        policy: Option<SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError> {
        let target = target.clone();
        self.blocking("write", move |fs, _| {
            fs.write_text(&target, &content, intent.as_ref(), policy.as_ref())
        })
        .await
    }

    /// Asks `fs/write-intent`, with `default` when no listener decides.
    pub async fn write_intent(
        &self,
        target: &FsTarget,
        default: Option<FsWriteIntent>,
    ) -> Result<Option<FsWriteIntent>, ToolError> {
        write_intent(&self.ctx, target.clone(), self.actor.clone(), default)
            .await
            .map_err(|error| from_fs(&error))
    }

    /// Asks `fs/edit-intent` for the version the change must still find.
    pub async fn edit_intent(&self, target: &FsTarget) -> Result<Option<FsVersion>, ToolError> {
        edit_intent(&self.ctx, target.clone(), self.actor.clone())
            .await
            .map_err(|error| from_fs(&error))
    }

    /// Emits `fs/observed`; a failing recorder fails the call.
    pub fn observe(&self, target: &FsTarget, observation: FsObservation) -> Result<(), ToolError> {
        observe(&self.ctx, target, observation, &self.actor).map_err(ToolError::from)
    }
}
