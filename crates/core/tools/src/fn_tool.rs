//! A tool built from a closure, for small tools and tests.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::definition::{ToolDefinition, ToolOutput, ToolRunContext};
use crate::error::ToolError;

type Handler = Arc<
    dyn Fn(Value, ToolRunContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>>
        + Send
        + Sync,
>;
type Classifier = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// A [`ToolDefinition`] whose body is a closure.
///
/// ```
/// use dsh_tools::{FnTool, ToolOutput};
/// use serde_json::json;
///
/// let echo = FnTool::new(
///     "echo",
///     "Echo the text back.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args, _run| async move { Ok(ToolOutput::json(args["text"].clone())) },
/// )
/// .concurrency_safe(|_| true);
/// # let _ = echo;
/// ```
#[derive(Clone)]
pub struct FnTool {
    name: String,
    description: String,
    parameters: Value,
    output_schema: Option<Value>,
    concurrency_safe: Option<Classifier>,
    handler: Handler,
}

impl FnTool {
    /// A tool called `name` whose body is `handler`.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            output_schema: None,
            concurrency_safe: None,
            handler: Arc::new(move |args, run| Box::pin(handler(args, run))),
        }
    }

    /// Declares the schema every successful value must match.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Declares which calls may overlap their siblings.
    #[must_use]
    pub fn concurrency_safe(
        mut self,
        classify: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency_safe = Some(Arc::new(classify));
        self
    }
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ToolDefinition for FnTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    fn is_concurrency_safe(&self, args: &Value) -> bool {
        self.concurrency_safe
            .as_ref()
            .is_some_and(|classify| classify(args))
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        (self.handler)(args, run).await
    }
}
