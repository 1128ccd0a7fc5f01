//! `GET /api/sessions/{id}/events?from=<seq>`: a live session's events as server-sent
//! events, from `seq` on (or after the `Last-Event-ID` a reconnecting page sends), then each
//! new event as it is logged. The subscription starts before the backlog is read and the two
//! are joined by seq, so a page that reconnects loses and doubles nothing.
//!
//! Each page buffers at most [`PAGE_BUFFER`] events. A page that falls further behind is not
//! fed more: its stream drops the buffer and reads on from the session log, from the first
//! event it has not sent (the log is the truth), so a slow page costs neither memory nor
//! order.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use dsh_kernel::{BoxError, Disposer};
use dsh_session::{EventNotice, LiveSession, SessionEvent, SessionEventAppended};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::mpsc;

use super::Api;
use super::error::ApiError;

/// The SSE event name of a session event.
pub(crate) const SESSION_EVENT: &str = "session-event";

/// How many events wait for one page before it is resynced from the log instead.
pub(crate) const PAGE_BUFFER: usize = 1024;

/// The query.
#[derive(Debug, Deserialize)]
pub(crate) struct FromQuery {
    /// The first seq to send (default 0).
    from: Option<u64>,
}

/// Undoes the subscription when the page goes away.
struct Subscription(Option<Disposer>);

impl Drop for Subscription {
    fn drop(&mut self) {
        if let (Some(disposer), Ok(handle)) = (self.0.take(), tokio::runtime::Handle::try_current())
        {
            drop(handle.spawn(disposer.dispose()));
        }
    }
}

pub(crate) async fn stream(
    State(api): State<Api>,
    Path(id): Path<String>,
    query: Result<Query<FromQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Query(query) = query.map_err(|error| {
        ApiError::bad_request(format!("from must be a seq (a whole number): {error}"))
    })?;
    let live = api.sessions.get(&id).ok_or_else(|| {
        ApiError::not_found(format!(
            "session \"{id}\" is not live: resume it (POST /api/sessions/{id}/resume) first"
        ))
    })?;
    let after_last = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .map(|seq| seq.saturating_add(1));
    let from = after_last.or(query.from).unwrap_or(0);
    let (sender, receiver) = mpsc::channel::<Arc<SessionEvent>>(PAGE_BUFFER);
    let lagged = Arc::new(AtomicBool::new(false));
    let overflowed = Arc::clone(&lagged);
    let session_id = id;
    let disposer = api
        .ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            if notice.session.id() == session_id && !overflowed.load(Ordering::Acquire) {
                // A full buffer marks the page for a resync; a closed page is dropped with
                // its subscription.
                if let Err(mpsc::error::TrySendError::Full(_)) =
                    sender.try_send(Arc::clone(&notice.event))
                {
                    overflowed.store(true, Ordering::Release);
                }
            }
            Ok(())
        })
        .map_err(|error| ApiError::internal(error.to_string()))?;
    let mut page = Page {
        live,
        receiver,
        lagged,
        pending: VecDeque::new(),
        next: from,
        _subscription: Subscription(Some(disposer)),
    };
    page.pending = page.read_log();
    let events = stream::unfold(page, |mut page| async move {
        let event = page.next_event().await?;
        Some((event, page))
    })
    .map(|event| {
        Ok(Event::default()
            .event(SESSION_EVENT)
            .id(event.seq.to_string())
            .data(dsh_protocol::json::to_js_string(&*event)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// One page's stream: what it still has to send and where it is in the log.
struct Page {
    live: Arc<LiveSession>,
    receiver: mpsc::Receiver<Arc<SessionEvent>>,
    /// Set when the buffer overflowed: the listener stops feeding the page.
    lagged: Arc<AtomicBool>,
    /// Events read from the log, not yet sent.
    pending: VecDeque<Arc<SessionEvent>>,
    /// The seq of the next event to send; anything below it was sent.
    next: u64,
    _subscription: Subscription,
}

impl Page {
    /// The logged events from `next` on.
    fn read_log(&self) -> VecDeque<Arc<SessionEvent>> {
        self.live.with(|session| {
            let events = session.events();
            let start = events.partition_point(|event| event.seq < self.next);
            events
                .get(start..)
                .unwrap_or_default()
                .iter()
                .cloned()
                .collect()
        })
    }

    /// The next event in seq order, each once; `None` once the API's subscription is gone
    /// (the row unloads).
    async fn next_event(&mut self) -> Option<Arc<SessionEvent>> {
        loop {
            let event = match self.pending.pop_front() {
                Some(event) => event,
                None if self.lagged.load(Ordering::Acquire) => {
                    // While the flag is up nothing new is buffered: empty the stale buffer,
                    // feed again, then read the log. Whatever lands in between is both in
                    // the log and in the buffer, and the seq check drops the copy.
                    while self.receiver.try_recv().is_ok() {}
                    self.lagged.store(false, Ordering::Release);
                    self.pending = self.read_log();
                    continue;
                }
                None => self.receiver.recv().await?,
            };
            if event.seq >= self.next {
                self.next = event.seq + 1;
                return Some(event);
            }
        }
    }
}
