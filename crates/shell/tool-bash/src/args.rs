//! The `bash` tool's arguments, checked past what the schema says (dsh's `validateBashArgs`).

use dsh_tools::ToolError;
use serde_json::Value;

/// Validated `bash` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct BashArgs {
    /// The command.
    pub command: String,
    /// What it does, for the UI.
    pub description: String,
    /// The requested timeout in milliseconds.
    pub timeout_ms: Option<f64>,
    /// The requested working directory.
    pub workdir: Option<String>,
    /// Whether to run it as a background job.
    pub run_in_background: bool,
    /// A requested sandbox escalation (only meaningful with a confining executor).
    pub sandbox_permissions: Option<String>,
    /// Why the escalation is needed.
    pub justification: Option<String>,
}

fn string(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl BashArgs {
    /// Reads schema-validated arguments and applies dsh's value rules.
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let parsed = Self {
            command: string(args, "command").unwrap_or_default(),
            description: string(args, "description").unwrap_or_default(),
            timeout_ms: args.get("timeoutMs").and_then(Value::as_f64),
            workdir: string(args, "workdir"),
            run_in_background: args.get("run_in_background").and_then(Value::as_bool) == Some(true),
            sandbox_permissions: string(args, "sandbox_permissions"),
            justification: string(args, "justification"),
        };
        if parsed.command.trim().is_empty() {
            return Err(ToolError::new(
                "invalid command: expected a non-empty string",
            ));
        }
        if parsed.description.trim().is_empty() {
            return Err(ToolError::new(
                "invalid description: expected a non-empty string",
            ));
        }
        if let Some(timeout) = parsed.timeout_ms
            && !(timeout.is_finite() && timeout > 0.0)
        {
            let shown = args
                .get("timeoutMs")
                .map(dsh_protocol::json::to_js_string)
                .unwrap_or_default();
            return Err(ToolError::new(format!(
                "invalid timeoutMs: expected a positive number, got {shown}"
            )));
        }
        dsh_tools::escalation_args(args)?;
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(args: Value) -> String {
        BashArgs::parse(&args).unwrap_err().message().to_owned()
    }

    #[test]
    fn dshs_value_rules_apply() {
        let ok =
            BashArgs::parse(&json!({"command": "ls", "description": "List", "extra": 1})).unwrap();
        assert_eq!((ok.command.as_str(), ok.run_in_background), ("ls", false));
        assert_eq!(
            error(json!({"command": "  ", "description": "d"})),
            "invalid command: expected a non-empty string"
        );
        assert_eq!(
            error(json!({"command": "ls", "description": ""})),
            "invalid description: expected a non-empty string"
        );
        assert_eq!(
            error(json!({"command": "ls", "description": "d", "timeoutMs": -5})),
            "invalid timeoutMs: expected a positive number, got -5"
        );
        assert_eq!(
            error(
                json!({"command": "ls", "description": "d", "sandbox_permissions": "danger-full-access"})
            ),
            "invalid escalation: sandbox_permissions requires a justification"
        );
        assert_eq!(
            error(json!({"command": "ls", "description": "d", "justification": "x"})),
            "invalid escalation: justification is only valid together with sandbox_permissions"
        );
    }
}
