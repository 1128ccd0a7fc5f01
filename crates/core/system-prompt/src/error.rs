//! The one error type of the crate: dsh's message text, verbatim.

/// A refused registration, a failed assembly or a failed render. The message is dsh's text
/// (`prompt section "x" order must be a finite number`, `unknown prompt variable ...`), so
/// logs and tests read the same as upstream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PromptError(pub String);

impl PromptError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl From<dsh_kernel::KernelError> for PromptError {
    fn from(error: dsh_kernel::KernelError) -> Self {
        Self(error.to_string())
    }
}

impl From<dsh_kernel::DispatchError> for PromptError {
    fn from(error: dsh_kernel::DispatchError) -> Self {
        Self(error.to_string())
    }
}
