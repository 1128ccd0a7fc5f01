//! Provider and model metadata adapters publish.

use serde::{Deserialize, Serialize};

/// The provider route of DeepSeek's official API: the route dsh's shipped profiles request, which
/// the DeepSeek adapter registers and the replay provider answers by default.
pub const DEEPSEEK_OFFICIAL: &str = "deepseek-official";

/// Display metadata of one provider route (`{id, name}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// The route key requests name in `provider`.
    pub id: String,
    /// Human-readable name (`DeepSeek`).
    pub name: String,
}

impl ProviderInfo {
    /// Info with `id` and `name`.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
        }
    }
}

/// One selectable reasoning effort of a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningEffort {
    /// The value requests send as `reasoningEffort` (`high`).
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// How it differs from the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ReasoningEffort {
    /// An effort whose name is its id.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            description: None,
        }
    }
}

/// The reasoning efforts of one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningInfo {
    /// The efforts, in the adapter's display order; never empty.
    pub efforts: Vec<ReasoningEffort>,
    /// The effort filled into requests that name none; absent keeps the provider's own
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_effort: Option<String>,
}

impl ReasoningInfo {
    /// Efforts named by their ids, with an optional default.
    pub fn new<I, S>(efforts: I, default_effort: Option<&str>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            efforts: efforts.into_iter().map(ReasoningEffort::new).collect(),
            default_effort: default_effort.map(str::to_owned),
        }
    }

    /// Whether `effort` is one of the efforts.
    pub fn supports(&self, effort: &str) -> bool {
        self.efforts.iter().any(|known| known.id == effort)
    }
}

/// What an adapter knows about one model: its catalog entry (dsh's `LlmModelInfo`) and its
/// exact-call metadata (`LlmResolvedModelInfo`).
///
/// Catalogs are advisory: an adapter may accept ids it does not list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The id requests send as `model`.
    pub id: String,
    /// Human-readable name; never empty.
    pub name: String,
    /// How it differs from similar models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Accepted input modalities (`text`, `image`); absent means unknown, and a list without
    /// `image` makes the runtime replace image blocks by text before dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modalities: Option<Vec<String>>,
    /// Combined request and response capacity in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The output cap filled into requests that set no `maxTokens` (dsh's
    /// `defaultMaxTokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// Selectable reasoning efforts; absent when the model offers none, and then a request
    /// naming an effort is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningInfo>,
}

impl ModelInfo {
    /// Info for `id` with its id as its name and nothing else known.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            description: None,
            input_modalities: None,
            context_window: None,
            max_output: None,
            reasoning: None,
        }
    }

    /// Whether the model is known to accept images; `None` when its modalities are unknown.
    pub fn accepts_images(&self) -> Option<bool> {
        self.input_modalities
            .as_ref()
            .map(|modalities| modalities.iter().any(|modality| modality == "image"))
    }
}
