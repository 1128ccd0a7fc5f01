//! `GET /api/sessions/{id}/events?from=<seq>`: a live session's events as server-sent
//! events, from `seq` on (or after the `Last-Event-ID` a reconnecting page sends), then each
//! new event as it is logged. The subscription starts before the backlog is read and the two
//! are joined by seq, so a page that reconnects loses and doubles nothing.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use dsh_kernel::{BoxError, Disposer};
use dsh_session::{EventNotice, SessionEvent, SessionEventAppended};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::mpsc;

use super::Api;
use super::error::ApiError;

/// The SSE event name of a session event.
pub(crate) const SESSION_EVENT: &str = "session-event";

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
    Query(query): Query<FromQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let live = api.sessions.get(&id).ok_or_else(|| {
        ApiError::not_found(format!(
            "session \"{id}\" is not live: resume it (POST /api/sessions/{id}/resume) first"
        ))
    })?;
    let after_last = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .map(|seq| seq + 1);
    let from = after_last.or(query.from).unwrap_or(0);
    let (sender, receiver) = mpsc::unbounded_channel::<Arc<SessionEvent>>();
    let session_id = id;
    let disposer = api
        .ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
            if notice.session.id() == session_id {
                // A closed page is dropped with its subscription.
                let _ = sender.send(Arc::clone(&notice.event));
            }
            Ok(())
        })
        .map_err(|error| ApiError::internal(error.to_string()))?;
    let backlog: Vec<Arc<SessionEvent>> = live.with(|session| {
        session
            .events()
            .iter()
            .filter(|event| event.seq >= from)
            .cloned()
            .collect()
    });
    let next = backlog.last().map_or(from, |event| event.seq + 1);
    let subscription = Subscription(Some(disposer));
    let live_events = stream::unfold(
        (receiver, subscription),
        move |(mut receiver, subscription)| async move {
            loop {
                let event = receiver.recv().await?;
                if event.seq >= next {
                    return Some((event, (receiver, subscription)));
                }
            }
        },
    );
    let events = stream::iter(backlog).chain(live_events).map(|event| {
        Ok(Event::default()
            .event(SESSION_EVENT)
            .id(event.seq.to_string())
            .data(dsh_session::json::to_js_string(&*event)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
