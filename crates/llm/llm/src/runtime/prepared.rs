//! A call prepared under one pinned registration: its effective config, model and retry
//! policy are fixed before it is logged and dispatched once.

use std::sync::atomic::{AtomicBool, Ordering};

use dsh_kernel::Context;

use super::dispatch::{Pinned, config_drift, stream_with};
use super::routes::{Route, Shared};
use crate::adapter::ChunkStream;
use crate::failure::{LlmFailure, codes};
use crate::model::ModelInfo;
use crate::options::{AdapterDefaults, GenerateOptions, LlmCallConfig};
use crate::retry::RetryPolicy;

/// One call resolved under a pinned registration ([`crate::LlmRuntime::prepare_call`]).
pub struct PreparedCall {
    pub(super) config: LlmCallConfig,
    pub(super) retry_policy: RetryPolicy,
    pub(super) model: ModelInfo,
    pub(super) adapter_defaults: AdapterDefaults,
    pub(super) route: Route,
    pub(super) ctx: Context,
    pub(super) routes: Shared,
    pub(super) dispatched: AtomicBool,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("config", &self.config)
            .field("model", &self.model)
            .field("adapter_defaults", &self.adapter_defaults)
            .finish_non_exhaustive()
    }
}

impl PreparedCall {
    /// The effective config, the model's defaults filled in.
    pub fn config(&self) -> &LlmCallConfig {
        &self.config
    }

    /// The retry policy captured with the registration.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry_policy
    }

    /// The model's exact metadata.
    pub fn model(&self) -> &ModelInfo {
        &self.model
    }

    /// The model's context window, when known.
    pub fn context_window(&self) -> Option<u64> {
        self.model.context_window
    }

    /// Which config fields the adapter supplied.
    pub fn adapter_defaults(&self) -> AdapterDefaults {
        self.adapter_defaults
    }

    /// Streams the call once, like [`crate::LlmRuntime::stream`] but through the pinned adapter.
    /// `options` must carry the prepared config ([`GenerateOptions::set_call_config`]);
    /// a second call or a different config is `INVALID_PREPARED_CALL`, and so is a config
    /// an `llm/stream` listener changed (then as the stream's `error` finish).
    pub fn stream(&self, options: GenerateOptions) -> Result<ChunkStream, LlmFailure> {
        if self.dispatched.load(Ordering::SeqCst) {
            return Err(LlmFailure::new(
                codes::INVALID_PREPARED_CALL,
                "a prepared LLM call can only be dispatched once",
            ));
        }
        if options.call_config() != self.config {
            return Err(config_drift());
        }
        if self.dispatched.swap(true, Ordering::SeqCst) {
            return Err(LlmFailure::new(
                codes::INVALID_PREPARED_CALL,
                "a prepared LLM call can only be dispatched once",
            ));
        }
        let pinned = Pinned {
            route: self.route.clone(),
            config: self.config.clone(),
            model: self.model.clone(),
        };
        Ok(stream_with(&self.ctx, &self.routes, options, Some(pinned)))
    }
}
