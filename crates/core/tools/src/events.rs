//! The pipeline's events and the decisions their listeners return.
//!
//! | event | mode | listener gets | default (end of the chain) |
//! |---|---|---|---|
//! | [`ToolsPreExecute`] `tools/pre-execute` | waterfall | [`ToolExecution`] | `Ok(Allow)` |
//! | [`ToolsExecute`] `tools/execute` | waterfall | [`ToolDispatch`] | the tool body |
//! | [`ToolsPostExecute`] `tools/post-execute` | waterfall | `Arc<`[`PostExecute`]`>` | `Ok(Accept)` |
//! | [`ToolsResult`] `tools/result` | emit | [`ToolResultNotice`] | – |
//!
//! A waterfall listener that returns `Err` fails the call: the result is `Error: <message>`
//! (with the error's name and code when it has them). A failing `tools/result` observer is
//! logged and changes nothing.

use std::sync::Arc;

use dsh_kernel::{Emit, Event, Waterfall};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::error::ToolError;
use crate::execution::{ToolDispatch, ToolExecution, ToolExecutionResult};

/// What `tools/pre-execute` decides before dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Run the call (guards still run).
    Allow,
    /// Refuse it: the result is `Error: <reason>`.
    Deny {
        /// Why, as the model will read it.
        reason: String,
    },
    /// Ask the approval service ([`crate::APPROVAL`]); without one the call is denied with
    /// `reason`, or `tool "<name>" requires approval (not yet supported)`.
    Ask {
        /// Why approval is needed.
        reason: Option<String>,
    },
}

/// What `tools/post-execute` decides about a result.
#[derive(Debug, Clone, PartialEq)]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing its content or (for a success) its value,
    /// never both. A replaced value is checked against the output schema and rendered by
    /// [`crate::ToolDefinition::render`].
    Accept {
        /// Replacement content.
        content: Option<Vec<ContentBlock>>,
        /// Replacement value.
        value: Option<Value>,
    },
    /// Turn the result into a failure whose content is `feedback`.
    Block {
        /// What the model reads instead.
        feedback: Vec<ContentBlock>,
    },
}

impl PostToolDecision {
    /// Accept the result as it is.
    pub fn accept() -> Self {
        Self::Accept {
            content: None,
            value: None,
        }
    }
}

/// What a `tools/post-execute` listener gets: the call and its dispatch outcome (a denial, a
/// tool failure or a success).
#[derive(Debug, Clone)]
pub struct PostExecute {
    /// The call.
    pub execution: ToolExecution,
    /// The outcome so far.
    pub result: ToolExecutionResult,
}

/// What a `tools/result` observer gets: the call and its final result.
#[derive(Debug, Clone)]
pub struct ToolResultNotice {
    /// The call.
    pub execution: ToolExecution,
    /// The final result, as [`crate::ToolRegistry::execute`] returns it.
    pub result: ToolExecutionResult,
}

/// `tools/pre-execute`: allow, deny or ask before dispatch. Listeners may pass the call
/// with rewritten arguments to `next`.
#[derive(Debug)]
pub struct ToolsPreExecute;
impl Event for ToolsPreExecute {
    const NAME: &'static str = "tools/pre-execute";
    type Mode = Waterfall<ToolExecution, Result<PreToolDecision, ToolError>>;
}

/// `tools/execute`: around the tool body (timeouts, retries, metrics). Wrappers may replace
/// the signal, or answer without calling `next`.
#[derive(Debug)]
pub struct ToolsExecute;
impl Event for ToolsExecute {
    const NAME: &'static str = "tools/execute";
    type Mode = Waterfall<ToolDispatch, Result<ToolExecutionResult, ToolError>>;
}

/// `tools/post-execute`: accept, replace or block a dispatch outcome.
#[derive(Debug)]
pub struct ToolsPostExecute;
impl Event for ToolsPostExecute {
    const NAME: &'static str = "tools/post-execute";
    type Mode = Waterfall<Arc<PostExecute>, Result<PostToolDecision, ToolError>>;
}

/// `tools/result`: observe the final outcome of every call.
#[derive(Debug)]
pub struct ToolsResult;
impl Event for ToolsResult {
    const NAME: &'static str = "tools/result";
    type Mode = Emit<ToolResultNotice>;
}
