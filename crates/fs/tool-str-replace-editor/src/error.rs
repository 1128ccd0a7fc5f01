//! Failures as the model reads them: a filesystem error keeps its code (`FsError`, `FS_*`),
//! anything else is a plain error.

use dsh_fs::{FS_ERROR_NAME, FsError, FsErrorCode};
use dsh_tools::ToolError;

/// `error` as a tool failure: `FsError` with its code, or a plain error when it has none.
/// dsh's `str_replace_editor` adds no remedy to the message.
pub(crate) fn from_fs(error: &FsError) -> ToolError {
    match error.code() {
        Some(code) => fs_failure(code, error.message()),
        None => ToolError::new(error.message()),
    }
}

/// A failure the tool raises itself as an `FsError` with `code`.
pub(crate) fn fs_failure(code: FsErrorCode, message: impl Into<String>) -> ToolError {
    ToolError::harness(FS_ERROR_NAME, code.as_str(), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_kept_and_plain_errors_stay_plain() {
        let coded = from_fs(&FsError::new(FsErrorCode::NotFound, "gone"));
        assert_eq!(coded.code(), Some("FS_NOT_FOUND"));
        assert_eq!(coded.info().map(|info| info.name.as_str()), Some("FsError"));
        let plain = from_fs(&FsError::plain(
            "cannot write \"/x\": boom",
            std::io::Error::other("boom"),
        ));
        assert_eq!(plain, ToolError::new("cannot write \"/x\": boom"));
    }
}
