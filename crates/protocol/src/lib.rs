//! dsh's shared vocabulary, at the bottom of the workspace.
//!
//! Every layer speaks it: the session log stores it, the model seam streams it, tools and apps
//! read it. It holds no behaviour beyond its own rules:
//!
//! - [`model`]: content blocks, messages and their sources, stream chunks and finish reasons,
//!   token usage, tool schemas and model-call failures, serialized exactly as dsh's log stores
//!   them;
//! - [`json`]: JSON printed the way JavaScript's `JSON.stringify` prints it, and the lossless
//!   rule (no `-0`, no integer beyond 2^53);
//! - [`kinds`] and [`known`]: the event kinds dsh 0.1 writes, and which of them this harness reads;
//! - [`ids`]: random ids;
//! - [`errors`]: the boxed error every layer passes around, and how its chain is printed.

pub mod errors;
pub mod ids;
pub mod json;
pub mod kinds;
pub mod known;
pub mod model;

pub use model::{
    ContentBlock, FinishReason, LlmFailure, Message, MessageSource, Role, StreamChunk, TokenUsage,
    ToolSchema,
};
