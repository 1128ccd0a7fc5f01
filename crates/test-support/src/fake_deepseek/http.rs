//! Just enough HTTP/1.1 for the fake: requests read strictly enough to refuse garbage (400)
//! and never panic; responses framed by `Content-Length` or chunked, the connection closed
//! after them unless a `Content-Length` reply keeps it open for the next request.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A request as read from the socket.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) target: String,
    /// Names lowercased, in arrival order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

/// Why a request was refused, answered with `status`.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) message: String,
}

fn refuse(status: u16, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

/// Reads one request. `Ok(None)` when the client closed without sending a byte.
pub(crate) async fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, Refusal> {
    let mut buf = Vec::with_capacity(8 * 1024);
    let (head_len, body_start) = loop {
        if let Some(found) = find_head_end(&buf) {
            break found;
        }
        if buf.len() > MAX_HEAD {
            return Err(refuse(431, "request head larger than 64 KiB"));
        }
        if read_more(stream, &mut buf).await? == 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err(refuse(
                400,
                "connection closed before the request head ended",
            ));
        }
    };
    let head = buf.get(..head_len).unwrap_or_default();
    let (method, target, headers) = parse_head(head)?;
    let rest = buf.get(body_start..).unwrap_or_default().to_vec();

    let expects_continue =
        header(&headers, "expect").is_some_and(|value| value.eq_ignore_ascii_case("100-continue"));
    let framing = framing(&headers)?;
    if expects_continue && !matches!(framing, Framing::Length(0)) {
        // A client that waits for it may otherwise hold the body back for a while.
        stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .map_err(|error| refuse(400, format!("write failed: {error}")))?;
    }
    let body = match framing {
        Framing::Length(length) => read_length(stream, rest, length).await?,
        Framing::Chunked => read_chunked(stream, rest).await?,
    };
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
    }))
}

/// Reads what the socket has into `buf`; 0 at end of stream. There is no read timeout (a
/// timer would fire at once under tokio's paused clock): a client that never finishes its
/// request holds its connection until it closes it or the server is dropped.
async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<usize, Refusal> {
    let mut scratch = [0_u8; 8 * 1024];
    match stream.read(&mut scratch).await {
        Err(error) => Err(refuse(400, format!("read failed: {error}"))),
        Ok(read) => {
            buf.extend_from_slice(scratch.get(..read).unwrap_or_default());
            Ok(read)
        }
    }
}

/// Where the head ends (before its blank line) and the body starts. A bare `\n\n` is accepted.
fn find_head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let crlf = find(buf, b"\r\n\r\n").map(|at| (at, at + 4));
    let lf = find(buf, b"\n\n").map(|at| (at, at + 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

type Head = (String, String, Vec<(String, String)>);

fn parse_head(head: &[u8]) -> Result<Head, Refusal> {
    let text = std::str::from_utf8(head).map_err(|_| refuse(400, "request head is not UTF-8"))?;
    let mut lines = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refuse(
            400,
            format!("malformed request line {request_line:?}"),
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(refuse(400, format!("malformed method {method:?}")));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(refuse(400, format!("unsupported HTTP version {version:?}")));
    }
    let target = origin_form(target)
        .ok_or_else(|| refuse(400, format!("malformed request target {target:?}")))?;
    let mut headers = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            return Err(refuse(400, "folded header lines are not accepted"));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(refuse(400, format!("malformed header line {line:?}")));
        };
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(refuse(400, format!("malformed header name {name:?}")));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(refuse(400, format!("control character in header {name:?}")));
        }
        headers.push((
            name.to_ascii_lowercase(),
            value.trim_matches([' ', '\t']).to_owned(),
        ));
    }
    Ok((method.to_owned(), target, headers))
}

/// The path and query of a request target (an absolute URL is reduced to them).
fn origin_form(target: &str) -> Option<String> {
    if target.is_empty() || target.chars().any(|c| c.is_control() || c == ' ') {
        return None;
    }
    if target.starts_with('/') {
        return Some(target.to_owned());
    }
    let (_, rest) = target.split_once("://")?;
    Some(match rest.find('/') {
        Some(at) => rest.get(at..)?.to_owned(),
        None => "/".to_owned(),
    })
}

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// The first value of header `name` (lowercase).
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

enum Framing {
    Length(usize),
    Chunked,
}

fn framing(headers: &[(String, String)]) -> Result<Framing, Refusal> {
    let lengths: Vec<&str> = headers
        .iter()
        .filter(|(name, _)| name == "content-length")
        .map(|(_, value)| value.as_str())
        .collect();
    if let Some(encoding) = header(headers, "transfer-encoding") {
        if !lengths.is_empty() {
            return Err(refuse(400, "both Content-Length and Transfer-Encoding"));
        }
        let last = encoding.rsplit(',').next().unwrap_or_default().trim();
        if !last.eq_ignore_ascii_case("chunked") {
            return Err(refuse(
                400,
                format!("unsupported Transfer-Encoding {encoding:?}"),
            ));
        }
        return Ok(Framing::Chunked);
    }
    let Some(first) = lengths.first() else {
        return Ok(Framing::Length(0));
    };
    if lengths.iter().any(|value| value != first) {
        return Err(refuse(400, "conflicting Content-Length headers"));
    }
    if first.is_empty() || !first.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(refuse(400, format!("malformed Content-Length {first:?}")));
    }
    let length: usize = first
        .parse()
        .map_err(|_| refuse(413, "Content-Length too large"))?;
    if length > MAX_BODY {
        return Err(refuse(413, "request body larger than 64 MiB"));
    }
    Ok(Framing::Length(length))
}

async fn read_length(
    stream: &mut TcpStream,
    mut body: Vec<u8>,
    length: usize,
) -> Result<Vec<u8>, Refusal> {
    while body.len() < length {
        if read_more(stream, &mut body).await? == 0 {
            return Err(refuse(
                400,
                format!(
                    "connection closed after {} of {length} body bytes",
                    body.len()
                ),
            ));
        }
    }
    body.truncate(length);
    Ok(body)
}

async fn read_chunked(stream: &mut TcpStream, mut buf: Vec<u8>) -> Result<Vec<u8>, Refusal> {
    loop {
        match decode_chunked(&buf) {
            Chunked::Complete(body) => return Ok(body),
            Chunked::Invalid(why) => return Err(refuse(400, format!("bad chunked body: {why}"))),
            Chunked::Incomplete => {}
        }
        if buf.len() > MAX_BODY {
            return Err(refuse(413, "request body larger than 64 MiB"));
        }
        if read_more(stream, &mut buf).await? == 0 {
            return Err(refuse(400, "connection closed inside a chunked body"));
        }
    }
}

/// The state of a chunked body read so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunked {
    /// The whole body, decoded.
    Complete(Vec<u8>),
    /// More bytes are needed.
    Incomplete,
    /// Not chunked encoding.
    Invalid(&'static str),
}

/// Decodes a chunked body (size lines, data, the zero chunk, optional trailers).
pub(crate) fn decode_chunked(data: &[u8]) -> Chunked {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(rest) = data.get(at..) else {
            return Chunked::Incomplete;
        };
        let Some(line_len) = find(rest, b"\r\n") else {
            return if rest.len() > 1024 {
                Chunked::Invalid("chunk size line too long")
            } else {
                Chunked::Incomplete
            };
        };
        let line = rest.get(..line_len).unwrap_or_default();
        let size_text = line.split(|&byte| byte == b';').next().unwrap_or_default();
        let Ok(size_text) = std::str::from_utf8(size_text) else {
            return Chunked::Invalid("chunk size is not text");
        };
        let size_text = size_text.trim_matches([' ', '\t']);
        if size_text.is_empty() || !size_text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return Chunked::Invalid("malformed chunk size");
        }
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            return Chunked::Invalid("chunk size too large");
        };
        at += line_len + 2;
        if size == 0 {
            let Some(trailers) = data.get(at..) else {
                return Chunked::Incomplete;
            };
            if trailers.starts_with(b"\r\n") {
                return Chunked::Complete(body);
            }
            return match find(trailers, b"\r\n\r\n") {
                Some(_) => Chunked::Complete(body),
                None => Chunked::Incomplete,
            };
        }
        let Some(end) = at.checked_add(size) else {
            return Chunked::Invalid("chunk size too large");
        };
        let (Some(chunk), Some(crlf)) = (data.get(at..end), data.get(end..end.saturating_add(2)))
        else {
            return Chunked::Incomplete;
        };
        if crlf != b"\r\n" {
            return Chunked::Invalid("chunk data not followed by CRLF");
        }
        body.extend_from_slice(chunk);
        at = end + 2;
    }
}

/// The reason phrase of `status`.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A response head: status line, `headers` in order, blank line.
pub(crate) fn response_head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// `defaults`, with each of `extra` replacing the default of the same name (case-insensitive)
/// or added after them.
pub(crate) fn merge_headers(
    defaults: Vec<(String, String)>,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut headers = defaults;
    for (name, value) in extra {
        match headers
            .iter_mut()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
        {
            Some(slot) => slot.1.clone_from(value),
            None => headers.push((name.clone(), value.clone())),
        }
    }
    headers
}

/// What becomes of a connection once a response is out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connection {
    /// `connection: close`, then the connection is closed.
    Close,
    /// No `connection` header; the connection stays open for the next request.
    KeepAlive,
}

/// Writes a whole response framed by `Content-Length` in one write (so Nagle's algorithm never
/// holds the body back), then closes the connection or keeps it; returns whether it is still
/// open.
pub(crate) async fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(String, String)],
    body: &[u8],
    connection: Connection,
) -> bool {
    let mut defaults = vec![
        ("content-type".to_owned(), content_type.to_owned()),
        ("content-length".to_owned(), body.len().to_string()),
    ];
    if connection == Connection::Close {
        defaults.push(("connection".to_owned(), "close".to_owned()));
    }
    let mut bytes = response_head(status, &merge_headers(defaults, extra));
    bytes.extend_from_slice(body);
    if stream.write_all(&bytes).await.is_err() {
        return false;
    }
    match connection {
        Connection::KeepAlive => true,
        Connection::Close => {
            close(stream).await;
            false
        }
    }
}

/// One chunk of a chunked body.
pub(crate) fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// The end of a chunked body.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// Ends our side of the connection and lets the client read everything before the socket
/// closes: sends FIN, then discards what the client still sends until it closes (at most a
/// second), so unread input does not turn the close into a reset that loses the response.
pub(crate) async fn close(stream: &mut TcpStream) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let drain = async {
        let mut scratch = [0_u8; 4096];
        while matches!(stream.read(&mut scratch).await, Ok(read) if read > 0) {}
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_decode() {
        assert_eq!(
            decode_chunked(b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"),
            Chunked::Complete(b"hello world".to_vec())
        );
        assert_eq!(
            decode_chunked(b"5\r\nhello\r\n0\r\nx-trailer: 1\r\n\r\n"),
            Chunked::Complete(b"hello".to_vec())
        );
        assert_eq!(decode_chunked(b"5\r\nhel"), Chunked::Incomplete);
        assert_eq!(decode_chunked(b"5\r\nhello\r\n0\r\n"), Chunked::Incomplete);
        assert_eq!(
            decode_chunked(b"zz\r\nhello\r\n"),
            Chunked::Invalid("malformed chunk size")
        );
        assert_eq!(
            decode_chunked(b"2\r\nhello\r\n"),
            Chunked::Invalid("chunk data not followed by CRLF")
        );
        assert_eq!(
            decode_chunked(b"ffffffffffffffffffff\r\n"),
            Chunked::Invalid("chunk size too large")
        );
    }

    #[test]
    fn heads_parse_or_are_refused() {
        let (method, target, headers) = parse_head(
            b"POST http://127.0.0.1:9/v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nX-Thing:  v  ",
        )
        .unwrap();
        assert_eq!(method, "POST");
        assert_eq!(target, "/v1/chat/completions?x=1");
        assert_eq!(
            headers,
            [
                ("host".to_owned(), "a".to_owned()),
                ("x-thing".to_owned(), "v".to_owned())
            ]
        );
        for bad in [
            &b"GARBAGE"[..],
            b"GET / HTTP/2.0",
            b"GET  / HTTP/1.1",
            b"G(T / HTTP/1.1",
            b"GET / HTTP/1.1\r\nno colon",
            b"GET / HTTP/1.1\r\n: empty name",
            b"GET / HTTP/1.1\r\nA: b\r\n folded",
            b"GET nowhere HTTP/1.1",
            b"GET / HTTP/1.1\r\nA: \xff",
        ] {
            assert_eq!(parse_head(bad).map(|_| ()).unwrap_err().status, 400);
        }
    }

    #[test]
    fn framing_is_checked() {
        let headers = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect()
        };
        assert!(matches!(
            framing(&headers(&[("content-length", "12")])),
            Ok(Framing::Length(12))
        ));
        assert!(matches!(framing(&headers(&[])), Ok(Framing::Length(0))));
        assert!(matches!(
            framing(&headers(&[("transfer-encoding", "gzip, chunked")])),
            Ok(Framing::Chunked)
        ));
        for bad in [
            headers(&[("content-length", "-1")]),
            headers(&[("content-length", "1"), ("content-length", "2")]),
            headers(&[("content-length", "1"), ("transfer-encoding", "chunked")]),
            headers(&[("transfer-encoding", "gzip")]),
        ] {
            assert_eq!(framing(&bad).map(|_| ()).unwrap_err().status, 400);
        }
        assert_eq!(
            framing(&headers(&[("content-length", "99999999999999999999999")]))
                .map(|_| ())
                .unwrap_err()
                .status,
            413
        );
    }

    #[test]
    fn head_end_is_found() {
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some((14, 18)));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\n\nbody"), Some((14, 16)));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n"), None);
    }
}
