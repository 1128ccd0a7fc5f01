//! Wiring a coordinator to the session store: live sessions persist themselves.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, KernelError};
use dsh_session::{
    EventNotice, LiveSession, SESSIONS, SessionCreated, SessionDisposed, SessionEventAppended,
    SessionFlush,
};

use crate::backend::PersistenceBackend;
use crate::coordinator::Coordinator;

/// Subscribes `coordinator` to the store's events (`session/created`, `session/event`,
/// `session/flush`, `session/disposed`), adopts sessions that are already live, and flushes
/// everything and closes the backend when `ctx` unloads.
pub fn install_live_persistence<B: PersistenceBackend>(
    ctx: &Context,
    coordinator: &Arc<Coordinator<B>>,
) -> Result<(), KernelError> {
    let created = Arc::clone(coordinator);
    ctx.on::<SessionCreated>(move |live: &Arc<LiveSession>| -> Result<(), BoxError> {
        created.attach_live(live);
        Ok(())
    })?;
    let appended = Arc::clone(coordinator);
    ctx.on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
        appended.enqueue_live(&notice.session, Arc::clone(&notice.event));
        Ok(())
    })?;
    let flushing = Arc::clone(coordinator);
    ctx.on::<SessionFlush>(move |live: Arc<Arc<LiveSession>>| {
        let coordinator = Arc::clone(&flushing);
        async move {
            coordinator
                .flush_live(live.id())
                .await
                .map_err(BoxError::from)
        }
    })?;
    let retiring = Arc::clone(coordinator);
    ctx.on::<SessionDisposed>(move |live: &Arc<LiveSession>| -> Result<(), BoxError> {
        // The store flushed it before announcing the disposal.
        retiring.forget_live(live.id());
        Ok(())
    })?;
    if let Some(store) = ctx.get(&SESSIONS) {
        for id in store.ids() {
            if let Some(live) = store.get(&id) {
                coordinator.attach_live(&live);
            }
        }
    }
    let closing = Arc::clone(coordinator);
    ctx.effect_async(move || async move {
        if let Err(error) = closing.close().await {
            tracing::error!("{error}");
        }
    })?;
    Ok(())
}
