//! The model vocabulary every layer shares: content blocks, messages and their sources,
//! stream chunks and finish reasons, token usage, tool schemas and call failures, with their
//! JSON exactly as dsh's session log stores it. `dsh-llm` re-exports them as its types; the
//! session log's typed views (`dsh_session::vocab`) are built from them.

pub mod failure;
pub mod types;

pub use failure::{LlmFailure, codes};
pub use types::{
    ContentBlock, FinishReason, Message, MessageSource, Role, StreamChunk, TokenUsage, ToolSchema,
    block_types,
};
