//! The dsh system-prompt service (dsh's `@deepseek-ai/dsh-system-prompt`).
//!
//! Plugins register what the model reads before each step, each registration owned by the
//! registering fiber (undone when it unloads, or by its [`dsh_kernel::Disposer`]):
//!
//! - [`PromptSection`]s of the system prompt, joined in ascending order. The plugin registers
//!   two itself: the harness identity ([`HARNESS_IDENTITY_SECTION`], order −100) and the
//!   deployment persona ([`PERSONA_SECTION`], order 0). A section may be *complete*: the
//!   whole system prompt.
//! - [`PromptContext`]s: the runtime-context snapshot, a user-role message that supersedes
//!   earlier ones. [`SystemPrompt::suppress_runtime_context`] (or `includeRuntimeContext:
//!   false`) drops it.
//! - Prompt variables, referenced as `{{name}}` in sections and contexts and interpolated
//!   strictly at render time.
//! - Tool providers, whose schemas are offered in name order or in the configured
//!   `toolOrder` (with [`TOOL_ORDER_REST`] for the tools it does not list).
//!
//! [`SystemPrompt::assemble`] evaluates them for one step and runs the
//! `system-prompt/assemble` waterfall ([`SystemPromptAssemble`]); [`render_prompt`] and
//! [`render_context_sections`] / [`join_context_sections`] turn the assembly into text. Every
//! registration change emits `system-prompt/change` ([`SystemPromptChange`]).
//!
//! Not ported: dsh's per-agent *scoped* layers (a registration made through an agent's
//! context shadowing the global one for that agent). Every registration here is global, and
//! duplicate names are refused with dsh's global-layer messages.
//!
//! ```
//! use dsh_kernel::Kernel;
//! use dsh_system_prompt::{
//!     AssembleContext, PromptSection, SYSTEM_PROMPT, SystemPromptPlugin, render_prompt,
//! };
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let kernel = Kernel::new()?;
//! kernel.root().plugin(SystemPromptPlugin, json!({ "persona": "You run on {{model}}." }))?;
//! kernel.settle().await;
//! let prompt = kernel.root().require(&SYSTEM_PROMPT)?;
//!
//! let root = kernel.root();
//! prompt.variable(&root, "model", |context| context.model.clone())?;
//! prompt.section(&root, PromptSection::new("rules", 10.0, "Be precise."))?;
//!
//! let context = AssembleContext { model: Some("deepseek-v4".into()), ..Default::default() };
//! let assembly = prompt.assemble(&context).await?;
//! assert_eq!(
//!     render_prompt(&assembly)?,
//!     "You are an AI agent powered by DeepSeek Harness.\n\n\
//!      You run on deepseek-v4.\n\n\
//!      Be precise."
//! );
//! kernel.shutdown().await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod assembly;
mod error;
mod events;
mod input;
mod plugin;
mod render;
mod service;
mod table;
mod tool_order;

pub use assembly::{AssembledSection, ContextSnapshotSection, PromptAssembly};
pub use dsh_llm::{CancellationToken, ToolSchema};
pub use error::PromptError;
pub use events::{SystemPromptAssemble, SystemPromptChange};
pub use input::{
    AssembleContext, PromptContext, PromptSection, PromptText, TextFn, ToolProvider,
    ToolProviderResult, VariableFn,
};
pub use plugin::{PLUGIN_NAME, RUNTIME_CONTEXT_PLUGIN, SystemPromptConfig, SystemPromptPlugin};
pub use render::{
    RUNTIME_CONTEXT_CLEARED, join_context_sections, render_context_sections,
    render_context_snapshot, render_prompt,
};
pub use service::{
    HARNESS_IDENTITY, HARNESS_IDENTITY_ORDER, HARNESS_IDENTITY_SECTION, PERSONA_ORDER,
    PERSONA_SECTION, SYSTEM_PROMPT, SystemPrompt,
};
pub use tool_order::TOOL_ORDER_REST;
