//! Call failures ([`LlmFailure`]) and their codes, defined in `dsh-protocol` (a turn's end
//! records them) and re-exported here.

pub use dsh_protocol::model::failure::{LlmFailure, codes};

/// The failure for a panic of `what` (`LLM adapter`, `LLM stream`) the runtime caught.
pub(crate) fn panic_failure(what: &str, payload: &(dyn std::any::Any + Send)) -> LlmFailure {
    LlmFailure::unknown(format!("{what} {}", dsh_kernel::panic_message(payload)))
}
