//! Connection hygiene over real sockets: the header-read and idle timeouts, the cap on open
//! connections, and the server's health under a flood of idle and slowloris clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::get;
use dsh_kernel::Kernel;
use dsh_web::{WEBSERVER, WebServer, WebServerPlugin};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::broadcast;

use super::raw::{
    closes_within, connect, exchange, read_response, read_until, status_of, still_open,
};

/// A server with `/api/stream`: a streamed body that says `open`, then forwards each
/// message sent on `ticks` until one says `bye`.
struct Streaming {
    kernel: Kernel,
    server: Arc<WebServer>,
    ticks: broadcast::Sender<&'static str>,
}

async fn streaming(config: Value) -> Streaming {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kernel = Kernel::new().unwrap();
    let fiber = kernel.root().plugin(WebServerPlugin, config).unwrap();
    kernel.settle().await;
    assert_eq!(fiber.error(), None);
    let server = kernel.root().require(&WEBSERVER).unwrap();
    let (ticks, _) = broadcast::channel(16);
    let route = Router::new()
        .route("/api/stream", get(stream))
        .with_state(ticks.clone());
    server.mount(&kernel.root(), "/api/stream", route).unwrap();
    Streaming {
        kernel,
        server,
        ticks,
    }
}

async fn stream(State(ticks): State<broadcast::Sender<&'static str>>) -> Body {
    let first = futures_util::stream::once(async { Ok::<_, Infallible>(Bytes::from("open\n")) });
    let rest = futures_util::stream::unfold(ticks.subscribe(), |mut ticks| async move {
        match ticks.recv().await {
            Ok("bye") | Err(_) => None,
            Ok(tick) => Some((Ok(Bytes::from(format!("{tick}\n"))), ticks)),
        }
    });
    Body::from_stream(futures_util::StreamExt::chain(first, rest))
}

impl Streaming {
    fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// A `GET` with the token, kept alive unless `close`.
    fn get(&self, path: &str, close: bool) -> String {
        let connection = if close { "Connection: close\r\n" } else { "" };
        format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nx-dsh-token: {}\r\n{connection}\r\n",
            self.addr(),
            self.server.token()
        )
    }

    /// Opens `/api/stream` on a new connection and waits for its first line.
    async fn open_stream(&self) -> TcpStream {
        let mut socket = connect(self.addr()).await;
        socket
            .write_all(self.get("/api/stream", false).as_bytes())
            .await
            .unwrap();
        read_until(&mut socket, "open\n").await;
        socket
    }

    /// Sends `tick` to every open stream.
    fn tick(&self, tick: &'static str) {
        self.ticks.send(tick).unwrap();
    }
}

/// Raises this process's open-file limit to at least `wanted` (the floods below hold over
/// two thousand sockets of their own).
fn allow_open_files(wanted: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft >= wanted {
        return;
    }
    // Raising the hard limit needs root, which CI has; otherwise the hard limit must do.
    let hard = if hard >= wanted {
        hard
    } else if setrlimit(Resource::RLIMIT_NOFILE, wanted, wanted).is_ok() {
        wanted
    } else {
        hard
    };
    setrlimit(Resource::RLIMIT_NOFILE, wanted.min(hard), hard).unwrap();
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    assert!(
        soft >= wanted,
        "need {wanted} open files for this test, the limit is {soft}"
    );
}

/// How many sockets the server holds established on `port` (Linux's table of TCP sockets;
/// connections waiting in the accept queue count too).
fn server_side_connections(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let mut fields = line.split_whitespace();
            let local = fields.nth(1).unwrap_or_default();
            let state = fields.nth(1).unwrap_or_default();
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok());
            local_port == Some(port) && state == "01"
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_slow_and_idle_connections_close_on_their_deadlines_but_streams_stay_open() {
    let s = streaming(json!({"port": 0, "headerReadTimeoutMs": 300, "idleTimeoutMs": 300})).await;

    // A client that connects and says nothing.
    let mut silent = connect(s.addr()).await;
    let started = Instant::now();
    assert!(closes_within(&mut silent, Duration::from_secs(3)).await);
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "closed by its deadline"
    );

    // A slowloris client: a header byte every 50 ms, never the end of the head.
    let slow = connect(s.addr()).await;
    let (mut slow_reader, mut slow_writer) = slow.into_split();
    let head = format!("GET /api/health HTTP/1.1\r\nHost: {}\r\nX-Slow: ", s.addr());
    slow_writer.write_all(head.as_bytes()).await.unwrap();
    let dribble = tokio::spawn(async move {
        while slow_writer.write_all(b"a").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let started = Instant::now();
    assert!(
        closes_within(&mut slow_reader, Duration::from_secs(3)).await,
        "a head that never ends is dropped"
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
    dribble.abort();

    // A keep-alive connection after its response.
    let mut kept = connect(s.addr()).await;
    kept.write_all(s.get("/api/health", false).as_bytes())
        .await
        .unwrap();
    let answer = read_response(&mut kept).await;
    assert_eq!(status_of(&answer), 200, "{answer}");
    assert!(closes_within(&mut kept, Duration::from_secs(3)).await);

    // An open stream is a request in flight, not an idle connection.
    let mut streamed = s.open_stream().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(still_open(&streamed), "a stream outlives the idle timeout");
    s.tick("tick");
    read_until(&mut streamed, "tick\n").await;
    s.tick("bye");
    assert!(
        closes_within(&mut streamed, Duration::from_secs(3)).await,
        "once the stream ended the connection is idle"
    );
    s.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_cap_the_longest_waiting_connection_makes_room_and_busy_ones_stay() {
    let s = streaming(json!({"port": 0, "maxConnections": 3})).await;
    let mut first_stream = s.open_stream().await;
    let mut oldest_idle = connect(s.addr()).await;
    let newer_idle = connect(s.addr()).await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Full: a new request takes the place of the connection that has waited longest.
    let answer = exchange(s.addr(), &s.get("/api/health", true)).await;
    assert_eq!(status_of(&answer), 200, "{answer}");
    assert!(closes_within(&mut oldest_idle, Duration::from_secs(1)).await);
    assert!(still_open(&newer_idle));
    s.tick("one");
    read_until(&mut first_stream, "one\n").await;

    // Every place busy: a new connection is closed at once, and the streams go on.
    let mut second_stream = s.open_stream().await;
    let mut third_stream = s.open_stream().await;
    let mut turned_away = connect(s.addr()).await;
    let started = Instant::now();
    assert!(closes_within(&mut turned_away, Duration::from_secs(2)).await);
    assert!(started.elapsed() < Duration::from_secs(1));
    s.tick("two");
    for stream in [&mut first_stream, &mut second_stream, &mut third_stream] {
        read_until(stream, "two\n").await;
    }
    s.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_through_a_thousand_idle_and_a_thousand_slowloris_connections() {
    const EACH: usize = 1000;
    allow_open_files(8192);
    let s = streaming(json!({"port": 0, "headerReadTimeoutMs": 2000, "idleTimeoutMs": 2000})).await;

    let mut idle = Vec::with_capacity(EACH);
    for _ in 0..EACH {
        idle.push(connect(s.addr()).await);
    }
    let head = format!("GET /api/health HTTP/1.1\r\nHost: {}\r\nX-Slow: ", s.addr());
    let mut slow_readers = Vec::with_capacity(EACH);
    let mut slow_writers = Vec::with_capacity(EACH);
    for _ in 0..EACH {
        let (reader, mut writer) = connect(s.addr()).await.into_split();
        // The server may already have dropped it to make room; the write then fails.
        let _ = writer.write_all(head.as_bytes()).await;
        slow_readers.push(reader);
        slow_writers.push(writer);
    }
    let dribble = tokio::spawn(async move {
        loop {
            for writer in &mut slow_writers {
                let _ = writer.try_write(b"a");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });

    let client = reqwest::Client::new();
    let started = Instant::now();
    let health = tokio::time::timeout(
        Duration::from_secs(5),
        client
            .get(format!("{}/api/health", s.server.url()))
            .header("x-dsh-token", s.server.token())
            .send(),
    )
    .await
    .expect("health did not answer")
    .unwrap();
    assert_eq!(health.status(), reqwest::StatusCode::OK);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "health took {:?}",
        started.elapsed()
    );
    if cfg!(target_os = "linux") {
        let held = server_side_connections(s.addr().port());
        assert!(
            held <= dsh_web::DEFAULT_MAX_CONNECTIONS,
            "the server holds {held} connections"
        );
    }

    // Every one of them is closed: made room for, or past its deadline.
    let until = Instant::now() + Duration::from_secs(8);
    let left = || until.saturating_duration_since(Instant::now());
    for (n, socket) in idle.iter_mut().enumerate() {
        assert!(closes_within(socket, left()).await, "idle #{n} stays open");
    }
    for (n, socket) in slow_readers.iter_mut().enumerate() {
        assert!(
            closes_within(socket, left()).await,
            "slowloris #{n} stays open"
        );
    }
    dribble.abort();
    // A new client: the first one's kept-alive connection was closed as idle meanwhile.
    let again = reqwest::Client::new()
        .get(format!("{}/api/health", s.server.url()))
        .header("x-dsh-token", s.server.token())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), reqwest::StatusCode::OK);
    s.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_arrives_frees_its_connection_by_the_request_deadline() {
    let s = streaming(json!({"port": 0, "requestTimeoutMs": 300, "maxConnections": 8})).await;
    // The one route anyone may call without the token, with a body that stops at `{`.
    let stalled_head = format!(
        "POST /api/login HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{",
        s.addr()
    );
    let mut stalled = Vec::new();
    for _ in 0..20 {
        let mut socket = connect(s.addr()).await;
        let _ = socket.write_all(stalled_head.as_bytes()).await;
        stalled.push(socket);
    }
    let client = reqwest::Client::new();
    let started = Instant::now();
    let health = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let answer = client
                .get(format!("{}/api/health", s.server.url()))
                .header("x-dsh-token", s.server.token())
                .send()
                .await;
            if let Ok(answer) = answer {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("health never answered while bodies stalled");
    assert_eq!(health.status(), reqwest::StatusCode::OK);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    for (n, socket) in stalled.iter_mut().enumerate() {
        assert!(
            closes_within(socket, Duration::from_secs(3)).await,
            "stalled body #{n} stays open"
        );
    }
    s.kernel.shutdown().await;
}
