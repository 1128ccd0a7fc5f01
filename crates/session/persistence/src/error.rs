//! Errors of the persistence seam.

use std::path::PathBuf;

/// A failure inside a storage backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// A file-system operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done (`reading`, `appending to`, ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Stored data is damaged or does not follow the format.
    #[error("{0}")]
    Corrupt(String),
    /// Stored data was written by a newer or older harness (never reported as corruption).
    #[error("{0}")]
    FormatUnsupported(String),
    /// The request cannot be served as asked (configuration, duplicate ids, layout).
    #[error("{0}")]
    Invalid(String),
}

/// A failed persistence operation; the message names the session and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PersistenceError {
    /// Nothing is stored under this id.
    #[error("session \"{0}\" not found")]
    NotFound(String),
    /// The stored log failed validation (dsh's `SessionPersistenceCorruptionError`).
    #[error("stored session \"{id}\" failed validation: {cause}")]
    Corruption {
        /// Session id.
        id: String,
        /// What is wrong, with the file or row when known.
        cause: String,
    },
    /// The log needs a different harness version (dsh's `SessionFormatUnsupportedError`).
    #[error("{0}")]
    FormatUnsupported(String),
    /// An append does not continue the stored log.
    #[error("append seq mismatch for \"{id}\": expected {expected} at index {index}, got {got}")]
    SeqMismatch {
        /// Session id.
        id: String,
        /// The seq the log needs next.
        expected: u64,
        /// Index in the batch.
        index: usize,
        /// The seq found there.
        got: u64,
    },
    /// Data that JSON cannot carry losslessly.
    #[error("session \"{id}\" event \"{kind}\" is not losslessly JSON-serializable: {reason}")]
    NotJson {
        /// Session id.
        id: String,
        /// The event type.
        kind: String,
        /// What is wrong.
        reason: String,
    },
    /// The id is taken.
    #[error("session \"{0}\" already exists")]
    AlreadyExists(String),
    /// The operation needs the session not to be live, or its turn to be closed.
    #[error("{0}")]
    Busy(String),
    /// Invalid input (a header, a retired event shape).
    #[error("{0}")]
    Invalid(String),
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl PersistenceError {
    /// A backend failure on session `id`, as the seam reports it: damage is that session's
    /// corruption, a version refusal stays a refusal, anything else is the backend's error.
    pub fn of_session(id: &str, error: BackendError) -> Self {
        match error {
            BackendError::Corrupt(cause) => Self::Corruption {
                id: id.to_owned(),
                cause,
            },
            BackendError::FormatUnsupported(message) => Self::FormatUnsupported(message),
            other => Self::Backend(other),
        }
    }

    /// Whether the error is a version or vocabulary refusal rather than damage.
    pub fn is_format_refusal(&self) -> bool {
        matches!(
            self,
            Self::FormatUnsupported(_) | Self::Backend(BackendError::FormatUnsupported(_))
        )
    }
}
