//! `FsError`: a filesystem failure with one of dsh's codes.

/// dsh's filesystem error codes (`FsErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FsErrorCode {
    /// The target (or an ancestor) does not exist.
    NotFound,
    /// A directory was needed.
    NotDirectory,
    /// Binary or invalid UTF-8 content.
    NotText,
    /// A regular file was needed.
    NotRegularFile,
    /// Over a byte limit.
    TooLarge,
    /// The operating system refused the access.
    PermissionDenied,
    /// The sandbox policy refused the write.
    SandboxDenied,
    /// Any other I/O failure.
    IoError,
    /// The file changed (or went away) since it was read.
    StaleVersion,
    /// The file exists but this session has not read it.
    NotObserved,
    /// `old_string` matched more than once.
    AmbiguousEdit,
    /// `old_string` did not match.
    EditNotFound,
    /// The caller cancelled.
    Aborted,
}

impl FsErrorCode {
    /// dsh's spelling (`FS_NOT_FOUND`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "FS_NOT_FOUND",
            Self::NotDirectory => "FS_NOT_DIRECTORY",
            Self::NotText => "FS_NOT_TEXT",
            Self::NotRegularFile => "FS_NOT_REGULAR_FILE",
            Self::TooLarge => "FS_TOO_LARGE",
            Self::PermissionDenied => "FS_PERMISSION_DENIED",
            Self::SandboxDenied => "FS_SANDBOX_DENIED",
            Self::IoError => "FS_IO_ERROR",
            Self::StaleVersion => "FS_STALE_VERSION",
            Self::NotObserved => "FS_NOT_OBSERVED",
            Self::AmbiguousEdit => "FS_AMBIGUOUS_EDIT",
            Self::EditNotFound => "FS_EDIT_NOT_FOUND",
            Self::Aborted => "FS_ABORTED",
        }
    }
}

impl std::fmt::Display for FsErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The class name dsh gives filesystem errors on a tool result (`error.info.name`).
pub const FS_ERROR_NAME: &str = "FsError";

/// A filesystem failure: dsh's message and code, with the operating-system cause when there
/// is one. Some I/O failures during a write are not `FsError`s in dsh (they carry no code on
/// the tool result); [`FsError::plain`] marks those.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct FsError {
    message: String,
    code: Option<FsErrorCode>,
    detail: Option<String>,
    #[source]
    cause: Option<std::io::Error>,
}

impl FsError {
    /// An error with `code`.
    pub fn new(code: FsErrorCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: Some(code),
            detail: None,
            cause: None,
        }
    }

    /// An error without a code (dsh surfaces these as plain errors).
    pub fn plain(message: impl Into<String>, cause: std::io::Error) -> Self {
        Self {
            message: message.into(),
            code: None,
            detail: None,
            cause: Some(cause),
        }
    }

    /// The same error with its operating-system cause.
    #[must_use]
    pub fn caused_by(mut self, cause: std::io::Error) -> Self {
        self.cause = Some(cause);
        self
    }

    /// The same error with an explanation that survives a tool's rewording of the message
    /// (a sandbox refusal's reason, kept under dsh's denial marker).
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The explanation, when there is one.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The message as the model reads it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, when the error has one.
    pub fn code(&self) -> Option<FsErrorCode> {
        self.code
    }

    /// The same error with `suffix` appended to its message.
    #[must_use]
    pub fn with_suffix(mut self, suffix: &str) -> Self {
        self.message.push_str(suffix);
        self
    }

    /// The same code with a new message.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// `<verb> aborted` (`FS_ABORTED`).
    pub fn aborted(verb: &str) -> Self {
        Self::new(FsErrorCode::Aborted, format!("{verb} aborted"))
    }
}
