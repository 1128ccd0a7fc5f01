//! Keeping a request in flight for as long as its response is being produced: a response
//! of known length is handed over whole, so the request ends with the handler; a streamed
//! one (an event stream) keeps its connection busy until the stream ends or the client goes.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, HttpBody as _};
use axum::response::Response;
use futures_util::Stream;

use super::connection::InFlight;

/// `response`, with `in_flight` released once its body has been sent.
pub(crate) fn track_response(response: Response, in_flight: InFlight) -> Response {
    if response.body().size_hint().exact().is_some() {
        // Written from memory; an idle connection is closed after `idleTimeoutMs`, so a
        // client has that long to take it.
        return response;
    }
    response.map(|body| {
        Body::from_stream(Tracked {
            inner: body.into_data_stream(),
            _in_flight: in_flight,
        })
    })
}

/// A body stream that holds its request in flight while it lives.
struct Tracked<S> {
    inner: S,
    _in_flight: InFlight,
}

impl<S: Stream + Unpin> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}
