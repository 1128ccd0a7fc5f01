//! Plain TCP helpers for requests an HTTP client library will not send (absolute-form
//! targets, repeated headers, a head that never ends) and for watching a socket close.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Connects to the server.
pub async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.unwrap()
}

/// Sends `request` on a fresh connection and returns everything the server sent until it
/// closed (the request should say `Connection: close`).
pub async fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut stream = connect(addr).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the server neither answered nor closed")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status code of a response's first line (0 when there is none).
pub fn status_of(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_default()
}

/// Reads one response with a `Content-Length` from a kept-alive connection: head and body.
pub async fn read_response(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut buf = [0_u8; 4096];
    let read = async {
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse().ok())?
                    })
                    .unwrap_or_default();
                if received.len() >= end + 4 + length {
                    return text;
                }
            }
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed mid-response after {text:?}");
            received.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("no whole response")
}

/// Reads (and drops) whatever comes until `needle` has arrived; fails after 10 s.
pub async fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut received = Vec::new();
    let mut buf = [0_u8; 4096];
    let read = async {
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if text.contains(needle) {
                return text;
            }
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before {needle:?} arrived (got {text:?})");
            received.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .unwrap_or_else(|_| panic!("{needle:?} did not arrive"))
}

/// Whether the server closed `stream` (end of file or a reset) within `limit`; anything
/// it sends before that is dropped.
pub async fn closes_within<S: AsyncReadExt + Unpin>(stream: &mut S, limit: Duration) -> bool {
    let mut buf = [0_u8; 1024];
    let drained = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, drained).await.is_ok()
}

/// Whether `stream` is still open: nothing to read and no end of file, right now.
pub fn still_open(stream: &TcpStream) -> bool {
    let mut buf = [0_u8; 1];
    matches!(stream.try_read(&mut buf), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
}
