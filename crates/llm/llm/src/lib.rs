//! The dsh LLM seam (dsh's `@deepseek-ai/dsh-llm` and the policy of `dsh-llm-retry`).
//!
//! - The vocabulary ([`types`]): [`Message`], [`ContentBlock`], [`MessageSource`],
//!   [`StreamChunk`], [`FinishReason`], [`TokenUsage`], [`LlmFailure`] (codes in
//!   [`codes`]), [`ToolSchema`]; the request: [`GenerateOptions`], [`LlmCallConfig`]. Their
//!   JSON is dsh's, byte for byte: a chunk read from a dsh session log prints back the same
//!   (with [`dsh_protocol::json::to_js_string`]), and a message is written with its keys in
//!   the order dsh's constructors produce. The message and stream types are defined in
//!   `dsh-protocol` ([`dsh_protocol::model`]), whose types the session log's views use too.
//! - The seam: an [`LlmAdapter`] streams one provider attempt; the [`LlmRuntime`] service
//!   ([`LLM`], `llm`) routes providers to adapters ([`LlmRuntime::register_adapter`]), runs
//!   the `llm/stream` waterfall ([`LlmStreamEvent`]) around them, turns every adapter
//!   failure into the terminal `finish` and enforces the stream contract
//!   ([`LlmRuntime::stream`]); [`LlmRuntime::prepare_call`] pins a registration and fills
//!   the model's defaults.
//! - [`BlockAssembler`] folds chunks into blocks and the assistant message.
//! - [`retry`]: provider retry policies, the pure delay rule, the `llm/retry` /
//!   `llm/retry-started` records with the [`RetryRecorder`] that keeps them, and
//!   [`retry_stream`], which retries a request outside a turn.
//! - For adapters: [`user_agent`] (the `User-Agent` every provider request sends) and
//!   [`usable_api_key`] (`INVALID_CREDENTIAL` for a blank or unprintable key).
//! - [`LlmPlugin`]: the `dsh-llm` plugin providing the runtime.
//!
//! ```
//! use std::sync::Arc;
//! use dsh_kernel::Kernel;
//! use dsh_llm::{
//!     AdapterStream, BlockAssembler, ContentBlock, FinishReason, GenerateOptions, LLM,
//!     LlmAdapter, LlmFailure, LlmPlugin, StreamChunk, adapter_stream_of, async_trait,
//! };
//! use futures_util::StreamExt;
//!
//! struct Echo;
//! #[async_trait]
//! impl LlmAdapter for Echo {
//!     async fn stream(&self, _options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
//!         Ok(adapter_stream_of([
//!             Ok(StreamChunk::TextDelta { index: 0, text: "hi".into() }),
//!             Ok(StreamChunk::finish(FinishReason::Stop)),
//!         ]))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let kernel = Kernel::new()?;
//! kernel.root().plugin(LlmPlugin, serde_json::Value::Null)?;
//! kernel.settle().await;
//! let llm = kernel.root().require(&LLM)?;
//! llm.register_adapter(&kernel.root(), ["echo"], Arc::new(Echo))?;
//! let chunks: Vec<StreamChunk> = llm.stream(GenerateOptions::new("echo", "m", vec![])).collect().await;
//! let mut assembler = BlockAssembler::new();
//! chunks.iter().for_each(|chunk| assembler.push(chunk));
//! assert_eq!(assembler.blocks()?, vec![ContentBlock::text("hi")]);
//!
//! let missing: Vec<StreamChunk> = llm.stream(GenerateOptions::new("nope", "m", vec![])).collect().await;
//! let failure = missing[0].finish_reason().and_then(FinishReason::failure).unwrap();
//! assert_eq!(failure.code, "NO_ADAPTER");
//! kernel.shutdown().await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod adapter;
mod assembler;
mod attribution;
pub mod content;
mod events;
mod failure;
mod model;
mod options;
mod plugin;
pub mod retry;
mod runtime;
pub mod types;

pub use adapter::{AdapterStream, ChunkStream, LlmAdapter, adapter_stream_of, chunk_stream_of};
pub use assembler::{AssembleError, BlockAssembler};
pub use async_trait::async_trait;
pub use attribution::{
    APP_IDENTITY, ApiKeyRejection, AppIdentity, normalize_api_key, usable_api_key, user_agent,
};
pub use events::{AdaptersUpdated, LlmStreamEvent};
pub use failure::{LlmFailure, codes};
pub use model::{DEEPSEEK_OFFICIAL, ModelInfo, ProviderInfo, ReasoningEffort, ReasoningInfo};
pub use options::{AdapterDefaults, GenerateOptions, LlmCallConfig, Purpose};
pub use plugin::{LlmConfig, LlmPlugin, PLUGIN_NAME};
pub use retry::{
    RetryItem, RetryPolicy, RetryRecord, RetryRecorder, RetryScope, next_delay, retry_stream,
};
pub use runtime::{LLM, LlmRuntime, PreparedCall};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ContentBlock, FinishReason, Message, MessageSource, Role, StreamChunk, TokenUsage, ToolSchema,
};
