//! The `llm` service: the adapter registry and the streaming call API (dsh's `LlmRuntime`).

use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use dsh_kernel::{Context, Disposer, ServiceKey};
use dsh_protocol::json::MAX_SAFE_INTEGER;
use futures_util::FutureExt;
use futures_util::future::{Either, select};
use futures_util::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::adapter::{AdapterStream, ChunkStream, LlmAdapter};
use crate::content::{content_has_image, project_images_for_text_model};
use crate::events::{AdaptersUpdated, LlmStreamEvent};
use crate::failure::{LlmFailure, codes};
use crate::model::{ModelInfo, ProviderInfo};
use crate::options::{AdapterDefaults, GenerateOptions, LlmCallConfig};
use crate::retry::RetryPolicy;
use crate::types::{FinishReason, MessageSource, Role, StreamChunk};

/// The LLM service, `llm` (dsh's `ctx.llm`).
pub const LLM: ServiceKey<LlmRuntime> = ServiceKey::new("llm");

/// One provider route.
#[derive(Clone)]
struct Route {
    registration: u64,
    info: ProviderInfo,
    adapter: Arc<dyn LlmAdapter>,
    retry_policy: RetryPolicy,
}

#[derive(Default)]
struct Routes {
    next_registration: u64,
    routes: Vec<Route>,
}

impl Routes {
    fn find(&self, provider: &str) -> Option<&Route> {
        self.routes.iter().find(|route| route.info.id == provider)
    }
}

type Shared = Arc<Mutex<Routes>>;

fn lock(routes: &Mutex<Routes>) -> MutexGuard<'_, Routes> {
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

fn find(routes: &Mutex<Routes>, provider: &str) -> Result<Route, LlmFailure> {
    lock(routes)
        .find(provider)
        .cloned()
        .ok_or_else(|| LlmFailure::no_adapter(provider))
}

fn same_adapter(a: &Arc<dyn LlmAdapter>, b: &Arc<dyn LlmAdapter>) -> bool {
    std::ptr::eq(Arc::as_ptr(a).cast::<()>(), Arc::as_ptr(b).cast::<()>())
}

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
        let mut seen: Vec<&str> = Vec::with_capacity(models.len());
        for model in &models {
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

fn duplicate(provider: &str) -> LlmFailure {
    LlmFailure::new(
        codes::DUPLICATE_ADAPTER,
        format!("an adapter for provider \"{provider}\" is already registered"),
    )
}

/// Removes the routes of `registration`; whether any were there.
fn unregister(routes: &Weak<Mutex<Routes>>, registration: u64) -> bool {
    let Some(routes) = routes.upgrade() else {
        return false;
    };
    let removed: Vec<Route> = {
        let mut table = lock(&routes);
        let (removed, kept) = std::mem::take(&mut table.routes)
            .into_iter()
            .partition(|route| route.registration == registration);
        table.routes = kept;
        removed
    };
    // Adapters may run arbitrary code when dropped; not under the lock.
    let any = !removed.is_empty();
    drop(removed);
    any
}

fn emit_updated(ctx: &Context) {
    if let Err(error) = ctx.emit::<AdaptersUpdated>(&()) {
        tracing::warn!("llm: an llm/adapters-updated listener failed: {error}");
    }
}

/// One call resolved under a pinned registration ([`LlmRuntime::prepare_call`]).
pub struct PreparedCall {
    config: LlmCallConfig,
    retry_policy: RetryPolicy,
    model: ModelInfo,
    adapter_defaults: AdapterDefaults,
    route: Route,
    ctx: Context,
    routes: Shared,
    dispatched: AtomicBool,
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

    /// Streams the call once, like [`LlmRuntime::stream`] but through the pinned adapter.
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

fn config_drift() -> LlmFailure {
    LlmFailure::new(
        codes::INVALID_PREPARED_CALL,
        "prepared LLM call config changed before adapter dispatch",
    )
}

/// What a prepared call fixed before dispatch.
struct Pinned {
    route: Route,
    config: LlmCallConfig,
    model: ModelInfo,
}

fn stream_with(
    ctx: &Context,
    routes: &Shared,
    options: GenerateOptions,
    pinned: Option<Pinned>,
) -> ChunkStream {
    let signal = options.signal.clone();
    let routes = Arc::clone(routes);
    let chain = ctx.waterfall::<LlmStreamEvent, _, _>(options, move |options| async move {
        adapter_boundary(routes, options, pinned)
    });
    enforce_contract(stream::once(chain).flatten().boxed(), signal)
}

/// The terminal finish for `failure`: `aborted` when the signal fired or the code is
/// `ABORTED`, else `error` (dsh's `adapterFailureChunk`).
pub(crate) fn failure_finish(failure: LlmFailure, signal: &CancellationToken) -> StreamChunk {
    let failure = failure.normalized();
    let reason = if signal.is_cancelled() || failure.is(codes::ABORTED) {
        FinishReason::Aborted { failure }
    } else {
        FinishReason::Error { failure }
    };
    StreamChunk::finish(reason)
}

enum Boundary {
    Open(Box<(GenerateOptions, Option<Pinned>)>),
    Reading(AdapterStream),
    Done,
}

/// The final adapter boundary: selection, dispatch and iteration failures (panics too)
/// become one terminal finish, after which the adapter is not read again.
fn adapter_boundary(
    routes: Shared,
    options: GenerateOptions,
    pinned: Option<Pinned>,
) -> ChunkStream {
    let signal = options.signal.clone();
    stream::unfold(
        (Boundary::Open(Box::new((options, pinned))), routes, signal),
        |(state, routes, signal)| async move {
            match state {
                Boundary::Open(request) => {
                    let (options, pinned) = *request;
                    let opened = AssertUnwindSafe(open(&routes, options, pinned))
                        .catch_unwind()
                        .await;
                    match opened {
                        Ok(Ok(adapter)) => read(adapter, routes, signal).await,
                        Ok(Err(failure)) => Some((
                            failure_finish(failure, &signal),
                            (Boundary::Done, routes, signal),
                        )),
                        Err(panic) => {
                            let failure =
                                crate::failure::panic_failure("LLM adapter", panic.as_ref());
                            Some((
                                failure_finish(failure, &signal),
                                (Boundary::Done, routes, signal),
                            ))
                        }
                    }
                }
                Boundary::Reading(adapter) => read(adapter, routes, signal).await,
                Boundary::Done => None,
            }
        },
    )
    .boxed()
}

async fn read(
    mut adapter: AdapterStream,
    routes: Shared,
    signal: CancellationToken,
) -> Option<(StreamChunk, (Boundary, Shared, CancellationToken))> {
    let item = AssertUnwindSafe(adapter.next()).catch_unwind().await;
    match item {
        Ok(Some(Ok(chunk))) => Some((chunk, (Boundary::Reading(adapter), routes, signal))),
        Ok(Some(Err(failure))) => Some((
            failure_finish(failure, &signal),
            (Boundary::Done, routes, signal),
        )),
        Ok(None) => None,
        Err(panic) => {
            let failure = crate::failure::panic_failure("LLM adapter", panic.as_ref());
            Some((
                failure_finish(failure, &signal),
                (Boundary::Done, routes, signal),
            ))
        }
    }
}

/// Selects the adapter, resolves the model's defaults, adjusts the request and dispatches.
async fn open(
    routes: &Shared,
    mut options: GenerateOptions,
    pinned: Option<Pinned>,
) -> Result<AdapterStream, LlmFailure> {
    let (route, model, config) = match pinned {
        Some(pinned) => {
            if options.call_config() != pinned.config {
                return Err(config_drift());
            }
            (pinned.route, pinned.model, pinned.config)
        }
        None => {
            let route = find(routes, &options.provider)?;
            let info = route
                .adapter
                .prepare_call(&options.provider, &options.model, &options.signal)
                .await?;
            let model = normalize_model_info(&options.provider, &options.model, info)?;
            let config = resolve_call_with_info(&options.call_config(), &model)?;
            (route, model, config)
        }
    };
    options.set_call_config(&config);
    if model.accepts_images() == Some(false)
        && options
            .messages
            .iter()
            .any(|message| content_has_image(&message.content))
    {
        project_images_for_text_model(&mut options.messages);
    }
    strip_foreign_replay_state(routes, &route.adapter, &mut options);
    route.adapter.stream(options).await
}

/// Removes replay state from historical assistant messages whose provider is not served by
/// `target` (replay state is private to one adapter instance).
fn strip_foreign_replay_state(
    routes: &Shared,
    target: &Arc<dyn LlmAdapter>,
    options: &mut GenerateOptions,
) {
    let carries_state = |message: &crate::types::Message| {
        message.role == Role::Assistant
            && matches!(
                &message.source,
                MessageSource::Model {
                    replay_state: Some(_),
                    ..
                }
            )
    };
    if !options.messages.iter().any(carries_state) {
        return;
    }
    let owners: Vec<(String, Arc<dyn LlmAdapter>)> = lock(routes)
        .routes
        .iter()
        .map(|route| (route.info.id.clone(), Arc::clone(&route.adapter)))
        .collect();
    for message in &mut options.messages {
        if message.role != Role::Assistant {
            continue;
        }
        if let MessageSource::Model {
            provider,
            replay_state,
            ..
        } = &mut message.source
        {
            let same = owners
                .iter()
                .any(|(id, adapter)| id == provider && same_adapter(adapter, target));
            if !same {
                *replay_state = None;
            }
        }
    }
}

/// Validates an adapter's exact-model metadata as dsh does (`normalizeModelInfo`).
fn normalize_model_info(
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
fn resolve_call_with_info(
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

enum Pulled {
    Item(std::thread::Result<Option<StreamChunk>>),
    Cancelled,
}

/// The stream contract on what the outermost `llm/stream` listener returns: one terminal
/// finish, nothing after it, prompt cancellation, and panics turned into failures.
fn enforce_contract(inner: ChunkStream, signal: CancellationToken) -> ChunkStream {
    stream::unfold((Some(inner), signal), |(state, signal)| async move {
        let mut inner = state?;
        let pulled = {
            let next = pin!(AssertUnwindSafe(inner.next()).catch_unwind());
            let cancelled = pin!(signal.cancelled());
            match select(next, cancelled).await {
                Either::Left((item, _)) => Pulled::Item(item),
                Either::Right(_) => Pulled::Cancelled,
            }
        };
        let chunk = match pulled {
            Pulled::Item(Ok(Some(chunk))) => {
                let next = if matches!(chunk, StreamChunk::Finish { .. }) {
                    None
                } else {
                    Some(inner)
                };
                return Some((chunk, (next, signal)));
            }
            Pulled::Item(Ok(None)) => failure_finish(
                LlmFailure::new(
                    codes::STREAM_CLOSED,
                    "LLM stream ended without a finish chunk",
                ),
                &signal,
            ),
            Pulled::Item(Err(panic)) => failure_finish(
                crate::failure::panic_failure("LLM stream", panic.as_ref()),
                &signal,
            ),
            Pulled::Cancelled => StreamChunk::finish(FinishReason::Aborted {
                failure: LlmFailure::aborted("LLM request aborted"),
            }),
        };
        Some((chunk, (None, signal)))
    })
    .boxed()
}
