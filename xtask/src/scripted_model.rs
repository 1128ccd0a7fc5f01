//! The DeepSeek stand-in of the browser tests: the fake DeepSeek server of `dsh-test-support`,
//! answering by the words of the latest user message and streaming like the real API.
//!
//! - `run one bash command`: reasoning and a `bash` call of `echo e2e-ok`, then (once the
//!   result is in) `The command printed e2e-ok.` in small pieces.
//! - `count slowly`: `tick 1 ` … `tick 200 `, one chunk each, 25 ms apart.
//! - `needs approval`: a `bash` call asking for `danger-full-access`, then
//!   `Approved and done.`
//! - `stream 5000 chunks`: `w1 ` … `w5000 `, one chunk each, as fast as the socket takes
//!   them (a long session for the page to keep up with).
//! - anything else: `OK.`

use std::time::Duration;

use dsh_test_support::fake_deepseek::{RecordedRequest, Reply, serve_in_background};
use dsh_test_support::sse::SseEvent;
use serde_json::{Value, json};

fn text(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]})
}

fn finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": reason}],
           "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}})
}

fn bash_call(arguments: &Value) -> Vec<SseEvent> {
    vec![
        SseEvent::data(
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null,
                     "reasoning_content": "I will run the command."}}]}),
        ),
        SseEvent::data(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                     "id": "call_e2e", "type": "function", "function": {"name": "bash",
                     "arguments": arguments.to_string()}}]}}]}),
        ),
        SseEvent::data(finish("tool_calls")),
    ]
}

fn answer(words: &str) -> Vec<SseEvent> {
    let mut pieces: Vec<SseEvent> = words
        .split_inclusive(' ')
        .map(|word| SseEvent::data(text(word)).after(Duration::from_millis(15)))
        .collect();
    pieces.push(SseEvent::data(finish("stop")));
    pieces
}

/// The reply to a chat request: its pieces, then `[DONE]`.
fn reply(request: &RecordedRequest) -> Reply {
    Reply::sse(pieces(&request.body))
}

/// The pieces of the reply to a chat request body.
fn pieces(body: &Value) -> Vec<SseEvent> {
    let (task, answered) = latest_task(body);
    if task.contains("count slowly") {
        let mut pieces: Vec<SseEvent> = (1..=200)
            .map(|n| SseEvent::data(text(&format!("tick {n} "))).after(Duration::from_millis(25)))
            .collect();
        pieces.push(SseEvent::data(finish("stop")));
        return pieces;
    }
    if task.contains("stream 5000 chunks") {
        let mut pieces: Vec<SseEvent> = (1..=5000)
            .map(|n| SseEvent::data(text(&format!("w{n} "))))
            .collect();
        pieces.push(SseEvent::data(finish("stop")));
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
    serve_in_background(reply).map_err(|error| format!("scripted model: {error}"))
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

    #[test]
    fn pieces_pace_the_stream_and_end_with_a_finish() {
        let task = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
        let ticks = pieces(&task("count slowly"));
        assert_eq!(ticks.len(), 201);
        assert_eq!(ticks[0].delay(), Duration::from_millis(25));
        assert_eq!(
            ticks[0].payload(),
            Some(text("tick 1 ").to_string().as_str())
        );
        let last = ticks.last().unwrap();
        assert_eq!(last.delay(), Duration::ZERO);
        assert_eq!(last.payload(), Some(finish("stop").to_string().as_str()));
        let call = pieces(&task("run one bash command"));
        assert!(call[1].payload().unwrap().contains("echo e2e-ok"));
        assert_eq!(pieces(&task("anything")).len(), 2);
    }
}
