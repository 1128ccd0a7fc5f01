//! The arguments of both tools, past the schema: dsh's value checks and their texts.

use dsh_tools::ToolError;
use serde_json::Value;

/// Checked `glob` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobArgs {
    /// The glob.
    pub pattern: String,
    /// The directory to search, relative to the workdir.
    pub path: Option<String>,
}

/// Checked `grep` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepArgs {
    /// The regular expression.
    pub pattern: String,
    /// The file or directory to search, relative to the workdir.
    pub path: Option<String>,
    /// One glob the searched files must match.
    pub include: Option<String>,
}

/// Whether `text` is empty once JavaScript's `trim()` would have run (Unicode white space
/// and the byte-order mark, but not U+0085, which Rust counts and JavaScript does not).
fn is_blank(text: &str) -> bool {
    text.chars()
        .all(|c| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

fn string(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn checked_path(args: &Value) -> Result<Option<String>, ToolError> {
    let path = string(args, "path");
    if path.as_deref().is_some_and(is_blank) {
        return Err(ToolError::new("path must be a non-empty string when given"));
    }
    Ok(path)
}

impl GlobArgs {
    /// dsh's `parseGlobArgs`: a pattern that is not blank, a path that is not blank when given.
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let pattern = string(args, "pattern").unwrap_or_default();
        if is_blank(&pattern) {
            return Err(ToolError::new("pattern must be a non-empty string"));
        }
        let path = checked_path(args)?;
        Ok(Self { pattern, path })
    }
}

impl GrepArgs {
    /// dsh's `parseGrepArgs`: a pattern that is not empty (whitespace is a regex), a path that
    /// is not blank when given, and `include` one positive glob.
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let pattern = string(args, "pattern").unwrap_or_default();
        if pattern.is_empty() {
            return Err(ToolError::new("pattern must be a non-empty string"));
        }
        let path = checked_path(args)?;
        let include = string(args, "include");
        if let Some(include) = &include {
            check_include(include)?;
        }
        Ok(Self {
            pattern,
            path,
            include,
        })
    }
}

/// Refuses an `include` that is not one positive glob: blank, negated, or a comma-separated
/// list (a comma inside braces is alternation and fine).
fn check_include(include: &str) -> Result<(), ToolError> {
    if is_blank(include) {
        return Err(ToolError::new(
            "include must be a non-empty glob when given",
        ));
    }
    if include.starts_with('!') {
        return Err(ToolError::new(
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ));
    }
    let mut depth = 0_usize;
    for c in include.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                return Err(ToolError::new(
                    "include must be one glob, not a comma-separated list (use {a,b} \
                     alternation instead)",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn glob_error(args: Value) -> String {
        GlobArgs::parse(&args).unwrap_err().message().to_owned()
    }

    fn grep_error(args: Value) -> String {
        GrepArgs::parse(&args).unwrap_err().message().to_owned()
    }

    #[test]
    fn glob_arguments() {
        assert_eq!(
            glob_error(json!({"pattern": "  "})),
            "pattern must be a non-empty string"
        );
        assert_eq!(
            glob_error(json!({"pattern": "*", "path": " "})),
            "path must be a non-empty string when given"
        );
        assert_eq!(
            GlobArgs::parse(&json!({"pattern": "*.rs", "path": "src", "extra": 1})).unwrap(),
            GlobArgs {
                pattern: "*.rs".into(),
                path: Some("src".into())
            }
        );
        // A NUL byte passes the checks: it fails where dsh's spawn of ripgrep would fail.
        assert!(GlobArgs::parse(&json!({"pattern": "a\u{0}"})).is_ok());
    }

    #[test]
    fn grep_arguments() {
        assert_eq!(
            grep_error(json!({"pattern": ""})),
            "pattern must be a non-empty string"
        );
        assert_eq!(
            grep_error(json!({"pattern": "x", "path": "  "})),
            "path must be a non-empty string when given"
        );
        assert_eq!(
            grep_error(json!({"pattern": "x", "include": "  "})),
            "include must be a non-empty glob when given"
        );
        assert_eq!(
            grep_error(json!({"pattern": "x", "include": "!*.ts"})),
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported"
        );
        assert_eq!(
            grep_error(json!({"pattern": "x", "include": "*.ts,*.js"})),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
        );
        assert_eq!(
            grep_error(json!({"pattern": "x", "include": "*.{ts,tsx},x"})),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
        );
        let fine = GrepArgs::parse(&json!({"pattern": "  ", "include": "*.{ts,tsx}"})).unwrap();
        assert_eq!(fine.pattern, "  ");
        assert_eq!(fine.include.as_deref(), Some("*.{ts,tsx}"));
        assert!(GrepArgs::parse(&json!({"pattern": "x", "include": "}*,"})).is_err());
    }
}
