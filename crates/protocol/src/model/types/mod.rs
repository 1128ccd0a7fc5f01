//! The provider-neutral vocabulary: content blocks, messages, stream chunks, finish reasons
//! and token usage, serialized exactly as dsh's session log stores them.
//!
//! dsh's content blocks, message sources and finish reasons are open (plugins add kinds), so
//! each has an `Other` variant that keeps a plugin's value as written. A known kind that
//! carries fields it does not define is kept as `Other` too, so nothing is lost on a round
//! trip.

mod content;
mod message;
mod stream;
mod tool;

pub use content::{ContentBlock, block_types};
pub use message::{Message, MessageSource, Role};
pub use stream::{FinishReason, StreamChunk, TokenUsage};
pub use tool::ToolSchema;

#[cfg(test)]
mod tests;
