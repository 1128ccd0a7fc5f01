//! dsh's search failure vocabulary: the `SearchError` class, its four codes, and the texts the
//! model reads for each failure.

use dsh_tools::ToolError;

/// The class name every search failure carries (dsh's `SearchError`).
pub const SEARCH_ERROR_NAME: &str = "SearchError";

/// The search failure codes (dsh's `SearchErrorCode`).
pub mod codes {
    /// The regex or a glob was rejected.
    pub const SEARCH_INVALID_PATTERN: &str = "SEARCH_INVALID_PATTERN";
    /// The search could not run (a missing target, an unusable workdir, a refused root).
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

/// `<tool> could not start its search command (ripgrep launch failed)`: the workdir is not a
/// usable directory (dsh's text for a spawn that could not start).
pub fn could_not_start(tool: &str) -> ToolError {
    search_error(
        codes::SEARCH_FAILED,
        format!("{tool} could not start its search command (ripgrep launch failed)"),
    )
}

/// `<tool> could not start its search: <what> contains a NUL byte` (no process argument, and
/// no path, can hold one).
pub fn nul_byte(tool: &str, what: &str) -> ToolError {
    search_error(
        codes::SEARCH_FAILED,
        format!("{tool} could not start its search: {what} contains a NUL byte"),
    )
}

/// `<tool> search failed (exit 2): <detail>`, the text dsh derives from ripgrep's error exit.
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

/// A rejected regex or glob, classified as dsh classifies ripgrep's stderr: a text naming a
/// regex parse error or a glob parse error is `SEARCH_INVALID_PATTERN`
/// (`<tool> pattern rejected by ripgrep: <detail>`), anything else `SEARCH_FAILED`.
pub fn rejected(tool: &str, detail: &str) -> ToolError {
    let detail = detail.trim();
    let lower = detail.to_lowercase();
    if lower.contains("regex parse error") || lower.contains("error parsing glob") {
        search_error(
            codes::SEARCH_INVALID_PATTERN,
            format!("{tool} pattern rejected by ripgrep: {detail}"),
        )
    } else {
        failed(tool, detail)
    }
}

/// `<tool> produced <n> bytes of raw output, over the <cap>-byte cap; narrow pattern, path, or
/// include and retry`.
pub fn raw_output_overflow(tool: &str, bytes: usize, cap: usize) -> ToolError {
    search_error(
        codes::SEARCH_RAW_OUTPUT_OVERFLOW,
        format!(
            "{tool} produced {bytes} bytes of raw output, over the {cap}-byte cap; narrow \
             pattern, path, or include and retry"
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
        let regex = rejected(
            "grep",
            "regex parse error:\n    (\n    ^\nerror: unclosed group",
        );
        assert_eq!(regex.code(), Some(codes::SEARCH_INVALID_PATTERN));
        assert_eq!(
            regex.message(),
            "grep pattern rejected by ripgrep: regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        let glob = rejected(
            "glob",
            "error parsing glob '[': unclosed character class; missing ']'",
        );
        assert_eq!(glob.code(), Some(codes::SEARCH_INVALID_PATTERN));
        let other = rejected("grep", "the literal \"\\n\" is not allowed in a regex");
        assert_eq!(other.code(), Some(codes::SEARCH_FAILED));
        assert_eq!(
            other.message(),
            "grep search failed (exit 2): the literal \"\\n\" is not allowed in a regex"
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
        assert_eq!(
            raw_output_overflow("glob", 12, 10).message(),
            "glob produced 12 bytes of raw output, over the 10-byte cap; narrow pattern, path, \
             or include and retry"
        );
    }
}
