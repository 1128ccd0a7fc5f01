//! The adapter seam: what a provider backend implements.

use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use tokio_util::sync::CancellationToken;

use crate::failure::LlmFailure;
use crate::model::{ModelInfo, ProviderInfo};
use crate::options::GenerateOptions;
use crate::retry::RetryPolicy;
use crate::types::StreamChunk;

/// What an adapter streams: chunks as they arrive, or a failure that ends the stream.
///
/// An `Err` item is the adapter's failure mid-stream (dsh: the iterator threw); the runtime
/// turns it into the terminal `finish` and stops reading.
pub type AdapterStream = BoxStream<'static, Result<StreamChunk, LlmFailure>>;

/// What the runtime and `llm/stream` listeners stream: chunks only, failures already turned
/// into a terminal `finish`.
pub type ChunkStream = BoxStream<'static, StreamChunk>;

/// An adapter stream over fixed items (tests, scripted and replay adapters).
pub fn adapter_stream_of(
    items: impl IntoIterator<Item = Result<StreamChunk, LlmFailure>, IntoIter: Send + 'static>,
) -> AdapterStream {
    stream::iter(items).boxed()
}

/// A chunk stream over fixed chunks (`llm/stream` listeners that answer themselves).
pub fn chunk_stream_of(
    chunks: impl IntoIterator<Item = StreamChunk, IntoIter: Send + 'static>,
) -> ChunkStream {
    stream::iter(chunks).boxed()
}

/// A provider backend: translates [`GenerateOptions`] into provider wire requests and the
/// provider's stream into [`StreamChunk`]s (dsh's `LlmAdapter`).
///
/// Register one with [`crate::LlmRuntime::register_adapter`] for the provider routes it
/// serves; one adapter instance may serve several routes. Only [`LlmAdapter::stream`] is
/// required.
///
/// The contract of `stream` (§3.1 of the runtime spec):
/// - one call is one provider attempt: no retries inside (the retry policy is the caller's);
/// - blocks are indexed `0, 1, 2, ...` in open order; `usage` comes before the one terminal
///   `finish`, and nothing after it;
/// - tool arguments stay raw JSON text;
/// - a completed `stop` response with no content is `error` with code `EMPTY_RESPONSE`, a
///   context overflow uses `CONTEXT_WINDOW_EXCEEDED`;
/// - `options.signal` cancels the attempt: stop promptly, with an `ABORTED` failure.
///
/// A failure may be returned before streaming (`Err` from `stream`) or as an `Err` item; the
/// runtime turns either into the terminal finish, so an adapter never needs to build error
/// finishes itself (it may, as DeepSeek's `EMPTY_RESPONSE` does).
#[async_trait]
pub trait LlmAdapter: Send + Sync + 'static {
    /// Display metadata of one route this adapter serves; the id must be `provider`.
    fn provider_info(&self, provider: &str) -> ProviderInfo {
        ProviderInfo::new(provider, provider)
    }

    /// The retry policy of one route, captured at registration; `None` gives the default
    /// ([`RetryPolicy::default`]).
    fn retry_policy(&self, provider: &str) -> Option<RetryPolicy> {
        let _ = provider;
        None
    }

    /// The advisory model catalog of one route, in display order.
    async fn list_models(&self, provider: &str) -> Result<Vec<ModelInfo>, LlmFailure> {
        let _ = provider;
        Ok(Vec::new())
    }

    /// Exact metadata of `model` for one call (context window, default output cap, reasoning
    /// efforts): dsh's adapter-level `prepareCall`/`resolveModel`. Any model id is accepted;
    /// the default knows nothing but the id. `signal` cancels a lookup that does I/O.
    async fn prepare_call(
        &self,
        provider: &str,
        model: &str,
        signal: &CancellationToken,
    ) -> Result<ModelInfo, LlmFailure> {
        let _ = (provider, signal);
        Ok(ModelInfo::new(model))
    }

    /// Starts one provider attempt and streams its chunks as they arrive.
    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure>;
}
