//! The model of the headless benchmark: the fake DeepSeek server of `dsh-test-support`,
//! answering every chat request at once. A request without a tool result gets one `bash` call;
//! a request that carries one gets a short text answer. So each `dsh --profile headless` run
//! makes one bash call and two model requests, and the figures measure dsh, not a model.
//!
//! Each answer goes out in one write framed by `Content-Length`, on a connection kept alive
//! for the run's next request, so neither a connection setup nor a chunked stream is measured.

use dsh_test_support::fake_deepseek::{RecordedRequest, Reply, serve_in_background};
use dsh_test_support::sse::{self, SseEvent};

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
    serve_in_background(reply).map_err(|error| format!("fake model: {error}"))
}

/// The answer to one chat request.
fn reply(request: &RecordedRequest) -> Reply {
    let chunks = if request.body_text.contains("tool_call_id") {
        ANSWER
    } else {
        BASH_CALL
    };
    let mut events: Vec<SseEvent> = chunks
        .iter()
        .map(|chunk| SseEvent::data_text(*chunk))
        .collect();
    events.push(SseEvent::done());
    Reply::http(200, "text/event-stream", sse::render(&events)).keep_alive()
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;

    fn post(body: &str) -> String {
        format!(
            "POST /chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    /// The response as the server puts it on the wire, in one piece.
    fn expected(chunks: &[&str]) -> String {
        let mut events: String = chunks
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect();
        events.push_str("data: [DONE]\n\n");
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{events}",
            events.len()
        )
    }

    #[test]
    fn a_run_gets_the_bash_call_then_the_answer_on_one_connection() {
        let url = start().unwrap();
        let mut stream = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let turn = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
        let answered =
            r#"{"messages":[{"role":"tool","tool_call_id":"call_bench","content":"bench"}]}"#;
        for (body, chunks) in [(turn, BASH_CALL), (answered, ANSWER)] {
            stream.write_all(post(body).as_bytes()).unwrap();
            let want = expected(chunks);
            let mut got = vec![0; want.len()];
            stream.read_exact(&mut got).unwrap();
            assert_eq!(String::from_utf8_lossy(&got), want);
        }
    }
}
