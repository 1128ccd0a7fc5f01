//! A raw HTTP/1.1 client over a tokio `TcpStream`, with its own chunked decoder, so the tests
//! check the bytes the fake puts on the wire rather than trusting the fake's own parser.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A `POST` with a JSON body and `Content-Length`, as a DeepSeek client sends it.
pub fn post(path: &str, body: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request.into_bytes()
}

/// Connects to `addr` and writes `request`.
pub async fn send(addr: SocketAddr, request: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    stream
}

/// Reads until the server closes the connection (panics after 5 s).
pub async fn read_to_end(stream: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut bytes))
        .await
        .expect("the server did not close the connection within 5 s")
        .unwrap();
    bytes
}

/// `request` sent to `addr`, and the whole response.
pub async fn exchange(addr: SocketAddr, request: &[u8]) -> Response {
    let mut stream = send(addr, request).await;
    Response::parse(&read_to_end(&mut stream).await)
}

/// Reads more into `buf` until `done(buf)` holds; `false` if `timeout` passed or the server
/// closed the connection first.
pub async fn read_until(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    timeout: Duration,
    done: impl Fn(&[u8]) -> bool,
) -> bool {
    let read = async {
        let mut scratch = [0_u8; 4096];
        while !done(buf) {
            match stream.read(&mut scratch).await {
                Ok(0) | Err(_) => return false,
                Ok(read) => buf.extend_from_slice(&scratch[..read]),
            }
        }
        true
    };
    tokio::time::timeout(timeout, read).await.unwrap_or(false)
}

/// A response as read off the wire.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body after the head, as sent (still chunked when it is).
    pub raw_body: Vec<u8>,
}

impl Response {
    /// Splits `bytes` into head and body (panics if there is no complete head).
    pub fn parse(bytes: &[u8]) -> Self {
        let end = bytes
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(bytes)));
        let head = std::str::from_utf8(&bytes[..end]).unwrap();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let mut parts = status_line.splitn(3, ' ');
        assert_eq!(parts.next(), Some("HTTP/1.1"), "{status_line}");
        let status = parts.next().unwrap().parse().unwrap();
        let headers = lines
            .map(|line| {
                let (name, value) = line.split_once(": ").unwrap();
                (name.to_ascii_lowercase(), value.to_owned())
            })
            .collect();
        Self {
            status,
            headers,
            raw_body: bytes[end + 4..].to_vec(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.raw_body.clone()).unwrap()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.raw_body).unwrap()
    }

    /// The chunks of a chunked body, and whether the terminating zero chunk came.
    pub fn chunks(&self) -> (Vec<String>, bool) {
        chunks(&self.raw_body)
    }

    /// The decoded chunked body.
    pub fn decoded(&self) -> String {
        self.chunks().0.concat()
    }
}

/// The complete chunks of a chunked body read so far, and whether the zero chunk ended it.
pub fn chunks(mut data: &[u8]) -> (Vec<String>, bool) {
    let mut chunks = Vec::new();
    loop {
        let Some(line_end) = data.windows(2).position(|window| window == b"\r\n") else {
            return (chunks, false);
        };
        let size = usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap(), 16)
            .expect("chunk size");
        let start = line_end + 2;
        if size == 0 {
            assert_eq!(&data[start..], b"\r\n", "bytes after the last chunk");
            return (chunks, true);
        }
        if data.len() < start + size + 2 {
            return (chunks, false);
        }
        chunks.push(String::from_utf8(data[start..start + size].to_vec()).unwrap());
        assert_eq!(&data[start + size..start + size + 2], b"\r\n");
        data = &data[start + size + 2..];
    }
}

/// How many complete chunks follow the response head in `buf` (0 before the head is whole).
pub fn chunks_after_head(buf: &[u8]) -> usize {
    match buf.windows(4).position(|window| window == b"\r\n\r\n") {
        Some(end) => chunks(&buf[end + 4..]).0.len(),
        None => 0,
    }
}

/// Whether the response head is complete in `buf`.
pub fn has_head(buf: &[u8]) -> bool {
    buf.windows(4).any(|window| window == b"\r\n\r\n")
}
