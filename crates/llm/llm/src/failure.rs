//! Call failures ([`LlmFailure`]) and their codes, defined in `dsh-protocol` (a turn's end
//! records them) and re-exported here, and the terminal finishes the runtime makes of them.

use tokio_util::sync::CancellationToken;

pub use dsh_protocol::model::failure::{LlmFailure, codes};

use crate::types::{FinishReason, StreamChunk};

/// The failure for a panic of `what` (`LLM adapter`, `LLM stream`) the runtime caught.
pub(crate) fn panic_failure(what: &str, payload: &(dyn std::any::Any + Send)) -> LlmFailure {
    LlmFailure::unknown(format!("{what} {}", dsh_kernel::panic_message(payload)))
}

/// The terminal finish for `failure`: `aborted` when the signal fired or the code is
/// `ABORTED`, else `error` (dsh's `adapterFailureChunk`).
pub(crate) fn failure_finish(failure: LlmFailure, signal: &CancellationToken) -> StreamChunk {
    let failure = failure.normalized();
    let reason = if signal.is_cancelled() || failure.is(codes::ABORTED) {
        FinishReason::Aborted { failure }
    } else {
        FinishReason::Error { failure }
    };
    StreamChunk::finish(reason)
}
