//! What plugins register: sections, contexts, and the providers evaluated per assembly.

use std::fmt;
use std::sync::Arc;

use dsh_llm::{CancellationToken, ToolSchema};

/// What one assembly is for. Dynamic texts, variables and tool providers read it; the agent
/// loop fills what it knows about the step it assembles for.
#[derive(Debug, Clone, Default)]
pub struct AssembleContext {
    /// The session the prompt is assembled for.
    pub session_id: Option<String>,
    /// The provider the request goes to.
    pub provider: Option<String>,
    /// The model the request goes to.
    pub model: Option<String>,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// The signal of the turn that asked for this assembly. It controls that request only:
    /// listeners must not keep it for later turns.
    pub signal: Option<CancellationToken>,
}

/// A text computed for each assembly.
pub type TextFn = Arc<dyn Fn(&AssembleContext) -> String + Send + Sync>;

/// A prompt variable's provider: `None` means "registered, but no value for this assembly".
pub type VariableFn = Arc<dyn Fn(&AssembleContext) -> Option<String> + Send + Sync>;

/// A tool-schema provider, evaluated for each assembly.
pub type ToolProvider = Arc<dyn Fn(&AssembleContext) -> ToolProviderResult + Send + Sync>;

/// The text of a section or context: fixed, or computed for each assembly. It may reference
/// `{{variable}}`s, which are resolved when the assembly is rendered.
#[derive(Clone)]
pub enum PromptText {
    /// The same text every time.
    Static(String),
    /// Computed from the assembly's [`AssembleContext`].
    Dynamic(TextFn),
}

impl PromptText {
    /// A text computed by `text` at each assembly.
    pub fn dynamic(text: impl Fn(&AssembleContext) -> String + Send + Sync + 'static) -> Self {
        Self::Dynamic(Arc::new(text))
    }

    /// The text for the assembly described by `context`.
    pub fn resolve(&self, context: &AssembleContext) -> String {
        match self {
            Self::Static(text) => text.clone(),
            Self::Dynamic(text) => text(context),
        }
    }
}

impl fmt::Debug for PromptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Static(text) => f.debug_tuple("Static").field(text).finish(),
            Self::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

impl From<&str> for PromptText {
    fn from(text: &str) -> Self {
        Self::Static(text.to_owned())
    }
}

impl From<String> for PromptText {
    fn from(text: String) -> Self {
        Self::Static(text)
    }
}

/// One contribution to the system prompt.
///
/// Sections are joined in ascending `order`; registration order breaks ties. By convention
/// `-100` is the harness identity, `0` the deployment persona, and tool guidance uses
/// `100..=199`.
#[derive(Debug, Clone)]
pub struct PromptSection {
    /// The unique name; registering a second section with it is refused.
    pub name: String,
    /// The position; must be finite.
    pub order: f64,
    /// The text, before variable interpolation.
    pub text: PromptText,
    /// This section is the whole system prompt: after the assemble waterfall it is the only
    /// section left. At most one complete section may be registered at assembly time.
    pub complete: bool,
}

impl PromptSection {
    /// A section that is not complete.
    pub fn new(name: impl Into<String>, order: f64, text: impl Into<PromptText>) -> Self {
        Self {
            name: name.into(),
            order,
            text: text.into(),
            complete: false,
        }
    }

    /// Marks the section as the complete system prompt.
    #[must_use]
    pub fn complete(mut self) -> Self {
        self.complete = true;
        self
    }
}

/// One contribution to the runtime-context snapshot (a user-role message that supersedes
/// earlier snapshots), joined in ascending `order`. An empty text contributes nothing.
#[derive(Debug, Clone)]
pub struct PromptContext {
    /// The unique name; registering a second context with it is refused.
    pub name: String,
    /// The position; must be finite.
    pub order: f64,
    /// The text, before variable interpolation.
    pub text: PromptText,
}

impl PromptContext {
    /// A context contribution.
    pub fn new(name: impl Into<String>, order: f64, text: impl Into<PromptText>) -> Self {
        Self {
            name: name.into(),
            order,
            text: text.into(),
        }
    }
}

/// What one tool provider contributes to one assembly.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolProviderResult {
    /// The schemas visible in this assembly.
    pub schemas: Vec<ToolSchema>,
    /// Every name the provider knows before any per-assembly restriction, which `toolOrder`
    /// is checked against. `None` means the names of `schemas`.
    pub known_names: Option<Vec<String>>,
}

impl ToolProviderResult {
    /// `schemas`, whose names are all the provider knows.
    pub fn new(schemas: Vec<ToolSchema>) -> Self {
        Self {
            schemas,
            known_names: None,
        }
    }
}
