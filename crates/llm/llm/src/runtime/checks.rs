//! The contract checks on what adapters say: the model catalog, an exact model's metadata,
//! and the call config that metadata resolves (dsh's `normalizeModelInfo` and
//! `resolveCallWithInfo`).

use dsh_protocol::json::MAX_SAFE_INTEGER;

use crate::failure::{LlmFailure, codes};
use crate::model::ModelInfo;
use crate::options::LlmCallConfig;

/// `INVALID_CATALOG` when the catalog of `provider` lists an empty or repeated id or an empty
/// name.
pub(super) fn check_catalog(provider: &str, models: &[ModelInfo]) -> Result<(), LlmFailure> {
    let mut seen: Vec<&str> = Vec::with_capacity(models.len());
    for model in models {
        if model.id.is_empty() || model.name.is_empty() || seen.contains(&model.id.as_str()) {
            return Err(LlmFailure::new(
                codes::INVALID_CATALOG,
                format!(
                    "adapter returned invalid or duplicate model metadata for provider \
                     \"{provider}\""
                ),
            ));
        }
        seen.push(&model.id);
    }
    Ok(())
}

/// Validates an adapter's exact-model metadata as dsh does (`normalizeModelInfo`).
pub(super) fn normalize_model_info(
    provider: &str,
    model: &str,
    info: ModelInfo,
) -> Result<ModelInfo, LlmFailure> {
    if info.id != model || info.name.is_empty() {
        return Err(LlmFailure::new(
            codes::INVALID_MODEL_INFO,
            format!(
                "adapter returned invalid exact model metadata for provider \"{provider}\" model \
                 \"{model}\""
            ),
        ));
    }
    if info.context_window == Some(0) {
        return Err(LlmFailure::new(
            codes::INVALID_MODEL_CONTEXT,
            format!(
                "adapter returned invalid context metadata for provider \"{provider}\" model \
                 \"{model}\""
            ),
        ));
    }
    if info
        .max_output
        .is_some_and(|cap| cap == 0 || cap > MAX_SAFE_INTEGER)
    {
        return Err(LlmFailure::new(
            codes::INVALID_MODEL_MAX_TOKENS,
            format!(
                "adapter returned invalid default maxTokens for provider \"{provider}\" model \
                 \"{model}\""
            ),
        ));
    }
    if let Some(reasoning) = &info.reasoning {
        let invalid = |what: &str| {
            LlmFailure::new(
                codes::INVALID_MODEL_REASONING,
                format!("adapter returned {what} for provider \"{provider}\" model \"{model}\""),
            )
        };
        if reasoning.efforts.is_empty() {
            return Err(invalid("invalid reasoning metadata"));
        }
        let mut seen: Vec<&str> = Vec::with_capacity(reasoning.efforts.len());
        for effort in &reasoning.efforts {
            if effort.id.is_empty() || effort.name.is_empty() || seen.contains(&effort.id.as_str())
            {
                return Err(invalid("invalid or duplicate reasoning effort metadata"));
            }
            seen.push(&effort.id);
        }
        if reasoning
            .default_effort
            .as_deref()
            .is_some_and(|effort| !seen.contains(&effort))
        {
            return Err(invalid("an unknown default reasoning effort"));
        }
    }
    Ok(info)
}

/// Fills the model's defaults into `config` and checks its effort (dsh's
/// `resolveCallWithInfo`).
pub(super) fn resolve_call_with_info(
    config: &LlmCallConfig,
    model: &ModelInfo,
) -> Result<LlmCallConfig, LlmFailure> {
    let mut resolved = config.clone();
    if resolved.max_tokens.is_none() {
        resolved.max_tokens = model.max_output;
    }
    let unsupported = |effort: &str| {
        LlmFailure::new(
            codes::UNSUPPORTED_REASONING_EFFORT,
            format!(
                "provider \"{}\" model \"{}\" does not support reasoning effort \"{effort}\"",
                config.provider, config.model
            ),
        )
    };
    match &model.reasoning {
        None => {
            if let Some(effort) = &config.reasoning_effort {
                return Err(unsupported(effort));
            }
        }
        Some(reasoning) => {
            let effective = config
                .reasoning_effort
                .clone()
                .or_else(|| reasoning.default_effort.clone());
            if let Some(effort) = effective {
                if !reasoning.supports(&effort) {
                    return Err(unsupported(&effort));
                }
                resolved.reasoning_effort = Some(effort);
            }
        }
    }
    Ok(resolved)
}
