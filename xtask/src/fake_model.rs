//! A tiny DeepSeek stand-in for the headless benchmark: answers every chat request at once,
//! over plain HTTP/1.1 on loopback. A request without a tool result gets one `bash` call;
//! a request that carries one gets a short text answer. So each `dsh --profile headless`
//! run makes one bash call and two model requests, and the figures measure dsh, not a model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

const BASH_CALL: &[&str] = &[
    r#"{"choices":[{"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_bench","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo bench\",\"description\":\"Print a word\"}"}}]}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}"#,
];

const ANSWER: &[&str] = &[
    r#"{"choices":[{"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"content":"The command printed bench."}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":950,"completion_tokens":6,"total_tokens":956}}"#,
];

/// Starts the server on a free loopback port and returns its base URL. It serves until the
/// process exits.
pub fn start() -> Result<String, String> {
    serve_on_loopback("fake model", serve)
}

/// Listens on a free loopback port and hands each connection to `serve` on a thread of its
/// own, until the process exits; returns the base URL.
pub(crate) fn serve_on_loopback(label: &str, serve: fn(TcpStream)) -> Result<String, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| format!("{label}: {error}"))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("{label}: {error}"))?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    Ok(format!("http://{address}"))
}

/// Answers the requests of one keep-alive connection until it closes.
fn serve(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(body) = read_request(&mut reader) {
        let chunks = if body.contains("tool_call_id") {
            ANSWER
        } else {
            BASH_CALL
        };
        let mut events: String = chunks
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect();
        events.push_str("data: [DONE]\n\n");
        // One write, so Nagle's algorithm never holds the body back for a delayed ACK.
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{events}",
            events.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// Reads one request and returns its body; `None` when the connection closed.
pub(crate) fn read_request(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(String::from_utf8_lossy(&body).into_owned())
}
