//! Scripted replies and how they go out on the wire.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};

use super::http;
use crate::sse::SseEvent;

/// What the fake answers to one chat-completions request. Build one, adjust it with the
/// methods that take `self`, and queue it with [`FakeDeepSeek::push`](super::FakeDeepSeek::push).
///
/// ```
/// use std::time::Duration;
/// use dsh_test_support::fake_deepseek::Reply;
/// use dsh_test_support::sse::{self, SseEvent};
/// use serde_json::json;
///
/// let ok = Reply::sse(sse::text_events("hello", 2, Some(sse::usage(3, 1, None, None))));
/// let limited = Reply::error(429, json!({"error": {"message": "slow down", "code": "rate_limit"}}))
///     .retry_after("2")
///     .request_id("req-1");
/// let cut = Reply::sse(vec![SseEvent::data(sse::chunk_text("par"))]).cut();
/// let stalled = Reply::sse(vec![SseEvent::data(sse::chunk_role())]).stall_after(1);
/// let keep_alive_only = Reply::sse(Vec::new())
///     .repeat_forever(SseEvent::comment("keep-alive").after(Duration::from_secs(1)));
/// let (gated, gate) = Reply::gated(vec![SseEvent::data(sse::chunk_text("a"))]);
/// gate.release(1);
/// # let _ = (ok, limited, cut, stalled, keep_alive_only, gated);
/// ```
#[derive(Debug, Clone)]
pub struct Reply {
    kind: Kind,
    headers: Vec<(String, String)>,
    /// A `Content-Length` reply that leaves the connection open for the next request.
    keep_alive: bool,
}

#[derive(Debug, Clone)]
enum Kind {
    Sse(Stream),
    Http {
        status: u16,
        content_type: String,
        body: String,
    },
    Hang,
    Disconnect,
}

#[derive(Debug, Clone)]
struct Stream {
    events: Vec<SseEvent>,
    end: End,
    stall_after: Option<usize>,
    event_delay: Duration,
    gate: Option<Arc<GateState>>,
    /// Sent again and again after `events`, instead of the end.
    forever: Option<SseEvent>,
}

/// How an SSE reply ends once its events are out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// `data: [DONE]`, the end of the chunked body, close.
    Done,
    /// The end of the chunked body and close, without `[DONE]`.
    Eof,
    /// Close without ending the chunked body.
    Cut,
}

impl Reply {
    /// A `200 text/event-stream` reply streaming `events` with chunked transfer encoding, one
    /// HTTP chunk per event (an empty raw event sends nothing), then `data: [DONE]`.
    pub fn sse(events: Vec<SseEvent>) -> Self {
        Self::new(Kind::Sse(Stream {
            events,
            end: End::Done,
            stall_after: None,
            event_delay: Duration::ZERO,
            gate: None,
            forever: None,
        }))
    }

    /// [`Reply::sse`] held behind a [`Gate`]: the response head goes out at once, then each
    /// event (the final `[DONE]` included) waits for the gate to let one more through.
    pub fn gated(events: Vec<SseEvent>) -> (Self, Gate) {
        Self::sse(events).gate()
    }

    /// A response with `status`, `content-type: application/json` and `body`, like DeepSeek's
    /// errors: `Reply::error(401, json!({"error": {"message": "bad key", "type":
    /// "authentication_error", "code": "invalid_api_key"}}))`.
    pub fn error(status: u16, body: Value) -> Self {
        Self::http(status, "application/json", body.to_string())
    }

    /// A response with any `status`, `content_type` and `body` (an empty body, HTML from a
    /// proxy, a 200 JSON answer where a stream was expected...), framed by `Content-Length`.
    pub fn http(status: u16, content_type: &str, body: impl Into<String>) -> Self {
        Self::new(Kind::Http {
            status,
            content_type: content_type.to_owned(),
            body: body.into(),
        })
    }

    /// No response at all: the request is read and the connection stays silent (no status
    /// line) until the client closes it or the server is dropped. For time-to-first-byte
    /// timeouts.
    pub fn hang() -> Self {
        Self::new(Kind::Hang)
    }

    /// The connection closes right after the request is read, with no response.
    pub fn disconnect() -> Self {
        Self::new(Kind::Disconnect)
    }

    fn new(kind: Kind) -> Self {
        Self {
            kind,
            headers: Vec::new(),
            keep_alive: false,
        }
    }

    fn stream(mut self, change: impl FnOnce(&mut Stream)) -> Self {
        if let Kind::Sse(stream) = &mut self.kind {
            change(stream);
        }
        self
    }

    /// An SSE reply that ends without `data: [DONE]`: after the last event the chunked body
    /// ends properly and the connection closes (a clean end of stream; dsh reports
    /// `STREAM_CLOSED`). Other replies are unchanged.
    #[must_use]
    pub fn without_done(self) -> Self {
        self.stream(|stream| {
            if stream.end == End::Done {
                stream.end = End::Eof;
            }
        })
    }

    /// An SSE reply whose connection drops after the last event, without `[DONE]` and without
    /// ending the chunked body: the client sees a broken transfer, not a clean end of stream.
    /// Other replies are unchanged.
    #[must_use]
    pub fn cut(self) -> Self {
        self.stream(|stream| stream.end = End::Cut)
    }

    /// An SSE reply that sends the response head and its first `n` events (counting the final
    /// `[DONE]`), then sends nothing more and keeps the connection open until the client
    /// closes it or the server is dropped (no timer of its own, so a client's idle watchdog
    /// under tokio's paused clock fires first). `stall_after(0)` stalls
    /// right after the head. Other replies are unchanged.
    #[must_use]
    pub fn stall_after(self, n: usize) -> Self {
        self.stream(|stream| stream.stall_after = Some(n))
    }

    /// An SSE reply that pauses `delay` before every event (on top of each event's own
    /// [`SseEvent::after`]). Other replies are unchanged.
    #[must_use]
    pub fn event_delay(self, delay: Duration) -> Self {
        self.stream(|stream| stream.event_delay = delay)
    }

    /// An SSE reply that, once its events are out, sends `event` again and again (each time
    /// after `event`'s own [`SseEvent::after`] pause and the reply's
    /// [`event_delay`](Reply::event_delay)) and never ends: no `[DONE]`, no end of the chunked
    /// body, until the client hangs up or the server is dropped. For a keep-alive flood
    /// (`SseEvent::comment("keep-alive").after(..)`) or a stream that trickles data forever.
    /// [`stall_after`](Reply::stall_after) and a [`Gate`] count the repeats as events. Other
    /// replies are unchanged.
    #[must_use]
    pub fn repeat_forever(self, event: SseEvent) -> Self {
        self.stream(|stream| stream.forever = Some(event))
    }

    /// This SSE reply held behind a new [`Gate`] (see [`Reply::gated`]). For other replies the
    /// gate has no effect.
    pub fn gate(self) -> (Self, Gate) {
        let state = Arc::new(GateState::default());
        let gate = Gate {
            state: Arc::clone(&state),
        };
        (self.stream(|stream| stream.gate = Some(state)), gate)
    }

    /// A reply framed by `Content-Length` (see [`Reply::http`]) that leaves the connection open
    /// for the client's next request (HTTP/1.1 keep-alive) instead of answering with
    /// `connection: close` and closing it. Other replies are unchanged.
    #[must_use]
    pub fn keep_alive(mut self) -> Self {
        self.keep_alive = matches!(self.kind, Kind::Http { .. });
        self
    }

    /// Adds a `retry-after` header (`"2"` seconds, or an HTTP date).
    #[must_use]
    pub fn retry_after(self, value: &str) -> Self {
        self.header("retry-after", value)
    }

    /// Adds an `x-request-id` header.
    #[must_use]
    pub fn request_id(self, id: &str) -> Self {
        self.header("x-request-id", id)
    }

    /// Adds a response header, or replaces the default one of that name (`content-type`, for a
    /// stream with the wrong content type).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Writes this reply on `stream`; returns when the exchange is over, with whether the
    /// connection stays open for another request.
    pub(crate) async fn send(self, stream: &mut TcpStream) -> bool {
        match self.kind {
            Kind::Http {
                status,
                content_type,
                body,
            } => {
                let connection = if self.keep_alive {
                    http::Connection::KeepAlive
                } else {
                    http::Connection::Close
                };
                http::respond(
                    stream,
                    status,
                    &content_type,
                    &self.headers,
                    body.as_bytes(),
                    connection,
                )
                .await
            }
            Kind::Hang => {
                hold(stream, None).await;
                false
            }
            Kind::Disconnect => false,
            Kind::Sse(sse) => {
                sse.send(stream, &self.headers).await;
                false
            }
        }
    }
}

/// What the event loop of an SSE reply ended with.
enum Outcome {
    /// Every event went out: end as the reply says.
    Sent,
    /// Stop sending and hold the connection.
    Stall,
    /// The client went away.
    Gone,
}

impl Stream {
    async fn send(self, stream: &mut TcpStream, extra: &[(String, String)]) {
        let gate = self.gate.clone();
        match self.events_out(stream, extra).await {
            Outcome::Gone => {
                if let Some(gate) = &gate {
                    gate.set_closed();
                }
            }
            Outcome::Stall => hold(stream, gate.as_deref()).await,
            Outcome::Sent => match self.end {
                End::Cut => {}
                End::Done | End::Eof => {
                    if stream.write_all(http::LAST_CHUNK).await.is_ok() {
                        http::close(stream).await;
                    } else if let Some(gate) = &gate {
                        gate.set_closed();
                    }
                }
            },
        }
    }

    async fn events_out(&self, stream: &mut TcpStream, extra: &[(String, String)]) -> Outcome {
        let defaults = [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("transfer-encoding", "chunked"),
            ("connection", "close"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .to_vec();
        let head = http::response_head(200, &http::merge_headers(defaults, extra));
        let (mut reader, mut writer) = stream.split();
        if writer.write_all(&head).await.is_err() {
            return Outcome::Gone;
        }
        let done = SseEvent::done();
        let ends_with_done = self.end == End::Done && self.forever.is_none();
        let frames = self
            .events
            .iter()
            .chain(ends_with_done.then_some(&done))
            .chain(self.forever.iter().flat_map(std::iter::repeat));
        for (position, event) in frames.enumerate() {
            if self.stall_after == Some(position) {
                return Outcome::Stall;
            }
            if let Some(gate) = &self.gate {
                tokio::select! {
                    biased;
                    permit = gate.permits.acquire() => match permit {
                        Ok(permit) => permit.forget(),
                        Err(_) => return Outcome::Stall,
                    },
                    () = client_gone(&mut reader) => return Outcome::Gone,
                }
            }
            let delay = event.delay().saturating_add(self.event_delay);
            if !delay.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = client_gone(&mut reader) => return Outcome::Gone,
                }
            }
            let bytes = event.to_sse();
            if !bytes.is_empty()
                && writer
                    .write_all(&http::chunk(bytes.as_bytes()))
                    .await
                    .is_err()
            {
                return Outcome::Gone;
            }
            if let Some(gate) = &self.gate {
                gate.progress.send_modify(|progress| progress.sent += 1);
            }
        }
        if self.stall_after.is_some() {
            Outcome::Stall
        } else {
            Outcome::Sent
        }
    }
}

/// Holds a connection silent until the client closes it (noted on `gate`); dropping the
/// server ends it too, by aborting the task.
async fn hold(stream: &mut TcpStream, gate: Option<&GateState>) {
    client_gone(stream).await;
    if let Some(gate) = gate {
        gate.set_closed();
    }
}

/// Resolves when the client closes its side (or the socket fails); what it sends is ignored.
async fn client_gone<R: AsyncRead + Unpin>(reader: &mut R) {
    let mut scratch = [0_u8; 1024];
    while matches!(reader.read(&mut scratch).await, Ok(read) if read > 0) {}
}

#[derive(Debug, Default, Clone, Copy)]
struct Progress {
    sent: usize,
    client_closed: bool,
}

#[derive(Debug)]
struct GateState {
    permits: Semaphore,
    progress: watch::Sender<Progress>,
}

impl Default for GateState {
    fn default() -> Self {
        Self {
            permits: Semaphore::new(0),
            progress: watch::Sender::new(Progress::default()),
        }
    }
}

impl GateState {
    fn set_closed(&self) {
        self.progress
            .send_modify(|progress| progress.client_closed = true);
    }
}

/// Holds a gated reply's events until released; also tells what went out and whether the
/// client hung up (for cancellation tests). Clones share the gate.
#[derive(Debug, Clone)]
pub struct Gate {
    state: Arc<GateState>,
}

impl Gate {
    /// Lets the next `n` events out (the final `[DONE]` counts as one).
    pub fn release(&self, n: usize) {
        let permits = &self.state.permits;
        let room = Semaphore::MAX_PERMITS.saturating_sub(permits.available_permits());
        permits.add_permits(n.min(room));
    }

    /// Lets every remaining event out.
    pub fn release_all(&self) {
        self.release(Semaphore::MAX_PERMITS);
    }

    /// How many events have been written to the socket so far.
    pub fn sent(&self) -> usize {
        self.state.progress.borrow().sent
    }

    /// Whether the client closed the connection before the reply ended.
    pub fn client_closed(&self) -> bool {
        self.state.progress.borrow().client_closed
    }

    /// Waits until at least `n` events have been written; `false` if `timeout` passed first.
    pub async fn wait_sent(&self, n: usize, timeout: Duration) -> bool {
        self.wait(timeout, |progress| progress.sent >= n).await
    }

    /// Waits until the client has closed the connection (a cancelled request); `false` if
    /// `timeout` passed first. The close is seen while the reply waits on the gate, pauses,
    /// stalls or writes.
    pub async fn wait_client_closed(&self, timeout: Duration) -> bool {
        self.wait(timeout, |progress| progress.client_closed).await
    }

    async fn wait(&self, timeout: Duration, done: impl FnMut(&Progress) -> bool) -> bool {
        let mut progress = self.state.progress.subscribe();
        matches!(
            tokio::time::timeout(timeout, progress.wait_for(done)).await,
            Ok(Ok(_))
        )
    }
}
