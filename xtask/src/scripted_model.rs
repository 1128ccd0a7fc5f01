//! The DeepSeek stand-in of the browser tests: it answers by the words of the latest user
//! message, streaming like the real API, one request per connection.
//!
//! - `run one bash command`: reasoning and a `bash` call of `echo e2e-ok`, then (once the
//!   result is in) `The command printed e2e-ok.` in small pieces.
//! - `count slowly`: `tick 1 ` … `tick 200 `, one chunk each, 25 ms apart.
//! - `needs approval`: a `bash` call asking for `danger-full-access`, then
//!   `Approved and done.`
//! - `stream 5000 chunks`: `w1 ` … `w5000 `, one chunk each, as fast as the socket takes
//!   them (a long session for the page to keep up with).
//! - anything else: `OK.`

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

/// One streamed piece and the pause before it.
struct Piece {
    delay: Duration,
    chunk: Value,
}

fn now(chunk: Value) -> Piece {
    Piece {
        delay: Duration::ZERO,
        chunk,
    }
}

fn text(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]})
}

fn finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": reason}],
           "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}})
}

fn bash_call(arguments: &Value) -> Vec<Piece> {
    vec![
        now(
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null,
                     "reasoning_content": "I will run the command."}}]}),
        ),
        now(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                     "id": "call_e2e", "type": "function", "function": {"name": "bash",
                     "arguments": arguments.to_string()}}]}}]}),
        ),
        now(finish("tool_calls")),
    ]
}

fn answer(words: &str) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = words
        .split_inclusive(' ')
        .map(|word| Piece {
            delay: Duration::from_millis(15),
            chunk: text(word),
        })
        .collect();
    pieces.push(now(finish("stop")));
    pieces
}

/// The reply to a chat request body.
fn reply(body: &Value) -> Vec<Piece> {
    let (task, answered) = latest_task(body);
    if task.contains("count slowly") {
        let mut pieces: Vec<Piece> = (1..=200)
            .map(|n| Piece {
                delay: Duration::from_millis(25),
                chunk: text(&format!("tick {n} ")),
            })
            .collect();
        pieces.push(now(finish("stop")));
        return pieces;
    }
    if task.contains("stream 5000 chunks") {
        let mut pieces: Vec<Piece> = (1..=5000).map(|n| now(text(&format!("w{n} ")))).collect();
        pieces.push(now(finish("stop")));
        return pieces;
    }
    if task.contains("run one bash command") {
        return if answered {
            answer("The command printed e2e-ok.")
        } else {
            bash_call(&json!({"command": "echo e2e-ok", "description": "Print a marker"}))
        };
    }
    if task.contains("needs approval") {
        return if answered {
            answer("Approved and done.")
        } else {
            bash_call(&json!({"command": "echo approved-run",
                "description": "Print after approval",
                "sandbox_permissions": "danger-full-access",
                "justification": "The e2e test asks for it"}))
        };
    }
    answer("OK.")
}

/// The text of the latest message the user typed, and whether a tool result followed it.
fn latest_task(body: &Value) -> (String, bool) {
    let mut answered = false;
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    for message in messages.iter().rev() {
        match message["role"].as_str() {
            Some("tool") => answered = true,
            Some("user") => {
                let text = content_text(&message["content"]);
                if !text.starts_with("Current runtime context") {
                    return (text, answered);
                }
            }
            _ => {}
        }
    }
    (String::new(), answered)
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Starts the server on a free loopback port and returns its base URL; it serves until the
/// process exits.
pub fn start() -> Result<String, String> {
    crate::fake_model::serve_on_loopback("scripted model", serve)
}

/// Answers one request, streaming, then closes the connection.
fn serve(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let Some(body) = crate::fake_model::read_request(&mut reader) else {
        return;
    };
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    for piece in reply(&body) {
        std::thread::sleep(piece.delay);
        if writer
            .write_all(format!("data: {}\n\n", piece.chunk).as_bytes())
            .is_err()
        {
            // The harness stopped reading: a cancelled turn.
            return;
        }
    }
    let _ = writer.write_all(b"data: [DONE]\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_is_the_latest_typed_message_and_a_tool_result_answers_it() {
        let body = json!({"messages": [
            {"role": "system", "content": "x"},
            {"role": "user", "content": "please run one bash command"},
            {"role": "user", "content": "Current runtime context. ..."},
            {"role": "assistant", "content": null},
            {"role": "tool", "content": "e2e-ok"},
        ]});
        assert_eq!(
            latest_task(&body),
            ("please run one bash command".to_owned(), true)
        );
        let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "count slowly"}]}]});
        assert_eq!(latest_task(&body), ("count slowly".to_owned(), false));
    }
}
