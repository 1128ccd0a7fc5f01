//! Errors the kernel reports.

use std::any::Any;
use std::fmt::Write as _;

use crate::fiber::FiberLabel;
use crate::fiber::FiberState;

pub use dsh_protocol::errors::{BoxError, error_chain};

/// A rule of the kernel was broken by a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// Two fibers tried to provide the same service.
    #[error(
        "service \"{service}\" is already provided by {existing}; {requester} cannot provide it too \
         (disable one of the two rows)"
    )]
    DuplicateProvider {
        /// The service name.
        service: String,
        /// The fiber that provides it now.
        existing: FiberLabel,
        /// The fiber that asked to provide it.
        requester: FiberLabel,
    },
    /// A fiber required a service it did not declare in its inject list.
    #[error(
        "{fiber} uses service \"{service}\" without injecting it \
         (add it to the plugin's inject list or the row's `inject`)"
    )]
    NotInjected {
        /// The service name.
        service: String,
        /// The fiber that asked.
        fiber: FiberLabel,
    },
    /// A required service is absent or its provider is not active.
    #[error("service \"{service}\" needed by {fiber} is not available: {reason}")]
    Unavailable {
        /// The service name.
        service: String,
        /// The fiber that asked.
        fiber: FiberLabel,
        /// No provider, or the provider's state.
        reason: String,
    },
    /// A service was provided with one type and asked for with another.
    #[error("service \"{service}\" holds a {actual}, but {fiber} asked for a {expected}")]
    TypeMismatch {
        /// The service name.
        service: String,
        /// The type the caller's key names.
        expected: &'static str,
        /// The type the provider's key named.
        actual: &'static str,
        /// The fiber that asked.
        fiber: FiberLabel,
    },
    /// A registration was attempted on a fiber that is unloading, failed or disposed.
    #[error("{fiber} is {state} and can no longer register effects")]
    Inactive {
        /// The fiber.
        fiber: FiberLabel,
        /// Its state at the time of the call.
        state: FiberState,
    },
    /// The kernel was created outside a tokio runtime.
    #[error("the kernel needs a tokio runtime: create it from inside one")]
    NoRuntime,
}

/// Why a fiber failed to start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The resolved config did not fit the plugin's config type.
    #[error("invalid config at `{path}`: {message}")]
    Config {
        /// Where in the config the problem is (`.` for the whole config).
        path: String,
        /// What is wrong there.
        message: String,
    },
    /// The config could not be resolved (for example an expression failed).
    #[error("config: {0}")]
    Resolve(BoxError),
    /// The plugin's `apply` returned an error.
    #[error("{0}")]
    Apply(BoxError),
    /// Config resolution or `apply` panicked.
    #[error("{0}")]
    Panic(String),
}

/// Listeners of one dispatch failed.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe_failures(self))]
pub struct DispatchError {
    /// The event name.
    pub event: &'static str,
    /// Each failure with the fiber whose listener failed, in listener order.
    pub failures: Vec<ListenerFailure>,
}

/// One listener's failure.
#[derive(Debug)]
pub struct ListenerFailure {
    /// The fiber that registered the listener.
    pub owner: FiberLabel,
    /// What it returned.
    pub error: BoxError,
}

fn describe_failures(error: &DispatchError) -> String {
    let mut text = format!(
        "event \"{}\": {} listener(s) failed",
        error.event,
        error.failures.len()
    );
    for failure in &error.failures {
        let _ = write!(
            text,
            "; {}: {}",
            failure.owner,
            error_chain(failure.error.as_ref())
        );
    }
    text
}

/// The text of a caught panic (the payload of `catch_unwind` or a `JoinError`):
/// `panicked: <message>` for a `&str` or `String` payload, else just `panicked`. Callers put
/// what panicked in front: `format!("tool \"bash\" {}", panic_message(payload))`.
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        format!("panicked: {text}")
    } else if let Some(text) = panic.downcast_ref::<String>() {
        format!("panicked: {text}")
    } else {
        "panicked".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_show_string_payloads() {
        assert_eq!(panic_message(&"boom"), "panicked: boom");
        assert_eq!(panic_message(&String::from("bang")), "panicked: bang");
        assert_eq!(panic_message(&42_u8), "panicked");
    }
}
