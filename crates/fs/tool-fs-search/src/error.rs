//! dsh's search failure vocabulary: the `SearchError` class, its four codes, and the texts the
//! model reads for each failure.

use dsh_tools::ToolError;

/// The class name every search failure carries (dsh's `SearchError`).
pub const SEARCH_ERROR_NAME: &str = "SearchError";

/// The search failure codes (dsh's `SearchErrorCode`).
pub mod codes {
    /// The regex or a glob was rejected.
    pub const SEARCH_INVALID_PATTERN: &str = "SEARCH_INVALID_PATTERN";
    /// The search could not run or did not finish cleanly (a launch failure, a missing target,
    /// an unreadable entry, nothing searched, a refused root).
    pub const SEARCH_FAILED: &str = "SEARCH_FAILED";
    /// The collected results grew past `rawOutputMaxBytes`.
    pub const SEARCH_RAW_OUTPUT_OVERFLOW: &str = "SEARCH_RAW_OUTPUT_OVERFLOW";
    /// The caller cancelled the call before the search finished.
    pub const SEARCH_ABORTED: &str = "SEARCH_ABORTED";
}

/// A `SearchError` with `code` and `message`.
pub fn search_error(code: &str, message: impl Into<String>) -> ToolError {
    ToolError::harness(SEARCH_ERROR_NAME, code, message)
}

/// `<tool> was aborted before completion (tool timeout or caller cancellation)`.
pub fn aborted(tool: &str) -> ToolError {
    search_error(
        codes::SEARCH_ABORTED,
        format!("{tool} was aborted before completion (tool timeout or caller cancellation)"),
    )
}

/// `tool call timed out after <ms>ms` (`ToolTimeoutError`, `TOOL_TIMEOUT`): what dsh's timeout
/// policy puts in place of a search that outlived its budget.
pub fn timed_out(timeout_ms: u64) -> ToolError {
    ToolError::harness(
        "ToolTimeoutError",
        "TOOL_TIMEOUT",
        format!("tool call timed out after {timeout_ms}ms"),
    )
}

/// `<tool> could not start its search command (ripgrep launch failed)`: dsh's text for a spawn
/// that could not start (the workdir is not a usable directory, or an argument holds a NUL
/// byte, which no process argument can carry).
pub fn could_not_start(tool: &str) -> ToolError {
    search_error(
        codes::SEARCH_FAILED,
        format!("{tool} could not start its search command (ripgrep launch failed)"),
    )
}

/// `<tool> search failed (exit 2)[: <detail>]`, the text dsh derives from ripgrep's error exit
/// (`detail` is trimmed; an empty one is left out).
pub fn failed(tool: &str, detail: &str) -> ToolError {
    let detail = detail.trim();
    if detail.is_empty() {
        search_error(
            codes::SEARCH_FAILED,
            format!("{tool} search failed (exit 2)"),
        )
    } else {
        search_error(
            codes::SEARCH_FAILED,
            format!("{tool} search failed (exit 2): {detail}"),
        )
    }
}

/// ripgrep's exit 2 with `stderr` (its trimmed stderr), classified as dsh classifies it: a text
/// naming a regex parse error or a glob parse error is `SEARCH_INVALID_PATTERN`
/// (`<tool> pattern rejected by ripgrep: <stderr>`), anything else `SEARCH_FAILED`
/// (`<tool> search failed (exit 2): <stderr>`).
pub fn exit_failure(tool: &str, stderr: &str) -> ToolError {
    let stderr = stderr.trim();
    let lower = stderr.to_lowercase();
    if lower.contains("regex parse error") || lower.contains("error parsing glob") {
        search_error(
            codes::SEARCH_INVALID_PATTERN,
            format!("{tool} pattern rejected by ripgrep: {stderr}"),
        )
    } else {
        failed(tool, stderr)
    }
}

/// `<tool> produced more raw output than the subprocess seam retained within the <cap>-byte
/// cap; narrow pattern, path, or include and retry`: dsh's collector keeps only a tail of
/// `rawOutputMaxBytes`, so an overflowing ripgrep always reads as lossy.
pub fn raw_output_overflow(tool: &str, cap: usize) -> ToolError {
    search_error(
        codes::SEARCH_RAW_OUTPUT_OVERFLOW,
        format!(
            "{tool} produced more raw output than the subprocess seam retained within the \
             {cap}-byte cap; narrow pattern, path, or include and retry"
        ),
    )
}

/// `<tool> cannot search the harness's own /proc entries`.
pub fn own_proc(tool: &str) -> ToolError {
    search_error(
        codes::SEARCH_FAILED,
        format!("{tool} cannot search the harness's own /proc entries"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_dshs_stderr_rule() {
        let regex = exit_failure(
            "grep",
            "rg: regex parse error:\n    (\n    ^\nerror: unclosed group\n",
        );
        assert_eq!(regex.code(), Some(codes::SEARCH_INVALID_PATTERN));
        assert_eq!(
            regex.message(),
            "grep pattern rejected by ripgrep: rg: regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        let glob = exit_failure(
            "glob",
            "rg: error parsing glob '[': unclosed character class; missing ']'",
        );
        assert_eq!(glob.code(), Some(codes::SEARCH_INVALID_PATTERN));
        let other = exit_failure("grep", "rg: the literal \"\\n\" is not allowed in a regex");
        assert_eq!(other.code(), Some(codes::SEARCH_FAILED));
        assert_eq!(
            other.message(),
            "grep search failed (exit 2): rg: the literal \"\\n\" is not allowed in a regex"
        );
        assert_eq!(failed("glob", " ").message(), "glob search failed (exit 2)");
        assert_eq!(
            regex.info().map(|info| info.name.as_str()),
            Some(SEARCH_ERROR_NAME)
        );
    }

    #[test]
    fn abort_and_timeout_texts() {
        assert_eq!(
            aborted("grep").message(),
            "grep was aborted before completion (tool timeout or caller cancellation)"
        );
        assert_eq!(
            timed_out(30000).message(),
            "tool call timed out after 30000ms"
        );
        assert_eq!(timed_out(1).code(), Some("TOOL_TIMEOUT"));
        let overflow = raw_output_overflow("glob", 10);
        assert_eq!(
            overflow.message(),
            "glob produced more raw output than the subprocess seam retained within the 10-byte \
             cap; narrow pattern, path, or include and retry"
        );
        assert_eq!(overflow.code(), Some(codes::SEARCH_RAW_OUTPUT_OVERFLOW));
        assert_eq!(
            could_not_start("grep").message(),
            "grep could not start its search command (ripgrep launch failed)"
        );
    }
}
