//! Replies rebuilt from dsh 0.1.1's `llm-requests.jsonl` recordings.
//!
//! Each line holds a request dsh sent to its fake DeepSeek server and, in `reply`, what the
//! fake was told to answer: `{"kind":"text","text":...}` or
//! `{"kind":"tool","callId":...,"args":...}`. The stream itself was not recorded; the session
//! logs dsh wrote from it pin it down (the chunks as dsh logged them, the usage it reported),
//! and [`FixtureExchange::events`] rebuilds it:
//!
//! - text: the role chunk, then the text in pieces of 12 characters, then a `stop` finish;
//! - tool: the role chunk, the reasoning `The user wants a shell command run; ` and
//!   `I will call the bash tool.`, the `bash` call's arguments in two halves (id and name on
//!   the first), then a `tool_calls` finish;
//! - usage on the finish chunk: `prompt_tokens` = a quarter (rounded down) of the length of
//!   `JSON.stringify(body.messages)` in UTF-16 units, `completion_tokens` = a quarter (rounded
//!   up) of the text's length for text and 20 for a tool call, 0 cached tokens.

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;

use super::reply::Reply;
use crate::sse::{self, SseEvent};

/// The recorded runs: `01-zstd-default-one-bash`, `02-raw-jsonl-two-bash`,
/// `04-sqlite-one-bash`.
pub const FIXTURE_CASES: [&str; 3] = [
    "01-zstd-default-one-bash",
    "02-raw-jsonl-two-bash",
    "04-sqlite-one-bash",
];

/// Text pieces of dsh's fake, in characters.
const TEXT_PIECE: usize = 12;
/// The reasoning dsh's fake streamed before a tool call.
const TOOL_REASONING: [&str; 2] = [
    "The user wants a shell command run; ",
    "I will call the bash tool.",
];
/// The tool dsh's fake called.
const TOOL_NAME: &str = "bash";
/// The completion tokens dsh's fake reported for a tool call.
const TOOL_COMPLETION_TOKENS: u64 = 20;

/// The `llm-requests.jsonl` of a recorded run (one of [`FIXTURE_CASES`]), kept in this crate's
/// `fixtures/dsh-0.1.1/<case>/`.
pub fn fixture_path(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/dsh-0.1.1")
        .join(case)
        .join("llm-requests.jsonl")
}

/// What dsh's fake was told to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixtureReply {
    /// A text answer.
    Text {
        /// The whole text.
        text: String,
    },
    /// A `bash` tool call.
    Tool {
        /// The call id (`call_fake_1`).
        call_id: String,
        /// The arguments, as JSON text.
        arguments: String,
    },
}

/// One line of `llm-requests.jsonl`: a request dsh 0.1.1 sent and the reply its fake streamed.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureExchange {
    /// The request's number in the run, from 1.
    pub n: u64,
    /// The request method (`POST`).
    pub method: String,
    /// The request path (`/v1/chat/completions`).
    pub url: String,
    /// The request body dsh sent.
    pub body: Value,
    /// What the fake answered.
    pub reply: FixtureReply,
}

/// A fixture line or file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureError {
    /// What is wrong, and where.
    pub message: String,
}

impl fmt::Display for FixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FixtureError {}

fn error(message: impl Into<String>) -> FixtureError {
    FixtureError {
        message: message.into(),
    }
}

impl FixtureExchange {
    /// Reads one line.
    pub fn parse(line: &str) -> Result<Self, FixtureError> {
        let value: Value = serde_json::from_str(line)
            .map_err(|err| error(format!("fixture line is not JSON: {err}")))?;
        let text = |object: &Value, key: &str| -> Result<String, FixtureError> {
            object
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| error(format!("fixture line has no string {key:?}")))
        };
        let n = value
            .get("n")
            .and_then(Value::as_u64)
            .ok_or_else(|| error("fixture line has no number \"n\""))?;
        let body = value
            .get("body")
            .filter(|body| body.is_object())
            .cloned()
            .ok_or_else(|| error("fixture line has no object \"body\""))?;
        let reply = value
            .get("reply")
            .ok_or_else(|| error("fixture line has no \"reply\""))?;
        let reply = match reply.get("kind").and_then(Value::as_str) {
            Some("text") => FixtureReply::Text {
                text: text(reply, "text")?,
            },
            Some("tool") => FixtureReply::Tool {
                call_id: text(reply, "callId")?,
                arguments: text(reply, "args")?,
            },
            other => return Err(error(format!("unknown fixture reply kind {other:?}"))),
        };
        Ok(Self {
            n,
            method: text(&value, "method")?,
            url: text(&value, "url")?,
            body,
            reply,
        })
    }

    /// Reads every non-blank line of a file's text.
    pub fn parse_all(text: &str) -> Result<Vec<Self>, FixtureError> {
        text.lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(number, line)| {
                Self::parse(line).map_err(|err| error(format!("line {}: {err}", number + 1)))
            })
            .collect()
    }

    /// Reads the exchanges of a recorded run (one of [`FIXTURE_CASES`]).
    pub fn load(case: &str) -> Result<Vec<Self>, FixtureError> {
        let path = fixture_path(case);
        let text = std::fs::read_to_string(&path)
            .map_err(|err| error(format!("cannot read {}: {err}", path.display())))?;
        Self::parse_all(&text).map_err(|err| error(format!("{}: {err}", path.display())))
    }

    /// Whether the request offered tools (dsh's session-title request does not).
    pub fn has_tools(&self) -> bool {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty())
    }

    /// The `prompt_tokens` the fake reported: a quarter, rounded down, of the UTF-16 length of
    /// `JSON.stringify(body.messages)`.
    pub fn prompt_tokens(&self) -> u64 {
        let messages = self.body.get("messages").unwrap_or(&Value::Null);
        let length = dsh_protocol::json::to_js_string(messages)
            .encode_utf16()
            .count();
        u64::try_from(length / 4).unwrap_or(u64::MAX)
    }

    /// The `completion_tokens` the fake reported.
    pub fn completion_tokens(&self) -> u64 {
        match &self.reply {
            FixtureReply::Text { text } => {
                u64::try_from(text.encode_utf16().count().div_ceil(4)).unwrap_or(u64::MAX)
            }
            FixtureReply::Tool { .. } => TOOL_COMPLETION_TOKENS,
        }
    }

    /// The events the fake streamed, without the final `[DONE]` (see the module
    /// documentation).
    pub fn events(&self) -> Vec<SseEvent> {
        let usage = Some(sse::usage(
            self.prompt_tokens(),
            self.completion_tokens(),
            Some(0),
            None,
        ));
        match &self.reply {
            FixtureReply::Text { text } => sse::text_events(text, TEXT_PIECE, usage),
            FixtureReply::Tool { call_id, arguments } => {
                let mut events = vec![SseEvent::data(sse::chunk_role())];
                events.extend(
                    TOOL_REASONING
                        .iter()
                        .map(|text| SseEvent::data(sse::chunk_reasoning(text))),
                );
                let chars: Vec<char> = arguments.chars().collect();
                let (first, second) = chars.split_at(chars.len() / 2);
                let first: String = first.iter().collect();
                let second: String = second.iter().collect();
                events.push(SseEvent::data(sse::chunk_tool_call(
                    0,
                    Some(call_id),
                    Some(TOOL_NAME),
                    &first,
                )));
                events.push(SseEvent::data(sse::chunk_tool_call(0, None, None, &second)));
                events.push(SseEvent::data(sse::chunk_finish("tool_calls", usage)));
                events
            }
        }
    }

    /// The reply the fake sent: [`events`](FixtureExchange::events) then `[DONE]`.
    pub fn reply(&self) -> Reply {
        Reply::sse(self.events())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usage dsh 0.1.1 logged for each exchange of each run (`assistant/chunk` usage
    /// events, or none for the session-title request, which is not logged).
    type Logged = (&'static str, u64, Option<(u64, u64)>);

    const LOGGED_USAGE: [Logged; 10] = [
        (FIXTURE_CASES[0], 1, Some((1165, 20))),
        (FIXTURE_CASES[0], 2, None),
        (FIXTURE_CASES[0], 3, Some((1262, 14))),
        (FIXTURE_CASES[1], 1, Some((1170, 20))),
        (FIXTURE_CASES[1], 2, None),
        (FIXTURE_CASES[1], 3, Some((1266, 20))),
        (FIXTURE_CASES[1], 4, Some((1364, 16))),
        (FIXTURE_CASES[2], 1, Some((1165, 20))),
        (FIXTURE_CASES[2], 2, None),
        (FIXTURE_CASES[2], 3, Some((1261, 15))),
    ];

    fn exchange(case: &str, n: u64) -> FixtureExchange {
        FixtureExchange::load(case)
            .unwrap()
            .into_iter()
            .find(|exchange| exchange.n == n)
            .unwrap()
    }

    #[test]
    fn every_fixture_line_reads() {
        let mut count = 0;
        for case in FIXTURE_CASES {
            for exchange in FixtureExchange::load(case).unwrap() {
                assert_eq!(exchange.method, "POST");
                assert_eq!(exchange.url, "/v1/chat/completions");
                assert!(exchange.body.get("messages").is_some());
                count += 1;
            }
        }
        assert_eq!(count, LOGGED_USAGE.len());
    }

    #[test]
    fn rebuilt_usage_is_what_dsh_logged() {
        for (case, n, logged) in LOGGED_USAGE {
            let exchange = exchange(case, n);
            match logged {
                Some((input, output)) => {
                    assert_eq!(
                        (exchange.prompt_tokens(), exchange.completion_tokens()),
                        (input, output),
                        "{case} #{n}"
                    );
                }
                None => assert!(!exchange.has_tools(), "{case} #{n} is the title request"),
            }
        }
    }

    #[test]
    fn rebuilt_tool_stream_matches_the_logged_chunks() {
        let exchange = exchange(FIXTURE_CASES[0], 1);
        let payloads: Vec<Value> = exchange
            .events()
            .iter()
            .filter_map(SseEvent::payload)
            .map(|payload| serde_json::from_str(payload).unwrap())
            .collect();
        let deltas: Vec<&Value> = payloads
            .iter()
            .filter_map(|chunk| chunk.pointer("/choices/0/delta"))
            .collect();
        let reasoning: String = deltas
            .iter()
            .filter_map(|delta| delta.get("reasoning_content").and_then(Value::as_str))
            .collect();
        assert_eq!(
            reasoning,
            "The user wants a shell command run; I will call the bash tool."
        );
        let fragments: Vec<&str> = deltas
            .iter()
            .filter_map(|delta| delta.pointer("/tool_calls/0/function/arguments"))
            .filter_map(Value::as_str)
            .collect();
        // As dsh logged them: `tool-call-delta` chunks 17 and 18 of the session.
        assert_eq!(
            fragments,
            [
                "{\"command\":\"echo hello-from-dsh && uname -",
                "s\",\"description\":\"Run step 1 of the demo\"}"
            ]
        );
        let last = payloads.last().unwrap();
        assert_eq!(last["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(last["usage"]["prompt_tokens"], 1165);
        assert_eq!(last["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    }

    #[test]
    fn rebuilt_text_stream_matches_the_logged_chunks() {
        let exchange = exchange(FIXTURE_CASES[0], 3);
        let texts: Vec<String> = exchange
            .events()
            .iter()
            .filter_map(SseEvent::payload)
            .filter_map(|payload| serde_json::from_str::<Value>(payload).ok())
            .filter_map(|chunk| {
                chunk
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .filter(|text| !text.is_empty())
                    .map(str::to_owned)
            })
            .collect();
        // As dsh logged them: the `texts` of the packed text-chunks row.
        assert_eq!(
            texts,
            [
                "Done. The la",
                "st command p",
                "rinted: hell",
                "o-from-dsh\nL",
                "inux\n"
            ]
        );
    }

    #[test]
    fn bad_lines_are_refused() {
        for line in [
            "not json",
            "{}",
            r#"{"n":1,"method":"POST","url":"/","body":{},"reply":{"kind":"image"}}"#,
            r#"{"n":1,"method":"POST","url":"/","body":{},"reply":{"kind":"tool","callId":"c"}}"#,
            r#"{"n":1,"method":"POST","url":"/","body":[],"reply":{"kind":"text","text":"t"}}"#,
        ] {
            assert!(FixtureExchange::parse(line).is_err(), "{line}");
        }
        let error = FixtureExchange::parse_all("\n{}\n").unwrap_err();
        assert!(error.message.starts_with("line 2: "), "{error}");
    }
}
