//! Server-sent events shaped like DeepSeek's chat-completions stream.
//!
//! [`SseEvent`] is one frame the fake server sends: a `data:` event, a comment (`: keep-alive`)
//! or raw bytes. The `chunk_*` functions build the JSON payloads DeepSeek (and dsh's own fake)
//! streams; [`render`] prints events as the exact bytes on the wire.
//!
//! ```
//! use dsh_test_support::sse::{self, SseEvent};
//!
//! let events = vec![
//!     SseEvent::data(sse::chunk_role()),
//!     SseEvent::data(sse::chunk_text("hello")),
//!     SseEvent::data(sse::chunk_finish("stop", Some(sse::usage(3, 1, None, None)))),
//!     SseEvent::done(),
//! ];
//! assert!(sse::render(&events).starts_with(
//!     "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}}]}\n\n"
//! ));
//! ```

use std::time::Duration;

use serde_json::{Map, Value, json};

/// The payload of the SSE event that ends a DeepSeek stream.
pub const DONE: &str = "[DONE]";

/// One SSE frame the fake sends, with an optional pause before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    frame: Frame,
    delay: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Frame {
    /// The payload of a `data:` event (one `data:` line per line of it).
    Data(String),
    /// A comment: `: <text>`.
    Comment(String),
    /// Bytes sent as given.
    Raw(String),
}

impl SseEvent {
    /// A `data:` event carrying `value` as compact JSON: `data: <json>\n\n`.
    pub fn data(value: Value) -> Self {
        Self::data_text(value.to_string())
    }

    /// A `data:` event carrying `payload` as given (for instance malformed JSON). A payload with
    /// line breaks is sent as one `data:` line per line, as SSE requires.
    pub fn data_text(payload: impl Into<String>) -> Self {
        Self::new(Frame::Data(payload.into()))
    }

    /// `data: [DONE]\n\n`, the end of a DeepSeek stream.
    pub fn done() -> Self {
        Self::data_text(DONE)
    }

    /// A comment, `: <text>\n\n` (`SseEvent::comment("keep-alive")`): not an event for the
    /// client; a server's keep-alive (dsh's DeepSeek adapter does not count it as liveness).
    pub fn comment(text: impl Into<String>) -> Self {
        Self::new(Frame::Comment(text.into()))
    }

    /// Bytes sent exactly as given, with no framing added (to split an event across writes, or
    /// send something that is not SSE). An empty raw event sends nothing.
    pub fn raw(text: impl Into<String>) -> Self {
        Self::new(Frame::Raw(text.into()))
    }

    fn new(frame: Frame) -> Self {
        Self {
            frame,
            delay: Duration::ZERO,
        }
    }

    /// The same event, sent after a pause of `delay` (counted from the previous event, or from
    /// the response head for the first one).
    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The pause before this event.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The payload of a `data:` event, `None` for comments and raw bytes.
    pub fn payload(&self) -> Option<&str> {
        match &self.frame {
            Frame::Data(payload) => Some(payload),
            Frame::Comment(_) | Frame::Raw(_) => None,
        }
    }

    /// Whether this is the `data: [DONE]` event.
    pub fn is_done(&self) -> bool {
        self.payload() == Some(DONE)
    }

    /// The exact bytes of this event on the wire (before HTTP chunked encoding).
    pub fn to_sse(&self) -> String {
        match &self.frame {
            Frame::Data(payload) => {
                let mut out = String::with_capacity(payload.len() + 8);
                for line in payload.split('\n') {
                    out.push_str("data: ");
                    out.push_str(line.strip_suffix('\r').unwrap_or(line));
                    out.push('\n');
                }
                out.push('\n');
                out
            }
            Frame::Comment(text) => format!(": {text}\n\n"),
            Frame::Raw(text) => text.clone(),
        }
    }
}

impl From<Value> for SseEvent {
    fn from(value: Value) -> Self {
        Self::data(value)
    }
}

/// The bytes of `events` on the wire, concatenated (before HTTP chunked encoding).
pub fn render(events: &[SseEvent]) -> String {
    events.iter().map(SseEvent::to_sse).collect()
}

/// The first chunk DeepSeek (and dsh's fake) sends: the role and empty content, which opens no
/// block: `{"choices":[{"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}`.
pub fn chunk_role() -> Value {
    json!({"choices": [{"delta": {"role": "assistant", "content": null, "reasoning_content": ""}}]})
}

/// A chunk of one choice with `delta` and no finish reason.
fn delta_chunk(delta: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

/// A reasoning fragment:
/// `{"choices":[{"index":0,"delta":{"reasoning_content":text},"finish_reason":null}]}`.
pub fn chunk_reasoning(text: &str) -> Value {
    delta_chunk(json!({"reasoning_content": text}))
}

/// A text fragment: `{"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}`.
pub fn chunk_text(text: &str) -> Value {
    delta_chunk(json!({"content": text}))
}

/// A tool-call fragment for the call at wire `index`. DeepSeek sends `id`, `type` and
/// `function.name` on the first fragment of a call only: pass `None` to leave them out.
/// `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",
/// "function":{"name":"bash","arguments":"{\"com"}}]},"finish_reason":null}]}`.
pub fn chunk_tool_call(
    index: u32,
    id: Option<&str>,
    name: Option<&str>,
    args_fragment: &str,
) -> Value {
    let mut call = Map::new();
    call.insert("index".into(), json!(index));
    if let Some(id) = id {
        call.insert("id".into(), json!(id));
        call.insert("type".into(), json!("function"));
    }
    let mut function = Map::new();
    if let Some(name) = name {
        function.insert("name".into(), json!(name));
    }
    function.insert("arguments".into(), json!(args_fragment));
    call.insert("function".into(), Value::Object(function));
    delta_chunk(json!({"tool_calls": [Value::Object(call)]}))
}

/// The chunk that ends a choice: `reason` is `stop`, `tool_calls`, `length`, `content_filter`
/// or anything else. With `usage`, the usage rides on the same chunk (as DeepSeek sends it):
/// `{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{...}}`.
pub fn chunk_finish(reason: &str, usage: Option<Value>) -> Value {
    let mut chunk =
        json!({"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": reason}]});
    if let (Some(usage), Some(object)) = (usage, chunk.as_object_mut()) {
        object.insert("usage".into(), usage);
    }
    chunk
}

/// A trailing usage-only chunk, as OpenAI-compatible servers send with
/// `stream_options.include_usage`: `{"choices":[],"usage":{...}}`.
pub fn chunk_usage(usage: Value) -> Value {
    json!({"choices": [], "usage": usage})
}

/// DeepSeek's usage object: `prompt_tokens`, `completion_tokens`, `total_tokens`; with `cached`,
/// both forms of the cache hit (`prompt_cache_hit_tokens`/`prompt_cache_miss_tokens` and
/// `prompt_tokens_details.cached_tokens`); with `reasoning`,
/// `completion_tokens_details.reasoning_tokens`. Build the object with `json!` to test one form
/// alone.
pub fn usage(prompt: u64, completion: u64, cached: Option<u64>, reasoning: Option<u64>) -> Value {
    let mut usage = Map::new();
    usage.insert("prompt_tokens".into(), json!(prompt));
    usage.insert("completion_tokens".into(), json!(completion));
    usage.insert(
        "total_tokens".into(),
        json!(prompt.saturating_add(completion)),
    );
    if let Some(cached) = cached {
        usage.insert("prompt_cache_hit_tokens".into(), json!(cached));
        usage.insert(
            "prompt_cache_miss_tokens".into(),
            json!(prompt.saturating_sub(cached)),
        );
        usage.insert(
            "prompt_tokens_details".into(),
            json!({"cached_tokens": cached}),
        );
    }
    if let Some(reasoning) = reasoning {
        usage.insert(
            "completion_tokens_details".into(),
            json!({"reasoning_tokens": reasoning}),
        );
    }
    Value::Object(usage)
}

/// `text` cut into pieces of at most `size` characters (at least one character each; an empty
/// text gives no piece).
pub fn split_chars(text: &str, size: usize) -> Vec<String> {
    let size = size.max(1);
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(String::from_iter).collect()
}

/// A whole text answer without the final `[DONE]`: the role chunk, `text` in pieces of
/// `piece_chars` characters, and a `stop` finish carrying `usage`. Pass it to
/// `Reply::sse`, which adds `[DONE]`.
pub fn text_events(text: &str, piece_chars: usize, usage: Option<Value>) -> Vec<SseEvent> {
    let mut events = vec![SseEvent::data(chunk_role())];
    events.extend(
        split_chars(text, piece_chars)
            .iter()
            .map(|piece| SseEvent::data(chunk_text(piece))),
    );
    events.push(SseEvent::data(chunk_finish("stop", usage)));
    events
}

/// One tool call without the final `[DONE]`: the role chunk, the call's `arguments` in
/// `fragments` fragments (id and name on the first only), and a `tool_calls` finish carrying
/// `usage`.
pub fn tool_call_events(
    id: &str,
    name: &str,
    arguments: &str,
    fragments: usize,
    usage: Option<Value>,
) -> Vec<SseEvent> {
    let count = arguments.chars().count();
    let size = count.div_ceil(fragments.max(1)).max(1);
    let mut pieces = split_chars(arguments, size);
    if pieces.is_empty() {
        pieces.push(String::new());
    }
    let mut events = vec![SseEvent::data(chunk_role())];
    for (position, piece) in pieces.iter().enumerate() {
        let chunk = if position == 0 {
            chunk_tool_call(0, Some(id), Some(name), piece)
        } else {
            chunk_tool_call(0, None, None, piece)
        };
        events.push(SseEvent::data(chunk));
    }
    events.push(SseEvent::data(chunk_finish("tool_calls", usage)));
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_chunk_is_the_one_dsh_fake_sends() {
        assert_eq!(
            SseEvent::data(chunk_role()).to_sse(),
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}}]}\n\n"
        );
    }

    #[test]
    fn chunks_have_deepseek_shapes() {
        assert_eq!(
            chunk_text("hi").to_string(),
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#
        );
        assert_eq!(
            chunk_reasoning("hm").to_string(),
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}]}"#
        );
        assert_eq!(
            chunk_tool_call(1, Some("call_1"), Some("bash"), "{\"a").to_string(),
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"a"}}]},"finish_reason":null}]}"#
        );
        assert_eq!(
            chunk_tool_call(1, None, None, "\"}").to_string(),
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"}"}}]},"finish_reason":null}]}"#
        );
        assert_eq!(
            chunk_finish("stop", Some(usage(3, 1, None, None))).to_string(),
            r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#
        );
        assert_eq!(
            chunk_finish("length", None).to_string(),
            r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}]}"#
        );
        assert_eq!(
            usage(10, 5, Some(4), Some(2)).to_string(),
            r#"{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":6,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}"#
        );
        assert_eq!(
            chunk_usage(json!({"prompt_tokens": 1})).to_string(),
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#
        );
    }

    #[test]
    fn events_render_to_exact_bytes() {
        let events = [
            SseEvent::comment("keep-alive"),
            SseEvent::data(json!({"a": 1})),
            SseEvent::data_text("line one\nline two"),
            SseEvent::raw("data: {\"spl"),
            SseEvent::done(),
        ];
        assert_eq!(
            render(&events),
            ": keep-alive\n\ndata: {\"a\":1}\n\ndata: line one\ndata: line two\n\ndata: {\"spl\
             data: [DONE]\n\n"
        );
        assert!(SseEvent::done().is_done());
        assert!(!SseEvent::comment("x").is_done());
        assert_eq!(
            SseEvent::done().after(Duration::from_millis(5)).delay(),
            Duration::from_millis(5)
        );
    }

    #[test]
    fn stream_helpers_cut_text_and_arguments() {
        assert_eq!(split_chars("héllo!", 4), ["héll", "o!"]);
        assert!(split_chars("", 4).is_empty());
        let text = text_events("hello world", 5, None);
        let pieces: Vec<_> = text.iter().filter_map(SseEvent::payload).collect();
        assert_eq!(pieces.len(), 5);
        assert_eq!(
            pieces.get(2),
            Some(&chunk_text(" worl").to_string().as_str())
        );
        let call = tool_call_events("call_1", "bash", "{\"command\":\"ls\"}", 2, None);
        assert_eq!(call.len(), 4);
        assert_eq!(
            call.get(2).and_then(SseEvent::payload),
            Some(
                chunk_tool_call(0, None, None, "d\":\"ls\"}")
                    .to_string()
                    .as_str()
            )
        );
    }
}
