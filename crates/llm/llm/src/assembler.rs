//! Folding a chunk stream into blocks and an assistant message (dsh's `BlockAssembler`).

use serde_json::Value;

use crate::content::is_js_blank;
use crate::types::{
    ContentBlock, FinishReason, Message, MessageSource, Role, StreamChunk, TokenUsage, block_types,
};

/// An open block of a type that cannot be assembled from deltas (a plugin's type never
/// closed by `block-end`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot assemble incomplete block of type \"{block_type}\"")]
pub struct AssembleError {
    /// The block's type.
    pub block_type: String,
}

#[derive(Debug, Clone)]
struct Partial {
    index: u64,
    block_type: String,
    text: String,
    call_id: Option<String>,
    call_name: Option<String>,
    arguments: String,
    /// Set by `block-end`: authoritative, and freezes the partial.
    block: Option<ContentBlock>,
}

/// Folds raw [`StreamChunk`]s into blocks and an assistant [`Message`].
///
/// - Blocks are kept per `index`, in first-seen order; deltas need no `block-start`.
/// - The first `block-end` of an index wins: later deltas and `block-end`s for it are
///   ignored.
/// - A `tool-call` never given an id gets `call-<index>`, and an empty name when none came.
/// - [`BlockAssembler::finish`] is `stop` until a `finish` arrives; after a `max-tokens`
///   finish every tool call is dropped from [`BlockAssembler::blocks`] (it cannot be run
///   safely), and the replay state's per-block entries are pruned to match (an envelope
///   whose `blocks` count differs from the blocks seen is discarded).
/// - [`BlockAssembler::interrupted_blocks`] is what a cut-off stream can keep.
#[derive(Debug, Clone, Default)]
pub struct BlockAssembler {
    partials: Vec<Partial>,
    usage: Option<TokenUsage>,
    finish: Option<FinishReason>,
    replay_state: Option<Value>,
}

impl BlockAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk, in stream order.
    pub fn push(&mut self, chunk: &StreamChunk) {
        match chunk {
            StreamChunk::BlockStart { index, block_type } => {
                self.ensure(*index, block_type);
            }
            StreamChunk::TextDelta { index, text } => {
                if let Some(partial) = self.ensure(*index, block_types::TEXT)
                    && partial.block.is_none()
                {
                    partial.text.push_str(text);
                }
            }
            StreamChunk::ReasoningDelta { index, text } => {
                if let Some(partial) = self.ensure(*index, block_types::REASONING)
                    && partial.block.is_none()
                {
                    partial.text.push_str(text);
                }
            }
            StreamChunk::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                if let Some(partial) = self.ensure(*index, block_types::TOOL_CALL)
                    && partial.block.is_none()
                {
                    partial.call_id = Some(id.clone());
                    if let Some(name) = name.as_ref().filter(|name| !name.is_empty()) {
                        partial.call_name = Some(name.clone());
                    }
                    partial.arguments.push_str(arguments_delta);
                }
            }
            StreamChunk::BlockEnd { index, block } => {
                if let Some(partial) = self.ensure(*index, block.block_type())
                    && partial.block.is_none()
                {
                    partial.block = Some(block.clone());
                }
            }
            StreamChunk::Usage { usage } => self.usage = Some(*usage),
            StreamChunk::Finish {
                reason,
                replay_state,
            } => {
                self.finish = Some(reason.clone());
                self.replay_state.clone_from(replay_state);
            }
        }
    }

    /// The partial of `index`, created with `block_type` when first seen (always `Some`).
    fn ensure(&mut self, index: u64, block_type: &str) -> Option<&mut Partial> {
        match self.partials.iter().position(|p| p.index == index) {
            Some(position) => self.partials.get_mut(position),
            None => {
                self.partials.push(Partial {
                    index,
                    block_type: block_type.to_owned(),
                    text: String::new(),
                    call_id: None,
                    call_name: None,
                    arguments: String::new(),
                    block: None,
                });
                self.partials.last_mut()
            }
        }
    }

    fn assemble(partial: &Partial) -> Result<ContentBlock, AssembleError> {
        if let Some(block) = &partial.block {
            return Ok(block.clone());
        }
        Ok(match partial.block_type.as_str() {
            block_types::TEXT => ContentBlock::text(partial.text.clone()),
            block_types::REASONING => ContentBlock::reasoning(partial.text.clone()),
            block_types::TOOL_CALL => ContentBlock::ToolCall {
                id: partial
                    .call_id
                    .clone()
                    .unwrap_or_else(|| format!("call-{}", partial.index)),
                name: partial.call_name.clone().unwrap_or_default(),
                arguments: partial.arguments.clone(),
            },
            other => {
                return Err(AssembleError {
                    block_type: other.to_owned(),
                });
            }
        })
    }

    /// Every block seen and the replay state, after the max-tokens rule.
    fn assembled(&self) -> Result<(Vec<ContentBlock>, Option<Value>), AssembleError> {
        let all = self
            .partials
            .iter()
            .map(Self::assemble)
            .collect::<Result<Vec<_>, _>>()?;
        let kept: Option<Vec<bool>> =
            matches!(self.finish, Some(FinishReason::MaxTokens)).then(|| {
                all.iter()
                    .map(|block| !matches!(block, ContentBlock::ToolCall { .. }))
                    .collect()
            });
        let total = all.len();
        let blocks: Vec<ContentBlock> = match &kept {
            None => all,
            Some(kept) => all
                .into_iter()
                .zip(kept)
                .filter_map(|(block, keep)| keep.then_some(block))
                .collect(),
        };
        let replay = match &self.replay_state {
            None => None,
            Some(envelope) => match envelope.get("blocks") {
                None => Some(envelope.clone()),
                Some(Value::Array(entries)) if entries.len() == total => match &kept {
                    Some(kept) if blocks.len() != total => {
                        let mut pruned = serde_json::Map::new();
                        if let Some(response) = envelope.get("response") {
                            pruned.insert("response".to_owned(), response.clone());
                        }
                        pruned.insert(
                            "blocks".to_owned(),
                            Value::Array(
                                entries
                                    .iter()
                                    .zip(kept)
                                    .filter(|(_, keep)| **keep)
                                    .map(|(entry, _)| entry.clone())
                                    .collect(),
                            ),
                        );
                        Some(Value::Object(pruned))
                    }
                    _ => Some(envelope.clone()),
                },
                Some(_) => None,
            },
        };
        Ok((blocks, replay))
    }

    /// Every block seen so far, in first-seen order; open blocks assemble from their deltas.
    /// A `max-tokens` finish drops the tool calls. Fails on an open block of a type that
    /// has no delta form.
    pub fn blocks(&self) -> Result<Vec<ContentBlock>, AssembleError> {
        self.assembled().map(|(blocks, _)| blocks)
    }

    /// What an interrupted stream can keep: text and reasoning blocks, closed or open, whose
    /// text is not blank; tool calls and open blocks of other types are dropped.
    pub fn interrupted_blocks(&self) -> Vec<ContentBlock> {
        self.partials
            .iter()
            .filter_map(|partial| {
                let block_type = partial
                    .block
                    .as_ref()
                    .map_or(partial.block_type.as_str(), ContentBlock::block_type);
                if block_type != block_types::TEXT && block_type != block_types::REASONING {
                    return None;
                }
                Self::assemble(partial).ok()
            })
            .filter(|block| block.as_text().is_some_and(|text| !is_js_blank(text)))
            .collect()
    }

    /// The last `usage`, if any arrived.
    pub fn usage(&self) -> Option<TokenUsage> {
        self.usage
    }

    /// The finish reason; `stop` when the stream ended without one.
    pub fn finish(&self) -> FinishReason {
        self.finish.clone().unwrap_or(FinishReason::Stop)
    }

    /// Whether a `finish` chunk arrived.
    pub fn finished(&self) -> bool {
        self.finish.is_some()
    }

    /// The finish's replay state, its per-block entries pruned in step with
    /// [`BlockAssembler::blocks`]; `None` when absent or misaligned.
    pub fn replay_state(&self) -> Result<Option<Value>, AssembleError> {
        self.assembled().map(|(_, replay)| replay)
    }

    /// The assembled assistant message, with a fresh id, over [`BlockAssembler::blocks`].
    pub fn message(&self, source: MessageSource) -> Result<Message, AssembleError> {
        Ok(Message::new(Role::Assistant, self.blocks()?, source))
    }

    /// The assistant message of a model reply: `source` is `{kind:'model', provider, model,
    /// replayState?}` with the pruned replay state.
    pub fn model_message(&self, provider: &str, model: &str) -> Result<Message, AssembleError> {
        let (blocks, replay_state) = self.assembled()?;
        Ok(Message::new(
            Role::Assistant,
            blocks,
            MessageSource::Model {
                provider: provider.to_owned(),
                model: model.to_owned(),
                replay_state,
            },
        ))
    }
}
