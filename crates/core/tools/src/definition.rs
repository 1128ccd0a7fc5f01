//! What a tool is: its model-facing schema and its body.

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::content::ContentBlock;
use crate::error::ToolError;

/// A tool: what the model sees (name, description, `parameters`) and what runs.
///
/// The registry validates the arguments against [`ToolDefinition::parameters`] before
/// [`ToolDefinition::execute`] runs (a mismatch is an `INVALID_ARGS` result and the body never
/// sees it), and validates the returned value against [`ToolDefinition::output_schema`] when
/// there is one (`INVALID_TOOL_OUTPUT`).
///
/// ```
/// use async_trait::async_trait;
/// use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
/// use serde_json::{Value, json};
///
/// struct Echo { parameters: Value }
///
/// #[async_trait]
/// impl ToolDefinition for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Echo the text back." }
///     fn parameters(&self) -> &Value { &self.parameters }
///     fn is_concurrency_safe(&self, _args: &Value) -> bool { true }
///     async fn execute(&self, args: Value, _run: ToolRunContext) -> Result<ToolOutput, ToolError> {
///         let text = args["text"].as_str().unwrap_or_default().to_owned();
///         Ok(ToolOutput::new(json!(text), vec![ContentBlock::text(text)]))
///     }
/// }
/// # let _ = Echo { parameters: json!({"type": "object"}) };
/// ```
#[async_trait]
pub trait ToolDefinition: Send + Sync + 'static {
    /// The tool's name, unique in the registry.
    fn name(&self) -> &str;

    /// What the model reads about the tool.
    fn description(&self) -> &str;

    /// The arguments' JSON schema, in the enforced subset ([`crate::schema`]). Read once, at
    /// registration.
    fn parameters(&self) -> &Value;

    /// The schema every successful value must match, in the enforced subset. Read once, at
    /// registration.
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// Whether this call may overlap sibling calls (only for valid arguments; the registry
    /// answers `false` for arguments that fail validation). Default: `false` (exclusive).
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        false
    }

    /// Runs one accepted call. `args` are the validated arguments. Work must observe
    /// `run.signal` and settle only when its own work is done: the registry never drops a
    /// started body. A body that stops because of the signal returns [`ToolError::aborted`].
    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError>;

    /// Renders a value a `tools/post-execute` listener put in place of the body's value. The
    /// default shows the value as text (a string as itself, anything else as JSON).
    fn render(&self, _args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(value))
    }
}

/// What a tool body returns: its canonical value, the content the model reads, and optional
/// presentation metadata (dsh's `presentationMeta`, carried on `tool/result` for UIs).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The canonical value (checked against the output schema).
    pub value: Value,
    /// The model-facing rendering of the value.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata for UIs.
    pub meta: Option<Value>,
}

impl ToolOutput {
    /// An output with `value` rendered as `content`.
    pub fn new(value: Value, content: Vec<ContentBlock>) -> Self {
        Self {
            value,
            content,
            meta: None,
        }
    }

    /// An output whose value is `text` and whose content is that text.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        Self::new(Value::String(text.clone()), vec![ContentBlock::text(text)])
    }

    /// An output rendered as text: a string value as itself, anything else as JSON.
    pub fn json(value: Value) -> Self {
        let text = match &value {
            Value::String(text) => text.clone(),
            other => dsh_protocol::json::to_js_string(other),
        };
        Self::new(value, vec![ContentBlock::text(text)])
    }

    /// The same output with presentation metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Who a call runs for: dsh's `agent`, reduced to what tools read today (the agent loop fills
/// both fields). Build it with `..Default::default()` so added fields stay compatible.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCaller {
    /// The calling agent's session id.
    pub session_id: Option<String>,
    /// The calling session's header (its `cwd` is the default working directory of shell
    /// tools).
    pub session_header: Option<dsh_session::SessionHeader>,
    /// The provider route of the calling agent's model (`deepseek-official`, ...).
    pub provider: Option<String>,
    /// The calling agent's model id (`deepseek-v4-flash`, ...): what tools that hand the
    /// model images check its input modalities against.
    pub model: Option<String>,
}

/// What a tool body gets besides its arguments: the call's identity, its caller, and the
/// signal to observe.
#[derive(Debug, Clone)]
pub struct ToolRunContext {
    /// The model's id for this call.
    pub call_id: String,
    /// The root model-requested call (the call itself unless it is nested).
    pub root_call_id: String,
    /// The tool's name.
    pub name: String,
    /// Who the call runs for, when anyone.
    pub caller: Option<ToolCaller>,
    /// Cancelled when the caller, or a `tools/execute` wrapper, cancels the call.
    pub signal: CancellationToken,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_rendering() {
        assert_eq!(
            ToolOutput::json(json!("plain")).content,
            vec![ContentBlock::text("plain")]
        );
        assert_eq!(
            ToolOutput::json(json!({"a": 1.0, "b": [true]})).content,
            vec![ContentBlock::text(r#"{"a":1,"b":[true]}"#)]
        );
    }
}
