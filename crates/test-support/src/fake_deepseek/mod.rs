//! A fake DeepSeek chat-completions server on loopback, for testing the DeepSeek client end to
//! end over real HTTP.
//!
//! [`FakeDeepSeek::start`] binds `127.0.0.1:0` and serves HTTP/1.1 (one request per connection,
//! answered with `Connection: close`, unless a reply is [kept alive](Reply::keep_alive)). Every
//! request is recorded ([`FakeDeepSeek::requests`]). Each `POST /chat/completions` (or
//! `/v1/chat/completions`) takes the next scripted [`Reply`] from the queue
//! ([`FakeDeepSeek::push`]): an SSE stream, an HTTP error, a cut, stalled or never-ending
//! stream, or a stream held behind a [`Gate`]. With no queued reply for it, the request goes to
//! the responder ([`FakeDeepSeek::respond_with`]), which builds a reply from the request; with
//! no responder either it gets a 500 whose JSON error names it. Other paths get 404, malformed
//! requests 400. Dropping the server stops it and closes every connection it holds.
//!
//! [`serve_in_background`] runs one outside any tokio runtime, on a thread of its own, for
//! programs that only need a model to talk to (the xtask benchmark and browser tests).
//!
//! The server has no timers of its own (no read timeout, no limit on a stall): only the pauses
//! a reply scripts, and a wait of at most a second for the client to hang up after a response.
//! It therefore works under tokio's paused clock, where a client's timeouts fire first; the
//! `wait_*` timeouts here, though, elapse as soon as such a runtime is idle.
//!
//! ```
//! use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
//! use dsh_test_support::sse;
//!
//! # async fn example() -> std::io::Result<()> {
//! let server = FakeDeepSeek::start().await?;
//! server.push(Reply::sse(sse::text_events("hello", 2, Some(sse::usage(3, 1, None, None)))));
//! // point the client at server.base_url(), send a request, then:
//! let requests = server.wait_for_requests(1).await;
//! # let _ = requests;
//! # Ok(())
//! # }
//! ```
//!
//! [`FixtureExchange`] rebuilds the replies dsh 0.1.1's own fake streamed from its
//! `llm-requests.jsonl` recordings.

mod background;
mod fixture;
mod http;
mod reply;

use std::collections::VecDeque;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use dsh_kernel::sync::lock;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

pub use background::serve_in_background;
pub use fixture::{FIXTURE_CASES, FixtureError, FixtureExchange, FixtureReply, fixture_path};
pub use reply::{Gate, Reply};

/// How long [`FakeDeepSeek::wait_for_requests`] waits.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The paths that take a scripted reply.
const CHAT_PATHS: [&str; 2] = ["/chat/completions", "/v1/chat/completions"];

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The method, as sent (`POST`).
    pub method: String,
    /// The request target: path and query (`/v1/chat/completions`).
    pub path: String,
    /// The headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Value::Null` when it is empty or not JSON.
    pub body: Value,
    /// The body as text (invalid UTF-8 replaced).
    pub body_text: String,
    /// Whether a scripted reply answered it (`false` for the 500 of an empty queue, 404s,
    /// 405s and bodies that are not JSON).
    pub scripted: bool,
}

impl RecordedRequest {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        http::header(&self.headers, &name.to_ascii_lowercase())
    }

    /// Whether this is a chat-completions request (`POST`, with or without `/v1`).
    pub fn is_chat(&self) -> bool {
        self.method == "POST" && CHAT_PATHS.contains(&self.path_only())
    }

    /// The path without its query.
    pub fn path_only(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }

    /// Whether the body offers tools (dsh's session-title request does not).
    pub fn has_tools(&self) -> bool {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty())
    }

    /// A one-line description for messages: method, path, model, message count, whether
    /// tools are offered, and the start of the last message.
    pub fn summary(&self) -> String {
        let mut text = format!("{} {}", self.method, self.path);
        if let Some(model) = self.body.get("model").and_then(Value::as_str) {
            text.push_str(&format!(", model {model:?}"));
        }
        if let Some(messages) = self.body.get("messages").and_then(Value::as_array) {
            text.push_str(&format!(
                ", {} messages, tools: {}",
                messages.len(),
                if self.has_tools() { "yes" } else { "no" }
            ));
            if let Some(last) = messages.last() {
                let role = last.get("role").and_then(Value::as_str).unwrap_or("?");
                let content = match last.get("content") {
                    Some(Value::String(content)) => content.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let start: String = content.chars().take(80).collect();
                let more = if start.len() < content.len() {
                    "..."
                } else {
                    ""
                };
                text.push_str(&format!(", last message {role}: {start:?}{more}"));
            }
        }
        text
    }
}

/// [`FakeDeepSeek::wait_for_requests`] ran out of time.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitError {
    /// How many requests were awaited.
    pub wanted: usize,
    /// The requests received by then.
    pub received: Vec<RecordedRequest>,
    /// How long it waited.
    pub waited: Duration,
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fake DeepSeek: waited {:?} for {} request(s), received {}",
            self.waited,
            self.wanted,
            self.received.len()
        )?;
        for (position, request) in self.received.iter().enumerate() {
            write!(f, "\n  {}. {}", position + 1, request.summary())?;
        }
        Ok(())
    }
}

impl std::error::Error for WaitError {}

/// A reply waiting in the queue, with the condition a request must meet to take it.
struct Scripted {
    matcher: Option<Matcher>,
    reply: Reply,
}

type Matcher = Box<dyn Fn(&RecordedRequest) -> bool + Send + Sync>;

/// Builds the reply to a chat request no queued reply takes.
type Responder = Box<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

#[derive(Default)]
struct State {
    requests: Vec<RecordedRequest>,
    queue: VecDeque<Scripted>,
    responder: Option<Responder>,
}

struct Shared {
    state: Mutex<State>,
    /// How many requests have been recorded.
    count: watch::Sender<usize>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

/// The fake server. See the [module documentation](self).
pub struct FakeDeepSeek {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl fmt::Debug for FakeDeepSeek {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("FakeDeepSeek")
            .field("addr", &self.addr)
            .field("requests", &state.requests.len())
            .field("pending", &state.queue.len())
            .finish()
    }
}

impl Drop for FakeDeepSeek {
    fn drop(&mut self) {
        // The accept task owns every connection task: aborting it drops them all.
        self.accept.abort();
    }
}

impl FakeDeepSeek {
    /// Binds `127.0.0.1:0` and starts serving on the current tokio runtime.
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            count: watch::Sender::new(0),
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(Self {
            addr,
            shared,
            accept,
        })
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash: DeepSeek's `baseURL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues `reply` for the next chat-completions request.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(Scripted {
            matcher: None,
            reply,
        });
    }

    /// Queues `reply` for the first chat-completions request `matcher` accepts. A request takes
    /// the first queued reply whose matcher accepts it (a reply queued with [`push`] accepts
    /// any), so requests racing each other (dsh's turn and its session-title request) can each
    /// get their own: `server.push_when(|r| !r.has_tools(), title_reply)`.
    ///
    /// [`push`]: FakeDeepSeek::push
    pub fn push_when(
        &self,
        matcher: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static,
        reply: Reply,
    ) {
        self.shared.lock().queue.push_back(Scripted {
            matcher: Some(Box::new(matcher)),
            reply,
        });
    }

    /// Answers every chat-completions request that no queued reply takes with
    /// `responder(request)`, from now on (replacing an earlier responder). The responder runs
    /// while the server's state is locked, so it must not call the server.
    pub fn respond_with(
        &self,
        responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) {
        self.shared.lock().responder = Some(Box::new(responder));
    }

    /// How many queued replies no request has taken yet.
    pub fn pending(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `n` requests have arrived, up to [`WAIT_TIMEOUT`], and returns them
    /// all; the error lists what did arrive.
    pub async fn wait_for_requests(&self, n: usize) -> Result<Vec<RecordedRequest>, WaitError> {
        self.wait_for_requests_within(n, WAIT_TIMEOUT).await
    }

    /// [`wait_for_requests`](FakeDeepSeek::wait_for_requests) with another timeout.
    pub async fn wait_for_requests_within(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, WaitError> {
        let mut count = self.shared.count.subscribe();
        let arrived = tokio::time::timeout(timeout, count.wait_for(|count| *count >= n)).await;
        let received = self.requests();
        match arrived {
            Ok(Ok(_)) => Ok(received),
            _ => Err(WaitError {
                wanted: n,
                received,
                waited: timeout,
            }),
        }
    }
}

/// Accepts connections until aborted; each is served by a task of `connections`, so aborting
/// this task (dropping the set) ends them too.
async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve(stream, Arc::clone(&shared)));
                }
                // Out of descriptors or an aborted handshake: wait a little, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Serves one connection: one request and its response, then the next request for as long as
/// the responses keep the connection open.
async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    loop {
        let request = match http::read_request(&mut stream).await {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(refusal) => {
                let body = error_body(&refusal.message, "bad_request");
                refuse(&mut stream, refusal.status, &body).await;
                return;
            }
        };
        let open = match route(&shared, request) {
            Answer::Reply(reply) => reply.send(&mut stream).await,
            Answer::Refuse(status, body) => refuse(&mut stream, status, &body).await,
        };
        if !open {
            return;
        }
    }
}

/// Answers `status` with a JSON error `body` and closes the connection.
async fn refuse(stream: &mut TcpStream, status: u16, body: &str) -> bool {
    http::respond(
        stream,
        status,
        "application/json",
        &[],
        body.as_bytes(),
        http::Connection::Close,
    )
    .await
}

enum Answer {
    Reply(Reply),
    Refuse(u16, String),
}

/// Records `request` and picks its answer.
fn route(shared: &Shared, request: http::Request) -> Answer {
    let body_text = String::from_utf8_lossy(&request.body).into_owned();
    let parsed: Option<Value> = serde_json::from_slice(&request.body).ok();
    let mut recorded = RecordedRequest {
        method: request.method,
        path: request.target,
        headers: request.headers,
        body: parsed.clone().unwrap_or(Value::Null),
        body_text,
        scripted: false,
    };
    let mut state = shared.lock();
    let number = state.requests.len() + 1;
    let answer = if !CHAT_PATHS.contains(&recorded.path_only()) {
        Answer::Refuse(
            404,
            error_body(
                &format!(
                    "fake DeepSeek: no route for request {number} ({} {}); only POST {} are served",
                    recorded.method,
                    recorded.path,
                    CHAT_PATHS.join(" and ")
                ),
                "not_found",
            ),
        )
    } else if recorded.method != "POST" {
        Answer::Refuse(
            405,
            error_body(
                &format!(
                    "fake DeepSeek: method {} not allowed on {}",
                    recorded.method, recorded.path
                ),
                "method_not_allowed",
            ),
        )
    } else if parsed.is_none() {
        Answer::Refuse(
            400,
            error_body(
                &format!("fake DeepSeek: the body of request {number} is not JSON"),
                "invalid_json",
            ),
        )
    } else {
        let position = state.queue.iter().position(|scripted| {
            scripted
                .matcher
                .as_ref()
                .is_none_or(|matcher| matcher(&recorded))
        });
        let queued = position.and_then(|position| state.queue.remove(position));
        match queued
            .map(|scripted| scripted.reply)
            .or_else(|| state.responder.as_ref().map(|respond| respond(&recorded)))
        {
            Some(reply) => {
                recorded.scripted = true;
                Answer::Reply(reply)
            }
            None => {
                let queued = state.queue.len();
                let why = if queued == 0 {
                    "no reply is queued".to_owned()
                } else {
                    format!("none of the {queued} queued replies matches it")
                };
                Answer::Refuse(
                    500,
                    error_body(
                        &format!(
                            "fake DeepSeek: unexpected request {number} ({}): {why}",
                            recorded.summary()
                        ),
                        "unexpected_request",
                    ),
                )
            }
        }
    };
    state.requests.push(recorded);
    let count = state.requests.len();
    drop(state);
    shared.count.send_replace(count);
    answer
}

/// An OpenAI-style error body.
fn error_body(message: &str, code: &str) -> String {
    json!({"error": {"message": message, "type": "fake_deepseek_error", "code": code}}).to_string()
}
