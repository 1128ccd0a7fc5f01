//! The dsh tool registry and its execution pipeline (dsh's `@deepseek-ai/dsh-tools`).
//!
//! - [`ToolDefinition`]: a tool's model-facing schema and async body; [`FnTool`] builds one
//!   from a closure.
//! - [`ToolRegistry`], the `tools` service ([`TOOLS`]): [`ToolRegistry::register`] ties a tool
//!   to the registering fiber, so it disappears when that plugin unloads;
//!   [`ToolRegistry::list`] and [`ToolRegistry::schemas`] list tools by name.
//! - [`ToolRegistry::execute`]: one call through `tools/pre-execute` (allow / deny / ask
//!   through [`APPROVAL`]), guards, `tools/execute` around the body (unknown tool, argument
//!   validation, output validation), `tools/post-execute` (accept / replace / block) and the
//!   `tools/result` notification. Every failure is an `isError` result whose content is
//!   `Error: <message>`; see [`ToolError`] for dsh's codes.
//! - [`ToolRegistry::execution_mode`] and [`ToolRegistry::execute_batch`]: parallel-safe calls
//!   overlap, exclusive ones run alone, results come back in call order.
//! - [`schema`]: the JSON Schema subset dsh enforces, with its violation texts.
//! - [`ToolsPlugin`]: the `dsh-tools` plugin providing the registry.
//! - [`UserApprovalPlugin`]: `dsh-user-approval`, the `approval` service (session policy,
//!   the composed answerer, the `approval/asked` / `approval/decided` audit pair).
//!
//! ```
//! use std::sync::Arc;
//! use dsh_kernel::Kernel;
//! use dsh_tools::{FnTool, TOOLS, ToolExecutionInput, ToolOutput, ToolsPlugin};
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let kernel = Kernel::new()?;
//! kernel.root().plugin(ToolsPlugin, serde_json::Value::Null)?;
//! kernel.settle().await;
//! let tools = kernel.root().require(&TOOLS)?;
//! let echo = FnTool::new("echo", "Echo.", json!({"type": "object"}), |args, _run| async move {
//!     Ok(ToolOutput::json(args))
//! });
//! tools.register(&kernel.root(), Arc::new(echo))?;
//! let input = ToolExecutionInput::new("call-1", "echo", json!({"a": 1}), CancellationToken::new());
//! let result = tools.execute(input).await;
//! assert_eq!(result.text(), r#"{"a":1}"#);
//! kernel.shutdown().await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod approval;
mod batch;
mod content;
mod definition;
mod error;
mod escalation;
mod events;
mod execution;
mod fn_tool;
mod pipeline;
mod plugin;
mod registry;
pub mod schema;
mod user_approval;

pub use approval::{APPROVAL, ApprovalOutcome, ApprovalRequest, ApprovalService};
pub use async_trait::async_trait;
pub use batch::DEFAULT_MAX_PARALLEL_TOOL_CALLS;
pub use content::ContentBlock;
pub use definition::{ToolCaller, ToolDefinition, ToolOutput, ToolRunContext};
/// The model-facing projection of a tool (what a model request's `tools` lists).
pub use dsh_llm::ToolSchema;
pub use error::{ErrorInfo, ToolError, codes};
pub use escalation::{EscalationAsk, approve_escalation, escalation_args};
pub use events::{
    PostExecute, PostToolDecision, PreToolDecision, ToolResultNotice, ToolsExecute,
    ToolsPostExecute, ToolsPreExecute, ToolsResult,
};
pub use execution::{
    ToolDispatch, ToolExecution, ToolExecutionInput, ToolExecutionResult, ToolFailure,
};
pub use fn_tool::FnTool;
pub use pipeline::StagedToolCall;
pub use plugin::{PLUGIN_NAME, ToolsConfig, ToolsPlugin};
pub use registry::{ExecutionMode, RUN_CODE_NAME, TOOLS, ToolGuard, ToolRegistry};
pub use tokio_util::sync::CancellationToken;
pub use user_approval::{
    ApprovalAnswerer, ApprovalPolicy, ApprovalQuestion, USER_APPROVAL, USER_APPROVAL_PLUGIN_NAME,
    UserApproval, UserApprovalConfig, UserApprovalPlugin,
};
