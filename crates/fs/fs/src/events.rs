//! The `fs/*` events the file tools dispatch, and the helpers that dispatch them.
//!
//! | event | mode | listener gets | default |
//! |---|---|---|---|
//! | [`FsWriteIntentEvent`] `fs/write-intent` | waterfall | [`FsIntentArgs`] | the tool's own |
//! | [`FsEditIntentEvent`] `fs/edit-intent` | waterfall | [`FsIntentArgs`] | no guard |
//! | [`FsObservedEvent`] `fs/observed` | emit | [`FsObserved`] | – |
//!
//! Decisions are single slots: the first listener decides and need not call `next`.

use dsh_kernel::{BoxError, Context, Emit, Event, Waterfall};

use crate::error::FsError;
use crate::types::{FsObservation, FsTarget, FsVersion, FsWriteIntent};

/// Who touches a file: the calling tool, and the session it acts for (the owner of what it
/// observes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsActor {
    /// The session of the calling agent; `None` for calls outside any session.
    pub session_id: Option<String>,
    /// The tool's name.
    pub tool_name: String,
    /// The call's id.
    pub call_id: String,
}

/// What an intent listener decides about.
#[derive(Debug, Clone)]
pub struct FsIntentArgs {
    /// The file.
    pub target: FsTarget,
    /// Who asks.
    pub actor: FsActor,
}

/// What a tool saw of a file.
#[derive(Debug, Clone)]
pub struct FsObserved {
    /// The file.
    pub target: FsTarget,
    /// Present at a version, or absent.
    pub observation: FsObservation,
    /// Who saw it.
    pub actor: FsActor,
}

/// `fs/write-intent`: the condition a write runs under.
#[derive(Debug)]
pub struct FsWriteIntentEvent;
impl Event for FsWriteIntentEvent {
    const NAME: &'static str = "fs/write-intent";
    type Mode = Waterfall<FsIntentArgs, Result<Option<FsWriteIntent>, FsError>>;
}

/// `fs/edit-intent`: the version an edit must still find; a listener may refuse the edit.
#[derive(Debug)]
pub struct FsEditIntentEvent;
impl Event for FsEditIntentEvent {
    const NAME: &'static str = "fs/edit-intent";
    type Mode = Waterfall<FsIntentArgs, Result<Option<FsVersion>, FsError>>;
}

/// `fs/observed`: a tool saw a file (after a successful read or mutation, or a miss).
#[derive(Debug)]
pub struct FsObservedEvent;
impl Event for FsObservedEvent {
    const NAME: &'static str = "fs/observed";
    type Mode = Emit<FsObserved>;
}

/// Asks `fs/write-intent`; `default` answers when no listener does.
pub async fn write_intent(
    ctx: &Context,
    target: FsTarget,
    actor: FsActor,
    default: Option<FsWriteIntent>,
) -> Result<Option<FsWriteIntent>, FsError> {
    ctx.waterfall::<FsWriteIntentEvent, _, _>(FsIntentArgs { target, actor }, move |_| async {
        Ok(default)
    })
    .await
}

/// Asks `fs/edit-intent`; without a listener there is no guard.
pub async fn edit_intent(
    ctx: &Context,
    target: FsTarget,
    actor: FsActor,
) -> Result<Option<FsVersion>, FsError> {
    ctx.waterfall::<FsEditIntentEvent, _, _>(FsIntentArgs { target, actor }, |_| async { Ok(None) })
        .await
}

/// Emits `fs/observed`. A failing recorder fails the call (the mutation, if any, has
/// landed), as in dsh.
pub fn observe(
    ctx: &Context,
    target: &FsTarget,
    observation: FsObservation,
    actor: &FsActor,
) -> Result<(), BoxError> {
    ctx.emit::<FsObservedEvent>(&FsObserved {
        target: target.clone(),
        observation,
        actor: actor.clone(),
    })
    .map_err(Into::into)
}
