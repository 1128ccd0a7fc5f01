//! The DeepSeek [`LlmAdapter`]: one HTTP request per `stream` call, read through the SSE
//! parser and the translator, under the attempt's time bounds ([`crate::deadline`]).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use dsh_kernel::error_chain;
use dsh_llm::{
    AdapterStream, GenerateOptions, LlmAdapter, LlmFailure, ModelInfo, ProviderInfo, Purpose,
    ReasoningInfo, RetryPolicy, StreamChunk, async_trait, codes, usable_api_key, user_agent,
};
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use tokio_util::sync::CancellationToken;

use crate::client::LazyClient;
use crate::config::{BASE_URL_ENV, DEFAULT_BASE_URL, DEFAULT_MODELS, DeepSeekConfig, Thinking};
use crate::deadline::{AttemptClock, Deadline, Timeouts};
use crate::errors::http_failure;
use crate::serialize::{RequestDefaults, build_request};
use crate::sse::{SseItem, SseParser};
use crate::translate::Translator;

/// The display name of the provider.
pub const PROVIDER_NAME: &str = "DeepSeek";

/// Reads one environment variable (injectable so tests need not touch the process's).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The DeepSeek chat-completions adapter.
///
/// The API key is read from the environment variable named by `apiKeyEnv` on every `stream`
/// call and is used only for the `authorization` header (marked sensitive); it is never
/// stored, logged, or put in a failure or `Debug` output.
pub struct DeepSeekAdapter {
    client: LazyClient,
    config: DeepSeekConfig,
    env: EnvLookup,
    retry_policy: RetryPolicy,
    timeouts: Timeouts,
}

impl fmt::Debug for DeepSeekAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeepSeekAdapter")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl DeepSeekAdapter {
    /// An adapter reading the process environment; its HTTP client starts building at once,
    /// in the background (a client that cannot be built fails each request, `TRANSPORT`).
    /// Fails (`INVALID_ADAPTER`) on an invalid `retryPolicy`, or a timeout
    /// (`headersTimeoutMs`, `streamIdleTimeoutMs`, `requestTimeoutMs`) outside 1 to
    /// 2147483647 ms.
    pub fn new(config: DeepSeekConfig) -> Result<Self, LlmFailure> {
        let retry_policy =
            RetryPolicy::from_config(config.retry_policy.as_ref(), "llm-deepseek.retryPolicy")
                .map_err(|message| LlmFailure::new(codes::INVALID_ADAPTER, message))?;
        let timeouts = Timeouts::from_config(&config)?;
        Ok(Self {
            client: LazyClient::prewarmed(),
            config,
            env: Arc::new(|name: &str| std::env::var(name).ok()),
            retry_policy,
            timeouts,
        })
    }

    /// Reads environment variables through `env` instead of the process environment.
    #[must_use]
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &DeepSeekConfig {
        &self.config
    }

    /// The base URL a request made now would use, without a trailing `/`.
    pub fn base_url(&self) -> String {
        let base = self
            .config
            .base_url
            .clone()
            .filter(|url| !url.trim().is_empty())
            .or_else(|| (self.env)(BASE_URL_ENV).filter(|url| !url.trim().is_empty()))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        base.trim().trim_end_matches('/').to_owned()
    }

    fn api_key(&self) -> Result<String, LlmFailure> {
        let name = self.config.api_key_env();
        let raw = (self.env)(name).unwrap_or_default();
        if raw.trim().is_empty() {
            return Err(LlmFailure::new(
                codes::MISSING_CREDENTIAL,
                format!("DeepSeek API key is missing: set {name}"),
            ));
        }
        usable_api_key(&raw, crate::PLUGIN_NAME, name).map(str::to_owned)
    }

    fn defaults(&self) -> RequestDefaults {
        RequestDefaults {
            thinking: self.config.thinking,
            reasoning_effort: Some(self.config.reasoning_effort().to_owned()),
        }
    }

    fn headers(&self, key: &str, options: &GenerateOptions) -> Result<HeaderMap, LlmFailure> {
        let invalid = |what: &str| {
            LlmFailure::new(
                codes::INVALID_REQUEST,
                format!("DeepSeek request header {what} is not a valid header value"),
            )
        };
        let mut headers = HeaderMap::new();
        let mut auth = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| invalid("authorization"))?;
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert(
            USER_AGENT,
            HeaderValue::from_str(&user_agent()).map_err(|_| invalid("user-agent"))?,
        );
        if let Some(session) = &options.session_id {
            headers.insert(
                "x-deepseek-harness-session-id",
                HeaderValue::from_str(session)
                    .map_err(|_| invalid("x-deepseek-harness-session-id"))?,
            );
        }
        if options.purpose == Some(Purpose::Compaction) {
            headers.insert("x-deepseek-harness-compact", HeaderValue::from_static("1"));
        }
        Ok(headers)
    }

    fn model_info(&self, id: &str) -> ModelInfo {
        let mut info = ModelInfo::new(id);
        if DEFAULT_MODELS.contains(&id) {
            info.name = id.to_owned();
            if id.ends_with("vision-exp") {
                info.input_modalities = Some(vec!["text".into(), "image".into()]);
            } else {
                info.input_modalities = Some(vec!["text".into()]);
            }
        }
        info.context_window = Some(self.config.default_context_window());
        info.max_output = Some(self.config.max_tokens());
        info.reasoning = Some(if self.config.thinking == Some(Thinking::Disabled) {
            ReasoningInfo::new(["off"], Some("off"))
        } else {
            ReasoningInfo::new(
                ["off", "low", "high", "max"],
                Some(self.config.reasoning_effort()),
            )
        });
        info
    }
}

/// A `TRANSPORT` failure: `what` and the cause chain of `error` (`…: error sending request:
/// client error (Connect): tcp connect error: Connection refused (os error 111)`).
///
/// The URL is taken out of `error` (`what` names the base URL already). The API key cannot
/// appear: it travels only in the `authorization` header, which no transport error prints.
fn transport_failure(what: &str, error: reqwest::Error) -> LlmFailure {
    let error = error.without_url();
    LlmFailure::new(codes::TRANSPORT, format!("{what}: {}", error_chain(&error)))
}

fn aborted() -> LlmFailure {
    LlmFailure::aborted("DeepSeek request aborted")
}

/// Waits for `future` unless `signal` fires (`ABORTED`) or `deadline` passes (`TIMEOUT`,
/// naming the bound).
async fn guarded<T>(
    future: impl Future<Output = T>,
    signal: &CancellationToken,
    deadline: Deadline,
) -> Result<T, LlmFailure> {
    tokio::select! {
        biased;
        () = signal.cancelled() => Err(aborted()),
        result = tokio::time::timeout_at(deadline.at, future) => {
            result.map_err(|_| deadline.failure())
        }
    }
}

#[async_trait]
impl LlmAdapter for DeepSeekAdapter {
    fn provider_info(&self, provider: &str) -> ProviderInfo {
        ProviderInfo::new(provider, PROVIDER_NAME)
    }

    fn retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        Some(self.retry_policy.clone())
    }

    async fn list_models(&self, _provider: &str) -> Result<Vec<ModelInfo>, LlmFailure> {
        Ok(DEFAULT_MODELS
            .iter()
            .map(|id| self.model_info(id))
            .collect())
    }

    async fn prepare_call(
        &self,
        _provider: &str,
        model: &str,
        _signal: &CancellationToken,
    ) -> Result<ModelInfo, LlmFailure> {
        Ok(self.model_info(model))
    }

    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        let signal = options.signal.clone();
        if signal.is_cancelled() {
            return Err(aborted());
        }
        let key = self.api_key()?;
        let base_url = self.base_url();
        let body = build_request(&options, &self.defaults())?;
        let headers = self.headers(&key, &options)?;
        drop(key);
        let body = serde_json::to_vec(&body).map_err(|error| {
            LlmFailure::new(
                codes::INVALID_REQUEST,
                format!("cannot encode the request: {error}"),
            )
        })?;
        let clock = self.timeouts.start();
        let url = format!("{base_url}/chat/completions");
        let send = async {
            let client = self.client.get().await?;
            let sent = client.post(url).headers(headers).body(body).send().await;
            sent.map_err(|error| {
                transport_failure(&format!("DeepSeek API request to {base_url} failed"), error)
            })
        };
        let response = guarded(send, &signal, clock.headers()).await??;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = guarded(response.text(), &signal, clock.data())
                .await?
                .unwrap_or_default();
            return Err(http_failure(
                status.as_u16(),
                &headers,
                &text,
                SystemTime::now(),
            ));
        }
        let reader = Reader {
            body: response.bytes_stream().boxed(),
            parser: SseParser::new(),
            translator: Some(Translator::new()),
            items: Vec::new(),
            chunks: VecDeque::new(),
            signal,
            clock,
            base_url,
            finished: false,
        };
        Ok(stream::unfold(reader, |mut reader| async move {
            reader.next().await.map(|item| (item, reader))
        })
        .boxed())
    }
}

/// The state of one response body being read.
struct Reader {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    parser: SseParser,
    translator: Option<Translator>,
    items: Vec<SseItem>,
    chunks: VecDeque<StreamChunk>,
    signal: CancellationToken,
    clock: AttemptClock,
    base_url: String,
    finished: bool,
}

impl Reader {
    fn fail(&mut self, failure: LlmFailure) -> Option<Result<StreamChunk, LlmFailure>> {
        self.finished = true;
        self.chunks.clear();
        Some(Err(failure))
    }

    /// The next chunk. The wait is bounded by the idle window, re-armed only by data events
    /// (not comments or blank lines), and by the attempt's overall deadline.
    async fn next(&mut self) -> Option<Result<StreamChunk, LlmFailure>> {
        let mut deadline = self.clock.data();
        loop {
            if let Some(chunk) = self.chunks.pop_front() {
                return Some(Ok(chunk));
            }
            if self.finished {
                return None;
            }
            let read = guarded(self.body.next(), &self.signal, deadline).await;
            let bytes = match read {
                Err(failure) => return self.fail(failure),
                Ok(None) => {
                    let failure = self
                        .parser
                        .finish()
                        .err()
                        .unwrap_or_else(crate::sse::stream_closed);
                    return self.fail(failure);
                }
                Ok(Some(Err(error))) => {
                    let what = format!("DeepSeek API stream from {} failed", self.base_url);
                    return self.fail(transport_failure(&what, error));
                }
                Ok(Some(Ok(bytes))) => bytes,
            };
            self.items.clear();
            self.parser.feed(&bytes, &mut self.items);
            // `chunks` is empty here (all were yielded above): the translator appends to its
            // buffer as a `Vec`, and both conversions keep the buffer without copying.
            let mut out = Vec::from(std::mem::take(&mut self.chunks));
            let mut failed = None;
            let mut got_data = false;
            for item in self.items.drain(..) {
                match item {
                    // Keep-alive comments say the connection is up, not that the model is.
                    SseItem::Comment => {}
                    SseItem::Data(payload) => {
                        if let Some(translator) = self.translator.as_mut() {
                            if let Err(failure) = translator.push(&payload, &mut out) {
                                failed = Some(failure);
                                break;
                            }
                            got_data = true;
                        }
                    }
                    SseItem::Done => {
                        if let Some(translator) = self.translator.take() {
                            translator.done(&mut out);
                        }
                        self.finished = true;
                    }
                }
            }
            if let Some(failure) = failed {
                return self.fail(failure);
            }
            if got_data {
                deadline = self.clock.data();
            }
            self.chunks = VecDeque::from(out);
        }
    }
}
