//! DeepSeek stream payloads to [`StreamChunk`]s (dsh's `src/translate.ts`).

use std::collections::HashMap;
use std::fmt;

use dsh_llm::{ContentBlock, FinishReason, LlmFailure, StreamChunk, TokenUsage, codes};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The message of the `EMPTY_RESPONSE` finish.
pub const EMPTY_RESPONSE_MESSAGE: &str = "model returned a completed response with no content";

#[derive(Debug, Deserialize)]
struct WireChunk {
    #[serde(default)]
    choices: Option<Vec<WireChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct WireChoice {
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default, deserialize_with = "string_or_none")]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireDelta {
    #[serde(default, deserialize_with = "string_or_none")]
    content: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// DeepSeek's usage object (the fields the harness reads).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct WireUsage {
    /// Prompt tokens, cache hits included.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, reasoning included.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// DeepSeek's own cache-hit count.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
    /// OpenAI-style prompt details.
    #[serde(default)]
    pub prompt_tokens_details: Option<WirePromptDetails>,
    /// OpenAI-style completion details.
    #[serde(default)]
    pub completion_tokens_details: Option<WireCompletionDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct WirePromptDetails {
    /// Cache hits.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct WireCompletionDetails {
    /// Reasoning tokens (a part of the completion tokens).
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// A string field that is ignored (`None`) when it holds anything else (`null`, a number, ...),
/// as dsh's `typeof x === 'string'` checks do.
fn string_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    struct StringOrNone;
    impl<'de> Visitor<'de> for StringOrNone {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    deserializer.deserialize_any(StringOrNone)
}

/// Maps a wire `finish_reason`: `stop`, `tool_calls`, `length`; anything else `r` is
/// `error{message:'model stopped: r', code: R}`.
pub fn map_finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" => FinishReason::ToolCalls,
        "length" => FinishReason::MaxTokens,
        other => FinishReason::Error {
            failure: LlmFailure::new(other.to_uppercase(), format!("model stopped: {other}")),
        },
    }
}

/// Maps wire usage to the harness's disjoint counts: cache hits are taken out of the input.
pub fn map_usage(usage: &WireUsage) -> TokenUsage {
    let cache_read = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|details| details.cached_tokens)
        .or(usage.prompt_cache_hit_tokens);
    TokenUsage {
        input_tokens: usage
            .prompt_tokens
            .unwrap_or(0)
            .saturating_sub(cache_read.unwrap_or(0)),
        output_tokens: usage.completion_tokens.unwrap_or(0),
        cache_read_tokens: cache_read,
        cache_write_tokens: None,
        reasoning_tokens: usage
            .completion_tokens_details
            .as_ref()
            .and_then(|details| details.reasoning_tokens),
    }
}

#[derive(Debug)]
enum Open {
    Text(String),
    Reasoning(String),
    ToolCall {
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
}

impl Open {
    fn close(self) -> ContentBlock {
        match self {
            Self::Text(text) => ContentBlock::Text { text },
            Self::Reasoning(text) => ContentBlock::Reasoning { text },
            Self::ToolCall {
                id,
                name,
                arguments,
            } => ContentBlock::ToolCall {
                id: id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                arguments,
            },
        }
    }
}

/// The translation state of one response: open blocks in open order, the pending finish and
/// the latest usage. Feed each SSE data payload to [`Translator::push`], then call
/// [`Translator::done`] at `[DONE]`.
#[derive(Debug, Default)]
pub struct Translator {
    blocks: Vec<Open>,
    text: Option<usize>,
    reasoning: Option<usize>,
    tools: HashMap<u64, usize>,
    pending_finish: Option<FinishReason>,
    pending_usage: Option<TokenUsage>,
}

fn index_of(position: usize) -> u64 {
    u64::try_from(position).unwrap_or(u64::MAX)
}

impl Translator {
    /// A translator at the start of a response.
    pub fn new() -> Self {
        Self::default()
    }

    fn open(&mut self, block: Open, block_type: &str, out: &mut Vec<StreamChunk>) -> usize {
        let position = self.blocks.len();
        self.blocks.push(block);
        out.push(StreamChunk::BlockStart {
            index: index_of(position),
            block_type: block_type.to_owned(),
        });
        position
    }

    /// Translates one data payload, appending its chunks to `out`. A payload that is not a
    /// DeepSeek chunk fails with `MALFORMED_RESPONSE`.
    pub fn push(&mut self, payload: &str, out: &mut Vec<StreamChunk>) -> Result<(), LlmFailure> {
        let chunk: WireChunk = serde_json::from_str(payload).map_err(|_| {
            let head: String = payload.chars().take(120).collect();
            LlmFailure::new(
                codes::MALFORMED_RESPONSE,
                format!("malformed SSE payload: {head}"),
            )
        })?;
        for choice in chunk.choices.into_iter().flatten() {
            if let Some(delta) = choice.delta {
                self.push_delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.pending_finish = Some(map_finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            self.pending_usage = Some(map_usage(&usage));
        }
        Ok(())
    }

    fn push_delta(&mut self, delta: WireDelta, out: &mut Vec<StreamChunk>) {
        if let Some(text) = delta.reasoning_content.filter(|text| !text.is_empty()) {
            let position = match self.reasoning {
                Some(position) => position,
                None => {
                    let position = self.open(Open::Reasoning(String::new()), "reasoning", out);
                    self.reasoning = Some(position);
                    position
                }
            };
            if let Some(Open::Reasoning(buffer)) = self.blocks.get_mut(position) {
                buffer.push_str(&text);
            }
            out.push(StreamChunk::ReasoningDelta {
                index: index_of(position),
                text,
            });
        }
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            let position = match self.text {
                Some(position) => position,
                None => {
                    let position = self.open(Open::Text(String::new()), "text", out);
                    self.text = Some(position);
                    position
                }
            };
            if let Some(Open::Text(buffer)) = self.blocks.get_mut(position) {
                buffer.push_str(&text);
            }
            out.push(StreamChunk::TextDelta {
                index: index_of(position),
                text,
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            let position = match self.tools.get(&call.index) {
                Some(position) => *position,
                None => {
                    let open = Open::ToolCall {
                        id: None,
                        name: None,
                        arguments: String::new(),
                    };
                    let position = self.open(open, "tool-call", out);
                    self.tools.insert(call.index, position);
                    position
                }
            };
            let (name_part, fragment) = match call.function {
                Some(function) => (function.name, function.arguments.unwrap_or_default()),
                None => (None, String::new()),
            };
            if let Some(Open::ToolCall {
                id,
                name,
                arguments,
            }) = self.blocks.get_mut(position)
            {
                if call.id.is_some() {
                    *id = call.id;
                }
                if name_part.is_some() {
                    *name = name_part;
                }
                arguments.push_str(&fragment);
                out.push(StreamChunk::ToolCallDelta {
                    index: index_of(position),
                    id: id.clone().unwrap_or_default(),
                    name: name.clone(),
                    arguments_delta: fragment,
                });
            }
        }
    }

    /// `[DONE]`: every `block-end` in open order, the `usage` (if any), then the `finish`.
    pub fn done(self, out: &mut Vec<StreamChunk>) {
        let empty = self.blocks.is_empty();
        for (position, block) in self.blocks.into_iter().enumerate() {
            out.push(StreamChunk::BlockEnd {
                index: index_of(position),
                block: block.close(),
            });
        }
        if let Some(usage) = self.pending_usage {
            out.push(StreamChunk::Usage { usage });
        }
        let reason = match self.pending_finish.unwrap_or(FinishReason::Stop) {
            FinishReason::Stop if empty => FinishReason::Error {
                failure: LlmFailure::new(codes::EMPTY_RESPONSE, EMPTY_RESPONSE_MESSAGE),
            },
            reason => reason,
        };
        out.push(StreamChunk::finish(reason));
    }
}
