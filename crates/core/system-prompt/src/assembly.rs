//! What an assembly produces, before rendering.

use dsh_llm::ToolSchema;
use serde::{Deserialize, Serialize};

/// One section or context of an assembly: its name and resolved (not yet interpolated) text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledSection {
    /// The contributing registration's name.
    pub name: String,
    /// The resolved text; `{{variable}}`s are interpolated when rendered.
    pub text: String,
}

impl AssembledSection {
    /// A section named `name` with `text`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// The model input of one step, as assembled. Sections and contexts are in order and not yet
/// interpolated; tools are in their canonical order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptAssembly {
    /// The system prompt's sections.
    pub sections: Vec<AssembledSection>,
    /// The runtime-context contributions (empty while runtime context is suppressed).
    pub contexts: Vec<AssembledSection>,
    /// The tool schemas the model is offered.
    pub tools: Vec<ToolSchema>,
    /// Every variable with its value for this assembly (`None`: registered without a value),
    /// in registration order.
    pub variables: Vec<(String, Option<String>)>,
}

impl PromptAssembly {
    /// The entry of variable `name`: `None` when it is not registered, `Some(None)` when it has
    /// no value in this assembly.
    pub fn variable(&self, name: &str) -> Option<Option<&str>> {
        self.variables
            .iter()
            .rev()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.as_deref())
    }

    /// Sets variable `name`, replacing its value if it is there, else adding it last. Waterfall
    /// listeners use it to add or override variables before rendering.
    pub fn set_variable(&mut self, name: impl Into<String>, value: Option<String>) {
        let name = name.into();
        match self
            .variables
            .iter_mut()
            .rev()
            .find(|(known, _)| *known == name)
        {
            Some(entry) => entry.1 = value,
            None => self.variables.push((name, value)),
        }
    }
}

/// One rendered part of a runtime-context snapshot, attributed to the context that
/// contributed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSnapshotSection {
    /// The contributing context's name.
    pub name: String,
    /// Its interpolated, non-empty text.
    pub text: String,
}
