//! The `llm` service: the adapter registry and the streaming call API (dsh's `LlmRuntime`).

mod checks;
mod contract;
mod dispatch;
mod prepared;
mod routes;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use dsh_kernel::sync::lock;
use dsh_kernel::{Context, Disposer, ServiceKey};
use tokio_util::sync::CancellationToken;

use self::checks::{check_catalog, normalize_model_info, resolve_call_with_info};
use self::dispatch::stream_with;
pub use self::prepared::PreparedCall;
use self::routes::{Route, Shared, duplicate, find, unregister};
use crate::adapter::{ChunkStream, LlmAdapter};
use crate::events::AdaptersUpdated;
use crate::failure::{LlmFailure, codes};
use crate::model::{ModelInfo, ProviderInfo};
use crate::options::{AdapterDefaults, GenerateOptions, LlmCallConfig};
use crate::retry::RetryPolicy;

/// The LLM service, `llm` (dsh's `ctx.llm`).
pub const LLM: ServiceKey<LlmRuntime> = ServiceKey::new("llm");

/// The adapter registry and the streaming call API.
///
/// - [`LlmRuntime::register_adapter`] routes providers to an adapter for as long as the
///   registering fiber is loaded (all or nothing; a taken route is `DUPLICATE_ADAPTER`).
/// - [`LlmRuntime::stream`] runs the `llm/stream` waterfall around the adapter and never
///   fails: every adapter failure becomes the terminal `finish`.
/// - [`LlmRuntime::prepare_call`] pins one registration and fills the model's defaults, for
///   a caller that logs the effective config before dispatching it.
pub struct LlmRuntime {
    ctx: Context,
    routes: Shared,
}

impl std::fmt::Debug for LlmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let providers: Vec<String> = self.providers().into_iter().map(|info| info.id).collect();
        f.debug_struct("LlmRuntime")
            .field("providers", &providers)
            .finish_non_exhaustive()
    }
}

impl LlmRuntime {
    /// A runtime that dispatches its events through `ctx` (the providing plugin's).
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            routes: Arc::default(),
        }
    }

    /// Routes each of `providers` to `adapter` for as long as `ctx`'s fiber is loaded, or
    /// until the returned disposer runs; `llm/adapters-updated` is emitted on both ends.
    ///
    /// All or nothing: no providers, an empty name, or metadata whose id differs from the
    /// route or has an empty name is `INVALID_ADAPTER`; a route listed twice or already
    /// served is `DUPLICATE_ADAPTER` (`an adapter for provider "x" is already registered`).
    /// Each route's retry policy is captured now ([`LlmAdapter::retry_policy`], else the
    /// default).
    pub fn register_adapter<I, S>(
        &self,
        ctx: &Context,
        providers: I,
        adapter: Arc<dyn LlmAdapter>,
    ) -> Result<Disposer, LlmFailure>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let providers: Vec<String> = providers.into_iter().map(Into::into).collect();
        if providers.is_empty() {
            return Err(LlmFailure::new(
                codes::INVALID_ADAPTER,
                "an adapter must register at least one provider",
            ));
        }
        let mut candidates: Vec<(ProviderInfo, RetryPolicy)> = Vec::with_capacity(providers.len());
        for provider in &providers {
            if provider.is_empty() {
                return Err(LlmFailure::new(
                    codes::INVALID_ADAPTER,
                    "adapter provider names must be non-empty",
                ));
            }
            if candidates.iter().any(|(info, _)| info.id == *provider) {
                return Err(duplicate(provider));
            }
            let info = adapter.provider_info(provider);
            if info.id != *provider || info.name.is_empty() {
                return Err(LlmFailure::new(
                    codes::INVALID_ADAPTER,
                    format!(
                        "adapter metadata for provider \"{provider}\" must preserve its id and \
                         have a non-empty name"
                    ),
                ));
            }
            let policy = adapter.retry_policy(provider).unwrap_or_default();
            candidates.push((info, policy));
        }
        let registration = {
            let mut table = lock(&self.routes);
            if let Some((info, _)) = candidates
                .iter()
                .find(|(info, _)| table.find(&info.id).is_some())
            {
                return Err(duplicate(&info.id));
            }
            table.next_registration += 1;
            let registration = table.next_registration;
            for (info, retry_policy) in candidates {
                table.routes.push(Route {
                    registration,
                    info,
                    adapter: Arc::clone(&adapter),
                    retry_policy,
                });
            }
            registration
        };
        emit_updated(&self.ctx);
        let undo = {
            let routes = Arc::downgrade(&self.routes);
            let runtime_ctx = self.ctx.clone();
            move || {
                if unregister(&routes, registration) {
                    emit_updated(&runtime_ctx);
                }
            }
        };
        ctx.effect(undo).map_err(|error| {
            if unregister(&Arc::downgrade(&self.routes), registration) {
                emit_updated(&self.ctx);
            }
            LlmFailure::new(codes::INVALID_ADAPTER, error.to_string())
        })
    }

    /// The registered routes, in registration order.
    pub fn providers(&self) -> Vec<ProviderInfo> {
        lock(&self.routes)
            .routes
            .iter()
            .map(|route| route.info.clone())
            .collect()
    }

    /// Whether `provider` has an adapter.
    pub fn has_provider(&self, provider: &str) -> bool {
        lock(&self.routes).find(provider).is_some()
    }

    /// The retry policy captured when `provider` was registered; `NO_ADAPTER` for an
    /// unknown route.
    pub fn retry_policy(&self, provider: &str) -> Result<RetryPolicy, LlmFailure> {
        find(&self.routes, provider).map(|route| route.retry_policy)
    }

    /// The advisory model catalog of `provider`; `INVALID_CATALOG` when the adapter lists an
    /// empty or repeated id or an empty name.
    pub async fn list_models(&self, provider: &str) -> Result<Vec<ModelInfo>, LlmFailure> {
        let route = find(&self.routes, provider)?;
        let models = route.adapter.list_models(provider).await?;
        check_catalog(provider, &models)?;
        Ok(models)
    }

    /// Exact metadata of `model` on `provider`, validated (see [`LlmAdapter::prepare_call`]).
    pub async fn resolve_model(
        &self,
        provider: &str,
        model: &str,
        signal: &CancellationToken,
    ) -> Result<ModelInfo, LlmFailure> {
        let route = find(&self.routes, provider)?;
        let info = route.adapter.prepare_call(provider, model, signal).await?;
        normalize_model_info(provider, model, info)
    }

    /// `config` with the model's defaults filled in (see [`LlmRuntime::prepare_call`]),
    /// without pinning a registration.
    pub async fn resolve_call_config(
        &self,
        config: &LlmCallConfig,
        signal: &CancellationToken,
    ) -> Result<LlmCallConfig, LlmFailure> {
        let model = self
            .resolve_model(&config.provider, &config.model, signal)
            .await?;
        resolve_call_with_info(config, &model)
    }

    /// Resolves one call under the current registration of `config.provider` and pins it:
    /// the model's output cap fills an absent `maxTokens`, its default effort an absent
    /// `reasoningEffort`, and an effort the model does not offer is
    /// `UNSUPPORTED_REASONING_EFFORT` (no clamping). Unknown provider: `NO_ADAPTER`.
    ///
    /// The returned call streams once, through the same adapter even if the route is
    /// re-registered meanwhile, with the retry policy captured at its registration.
    pub async fn prepare_call(
        &self,
        config: LlmCallConfig,
        signal: &CancellationToken,
    ) -> Result<PreparedCall, LlmFailure> {
        let route = find(&self.routes, &config.provider)?;
        let info = route
            .adapter
            .prepare_call(&config.provider, &config.model, signal)
            .await?;
        let model = normalize_model_info(&config.provider, &config.model, info)?;
        let resolved = resolve_call_with_info(&config, &model)?;
        let adapter_defaults = AdapterDefaults {
            reasoning_effort: config.reasoning_effort.is_none()
                && resolved.reasoning_effort.is_some(),
            max_tokens: config.max_tokens.is_none() && resolved.max_tokens.is_some(),
        };
        Ok(PreparedCall {
            config: resolved,
            retry_policy: route.retry_policy.clone(),
            model,
            adapter_defaults,
            route,
            ctx: self.ctx.clone(),
            routes: Arc::clone(&self.routes),
            dispatched: AtomicBool::new(false),
        })
    }

    /// Streams one model call: the `llm/stream` waterfall (listeners may wrap or replace the
    /// stream) around the adapter of `options.provider`.
    ///
    /// The stream never fails and always ends with exactly one `finish`:
    /// - any adapter failure (no adapter, model resolution, an unsupported effort, dispatch,
    ///   an `Err` item, a panic) becomes `finish {kind: 'aborted'}` when `options.signal`
    ///   fired or the code is `ABORTED`, else `finish {kind: 'error'}`, and reading stops;
    /// - when `options.signal` fires while a chunk is awaited, the stream ends at once with
    ///   `aborted` (`ABORTED`, `LLM request aborted`);
    /// - nothing after the first `finish` is read or passed on (so `usage` can only come
    ///   before it), and a stream that ends without one gets `error` with code
    ///   `STREAM_CLOSED`.
    ///
    /// Before dispatch the request gets the model's defaults (as
    /// [`LlmRuntime::prepare_call`]), image blocks become text for a model whose modalities
    /// exclude images, and replay state is removed from assistant messages whose provider
    /// is served by a different adapter instance.
    pub fn stream(&self, options: GenerateOptions) -> ChunkStream {
        stream_with(&self.ctx, &self.routes, options, None)
    }
}

fn emit_updated(ctx: &Context) {
    if let Err(error) = ctx.emit::<AdaptersUpdated>(&()) {
        tracing::warn!("llm: an llm/adapters-updated listener failed: {error}");
    }
}
