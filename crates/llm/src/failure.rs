//! Call failures ([`LlmFailure`]) and their codes, defined in `dsh-session` (a turn's end
//! records them) and re-exported here.

pub use dsh_session::model::failure::{LlmFailure, codes};

/// The failure for a panic of `what` (`LLM adapter`, `LLM stream`) the runtime caught.
pub(crate) fn panic_failure(what: &str, payload: &(dyn std::any::Any + Send)) -> LlmFailure {
    let text = payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned());
    LlmFailure::unknown(format!("{what} panicked: {text}"))
}
