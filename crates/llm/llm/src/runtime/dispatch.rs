//! Dispatching one call: the `llm/stream` waterfall with the adapter boundary at its end,
//! where the adapter is selected, the request gets the model's defaults and is adjusted to
//! the model (images, foreign replay state), and every failure becomes one terminal finish.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use dsh_kernel::Context;
use dsh_kernel::sync::lock;
use futures_util::FutureExt;
use futures_util::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;

use super::checks::{normalize_model_info, resolve_call_with_info};
use super::contract::enforce_contract;
use super::routes::{Route, Shared, find, same_adapter};
use crate::adapter::{AdapterStream, ChunkStream, LlmAdapter};
use crate::content::{content_has_image, project_images_for_text_model};
use crate::events::LlmStreamEvent;
use crate::failure::{LlmFailure, codes, failure_finish, panic_failure};
use crate::model::ModelInfo;
use crate::options::{GenerateOptions, LlmCallConfig};
use crate::types::{Message, MessageSource, Role, StreamChunk};

/// `INVALID_PREPARED_CALL` for a prepared call whose config changed before dispatch.
pub(super) fn config_drift() -> LlmFailure {
    LlmFailure::new(
        codes::INVALID_PREPARED_CALL,
        "prepared LLM call config changed before adapter dispatch",
    )
}

/// What a prepared call fixed before dispatch.
pub(super) struct Pinned {
    pub(super) route: Route,
    pub(super) config: LlmCallConfig,
    pub(super) model: ModelInfo,
}

/// Streams `options` through the `llm/stream` waterfall, the adapter boundary at its end
/// (through the `pinned` route of a prepared call, else the provider's current one), under the
/// stream contract.
pub(super) fn stream_with(
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
                            let failure = panic_failure("LLM adapter", panic.as_ref());
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
            let failure = panic_failure("LLM adapter", panic.as_ref());
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
    let carries_state = |message: &Message| {
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
