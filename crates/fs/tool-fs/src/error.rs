//! Filesystem errors as tool errors, with dsh's remedies and sandbox markers.

use dsh_fs::{FS_ERROR_NAME, FsError, FsErrorCode};
use dsh_shell::{SandboxMode, sandbox_denial_marker};
use dsh_tools::ToolError;

/// The hint after a denial when the tool offers escalation.
pub const FS_ESCALATION_HINT: &str = "[sandbox: escalation available — retry this exact \
    operation once with sandbox_permissions (the narrowest wider mode that suffices) + \
    justification; the approval prompt asks the user]";

/// An `FsError` as the tool result carries it: its code as `FsError`'s info when it has one.
pub fn tool_error(error: FsError) -> ToolError {
    match error.code() {
        Some(code) => ToolError::harness(FS_ERROR_NAME, code.as_str(), error.message()),
        None => ToolError::new(error.message()),
    }
}

/// A sandbox denial becomes dsh's marker (and hint, when escalation is offered) for the
/// call's `mode`; anything else is unchanged.
pub fn map_denial(error: FsError, mode: Option<SandboxMode>, escalation: bool) -> FsError {
    if error.code() != Some(FsErrorCode::SandboxDenied) {
        return error;
    }
    let Some(mode) = mode else {
        return error;
    };
    let mut message = sandbox_denial_marker(mode);
    if let Some(detail) = error.detail() {
        message.push('\n');
        message.push_str(detail);
    }
    if escalation {
        message.push('\n');
        message.push_str(FS_ESCALATION_HINT);
    }
    error.with_message(message)
}

/// dsh's `remediateFsError` for `write` and `edit`: a stale or unread file gets the remedy.
pub fn remediate(error: FsError) -> FsError {
    match error.code() {
        Some(FsErrorCode::StaleVersion) => error.with_suffix(" — re-read the file, then retry"),
        Some(FsErrorCode::NotObserved) => error.with_suffix(" — read the file, then retry"),
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remedies_and_markers() {
        let error = remediate(FsError::new(
            FsErrorCode::NotObserved,
            "edit requires reading \"/ws/settings.txt\" first",
        ));
        assert_eq!(
            error.message(),
            "edit requires reading \"/ws/settings.txt\" first — read the file, then retry"
        );
        let stale = remediate(FsError::new(FsErrorCode::StaleVersion, "x"));
        assert_eq!(stale.message(), "x — re-read the file, then retry");
        let denied = map_denial(
            FsError::new(FsErrorCode::SandboxDenied, "cannot write"),
            Some(SandboxMode::ReadOnly),
            true,
        );
        assert_eq!(
            denied.message(),
            format!("[sandbox: file access denied under read-only mode]\n{FS_ESCALATION_HINT}")
        );
        let info = tool_error(denied);
        assert_eq!(
            info.info().map(|info| info.code.as_str()),
            Some("FS_SANDBOX_DENIED")
        );
    }
}
