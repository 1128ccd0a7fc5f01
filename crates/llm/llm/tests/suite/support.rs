//! A booted kernel with the llm plugin, a scripted adapter and chunk builders.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use dsh_kernel::{Context, Kernel};
use dsh_llm::{
    AdapterStream, CancellationToken, ContentBlock, FinishReason, GenerateOptions, LLM, LlmAdapter,
    LlmFailure, LlmPlugin, LlmRuntime, ModelInfo, ProviderInfo, RetryPolicy, StreamChunk,
    TokenUsage, async_trait,
};
use futures_util::StreamExt;
use futures_util::stream;
use serde_json::Value;

/// A kernel with the `dsh-llm` plugin loaded.
pub struct Harness {
    pub kernel: Kernel,
    pub llm: Arc<LlmRuntime>,
}

impl Harness {
    pub async fn new() -> Self {
        let kernel = Kernel::new().unwrap();
        let fiber = kernel.root().plugin(LlmPlugin, Value::Null).unwrap();
        kernel.settle().await;
        kernel.audit(&[fiber.id()]).unwrap();
        let llm = kernel.root().require(&LLM).unwrap();
        Self { kernel, llm }
    }

    pub fn root(&self) -> Context {
        self.kernel.root()
    }

    /// Registers `adapter` on the root fiber for `providers`.
    pub fn register(&self, providers: &[&str], adapter: Arc<dyn LlmAdapter>) {
        self.llm
            .register_adapter(&self.root(), providers.iter().copied(), adapter)
            .unwrap();
    }

    /// Every chunk of one call.
    pub async fn collect(&self, options: GenerateOptions) -> Vec<StreamChunk> {
        self.llm.stream(options).collect().await
    }
}

/// A request for `provider` with model `m` and no messages.
pub fn request(provider: &str) -> GenerateOptions {
    GenerateOptions::new(provider, "m", Vec::new())
}

/// What one `stream` call of a [`Scripted`] adapter does.
pub enum Script {
    /// Fails before streaming.
    Fail(LlmFailure),
    /// Streams these items.
    Items(Vec<Result<StreamChunk, LlmFailure>>),
    /// Streams these items, then never ends.
    ThenHang(Vec<Result<StreamChunk, LlmFailure>>),
    /// Panics when called.
    Panic,
}

impl Script {
    /// A successful attempt streaming `chunks`.
    pub fn chunks(chunks: Vec<StreamChunk>) -> Self {
        Self::Items(chunks.into_iter().map(Ok).collect())
    }
}

/// An adapter that plays one script per call and records every request.
pub struct Scripted {
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<GenerateOptions>>,
    name: String,
    policy: Option<RetryPolicy>,
    model: Option<ModelInfo>,
}

impl Scripted {
    pub fn new(scripts: Vec<Script>) -> Self {
        Self {
            scripts: Mutex::new(scripts.into()),
            requests: Mutex::default(),
            name: String::new(),
            policy: None,
            model: None,
        }
    }

    pub fn arc(scripts: Vec<Script>) -> Arc<Self> {
        Arc::new(Self::new(scripts))
    }

    pub fn with_name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Answers `prepare_call` for `model.id` with `model`.
    pub fn with_model(mut self, model: ModelInfo) -> Self {
        self.model = Some(model);
        self
    }

    pub fn requests(&self) -> Vec<GenerateOptions> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl LlmAdapter for Scripted {
    fn provider_info(&self, provider: &str) -> ProviderInfo {
        if self.name.is_empty() {
            ProviderInfo::new(provider, provider)
        } else {
            ProviderInfo::new(provider, &self.name)
        }
    }

    fn retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        self.policy.clone()
    }

    async fn prepare_call(
        &self,
        _provider: &str,
        model: &str,
        _signal: &CancellationToken,
    ) -> Result<ModelInfo, LlmFailure> {
        Ok(self
            .model
            .clone()
            .filter(|known| known.id == model)
            .unwrap_or_else(|| ModelInfo::new(model)))
    }

    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        self.requests.lock().unwrap().push(options);
        let script = self.scripts.lock().unwrap().pop_front();
        match script {
            None => Err(LlmFailure::unknown("script exhausted")),
            Some(Script::Fail(failure)) => Err(failure),
            Some(Script::Items(items)) => Ok(stream::iter(items).boxed()),
            Some(Script::ThenHang(items)) => {
                Ok(stream::iter(items).chain(stream::pending()).boxed())
            }
            Some(Script::Panic) => panic!("adapter bug"),
        }
    }
}

/// A complete text reply.
pub fn text_reply(text: &str) -> Vec<StreamChunk> {
    vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "text".into(),
        },
        StreamChunk::TextDelta {
            index: 0,
            text: text.into(),
        },
        StreamChunk::BlockEnd {
            index: 0,
            block: ContentBlock::text(text),
        },
        StreamChunk::Usage {
            usage: TokenUsage {
                input_tokens: 3,
                output_tokens: 1,
                ..TokenUsage::default()
            },
        },
        StreamChunk::finish(FinishReason::Stop),
    ]
}

/// The failure of the last chunk, which must be a failed finish.
pub fn final_failure(chunks: &[StreamChunk]) -> (String, LlmFailure) {
    let reason = chunks.last().and_then(StreamChunk::finish_reason).unwrap();
    (reason.kind().to_owned(), reason.failure().unwrap().clone())
}
