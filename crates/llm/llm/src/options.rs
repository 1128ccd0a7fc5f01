//! One model request ([`GenerateOptions`]) and the header-level part of it
//! ([`LlmCallConfig`]).

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::types::{Message, ToolSchema};

/// What an auxiliary model call is for; ordinary conversation requests leave it unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// Summarizing the conversation (`compaction`).
    Compaction,
    /// Naming the session (`session-title`).
    SessionTitle,
}

/// One model request, fully assembled (dsh's `GenerateOptions`).
///
/// `signal` cancels the request; adapters must honour it, and [`crate::LlmRuntime::stream`]
/// ends the stream with an `aborted` finish as soon as it fires. It is not serialized.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateOptions {
    /// The registered provider route that selects the adapter.
    pub provider: String,
    /// The model id, passed through to the provider.
    pub model: String,
    /// An adapter-owned reasoning effort of this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// The conversation, as the provider sees it after the system slot.
    pub messages: Vec<Message>,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The tools the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolSchema>>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Cancels the request.
    #[serde(skip)]
    pub signal: CancellationToken,
    /// The session the request belongs to (routing metadata; replay keys on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What an auxiliary call is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<Purpose>,
}

impl GenerateOptions {
    /// A request for `provider`/`model` with `messages` and nothing else set.
    pub fn new(
        provider: impl Into<String>,
        model: impl Into<String>,
        messages: Vec<Message>,
    ) -> Self {
        Self {
            provider: provider.into(),
            model: model.into(),
            messages,
            ..Self::default()
        }
    }

    /// The call-config fields of this request.
    pub fn call_config(&self) -> LlmCallConfig {
        LlmCallConfig {
            provider: self.provider.clone(),
            model: self.model.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            stop: self.stop.clone(),
        }
    }

    /// Replaces this request's call-config fields with `config`'s.
    pub fn set_call_config(&mut self, config: &LlmCallConfig) {
        config.provider.clone_into(&mut self.provider);
        config.model.clone_into(&mut self.model);
        self.reasoning_effort.clone_from(&config.reasoning_effort);
        self.temperature = config.temperature;
        self.max_tokens = config.max_tokens;
        self.stop.clone_from(&config.stop);
    }
}

/// The provider, model, effort and sampling fields of a conversation's requests (dsh's
/// `LlmCallConfig`); each maps 1:1 onto the [`GenerateOptions`] field of the same name.
/// `==` is dsh's `callConfigEquals`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmCallConfig {
    /// Provider route.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Reasoning effort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
}

impl LlmCallConfig {
    /// A config naming only `provider` and `model`.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            model: model.into(),
            ..Self::default()
        }
    }
}

/// Which fields of a prepared config the adapter supplied rather than the caller (dsh's
/// `LlmCallConfigAdapterDefaults`: `{reasoningEffort?: true, maxTokens?: true}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterDefaults {
    /// The effort is the model's default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_effort: bool,
    /// The output cap is the model's default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_tokens: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_serialize_camel_case_without_the_signal() {
        let mut options = GenerateOptions::new("p", "m", Vec::new());
        options.max_tokens = Some(8);
        options.purpose = Some(Purpose::SessionTitle);
        assert_eq!(
            serde_json::to_string(&options).unwrap(),
            r#"{"provider":"p","model":"m","messages":[],"maxTokens":8,"purpose":"session-title"}"#
        );
    }

    #[test]
    fn call_config_round_trips_through_options() {
        let mut config = LlmCallConfig::new("p", "m");
        config.stop = Some(vec!["x".into()]);
        config.reasoning_effort = Some("high".into());
        let mut options = GenerateOptions::new("q", "n", Vec::new());
        options.set_call_config(&config);
        assert_eq!(options.call_config(), config);
        assert_eq!(
            serde_json::to_string(&AdapterDefaults {
                reasoning_effort: true,
                max_tokens: false
            })
            .unwrap(),
            r#"{"reasoningEffort":true}"#
        );
    }
}
