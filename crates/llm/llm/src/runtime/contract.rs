//! The stream contract on what the outermost `llm/stream` listener returns.

use std::panic::AssertUnwindSafe;
use std::pin::pin;

use futures_util::FutureExt;
use futures_util::future::{Either, select};
use futures_util::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::adapter::ChunkStream;
use crate::failure::{LlmFailure, codes, failure_finish, panic_failure};
use crate::types::{FinishReason, StreamChunk};

enum Pulled {
    Item(std::thread::Result<Option<StreamChunk>>),
    Cancelled,
}

/// The stream contract on what the outermost `llm/stream` listener returns: one terminal
/// finish, nothing after it, prompt cancellation, and panics turned into failures.
pub(super) fn enforce_contract(inner: ChunkStream, signal: CancellationToken) -> ChunkStream {
    stream::unfold((Some(inner), signal), |(state, signal)| async move {
        let mut inner = state?;
        let pulled = {
            let next = pin!(AssertUnwindSafe(inner.next()).catch_unwind());
            let cancelled = pin!(signal.cancelled());
            match select(next, cancelled).await {
                Either::Left((item, _)) => Pulled::Item(item),
                Either::Right(_) => Pulled::Cancelled,
            }
        };
        let chunk = match pulled {
            Pulled::Item(Ok(Some(chunk))) => {
                let next = if matches!(chunk, StreamChunk::Finish { .. }) {
                    None
                } else {
                    Some(inner)
                };
                return Some((chunk, (next, signal)));
            }
            Pulled::Item(Ok(None)) => failure_finish(
                LlmFailure::new(
                    codes::STREAM_CLOSED,
                    "LLM stream ended without a finish chunk",
                ),
                &signal,
            ),
            Pulled::Item(Err(panic)) => {
                failure_finish(panic_failure("LLM stream", panic.as_ref()), &signal)
            }
            Pulled::Cancelled => StreamChunk::finish(FinishReason::Aborted {
                failure: LlmFailure::aborted("LLM request aborted"),
            }),
        };
        Some((chunk, (None, signal)))
    })
    .boxed()
}
