//! A booted kernel with the system-prompt plugin, and a probe plugin that owns registrations.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_kernel::{
    BoxError, ConfigSource, Context, FiberHandle, FiberLabel, Kernel, Mount, Plugin, ServiceName,
};
use dsh_system_prompt::{
    AssembleContext, HARNESS_IDENTITY_SECTION, PERSONA_SECTION, PromptAssembly, PromptError,
    SYSTEM_PROMPT, SystemPrompt, SystemPromptPlugin, ToolSchema,
};
use serde_json::{Value, json};

/// The arguments of a `system-prompt/assemble` listener.
pub type Args = (PromptAssembly, AssembleContext);
/// The rest of a `system-prompt/assemble` chain.
pub type AssembleNext = dsh_kernel::Next<Args, Result<PromptAssembly, PromptError>>;

pub const IDENTITY: &str = "You are an AI agent powered by DeepSeek Harness.";

/// A kernel with the `dsh-system-prompt` plugin loaded.
pub struct Harness {
    pub kernel: Kernel,
    pub prompt: Arc<SystemPrompt>,
}

impl Harness {
    pub async fn new() -> Self {
        Self::with(Value::Null).await
    }

    pub async fn with(config: Value) -> Self {
        let kernel = Kernel::new().unwrap();
        let fiber = kernel.root().plugin(SystemPromptPlugin, config).unwrap();
        kernel.settle().await;
        kernel.audit(&[fiber.id()]).unwrap();
        let prompt = kernel.root().require(&SYSTEM_PROMPT).unwrap();
        Self { kernel, prompt }
    }

    pub fn root(&self) -> Context {
        self.kernel.root()
    }

    pub async fn assemble(&self) -> PromptAssembly {
        self.prompt
            .assemble(&AssembleContext::default())
            .await
            .unwrap()
    }

    pub async fn assemble_err(&self) -> String {
        self.prompt
            .assemble(&AssembleContext::default())
            .await
            .unwrap_err()
            .0
    }
}

/// Why the plugin failed to start with `config`.
pub async fn load_error(config: Value) -> String {
    let kernel = Kernel::new().unwrap();
    let fiber = kernel.root().plugin(SystemPromptPlugin, config).unwrap();
    kernel.settle().await;
    let error = fiber.error().expect("the plugin should fail");
    kernel.shutdown().await;
    error
}

/// The sections other than the plugin's built-ins.
pub fn contributed(assembly: &PromptAssembly) -> Vec<(&str, &str)> {
    assembly
        .sections
        .iter()
        .filter(|s| s.name != HARNESS_IDENTITY_SECTION && s.name != PERSONA_SECTION)
        .map(|s| (s.name.as_str(), s.text.as_str()))
        .collect()
}

pub fn section_names(assembly: &PromptAssembly) -> Vec<&str> {
    assembly.sections.iter().map(|s| s.name.as_str()).collect()
}

pub fn tool_names(assembly: &PromptAssembly) -> Vec<&str> {
    assembly.tools.iter().map(|t| t.name.as_str()).collect()
}

pub fn tool(name: &str) -> ToolSchema {
    described(name, name)
}

pub fn described(name: &str, description: &str) -> ToolSchema {
    ToolSchema {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

/// A shared counter.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn bump(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

type ApplyFuture = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;
type Apply = Arc<dyn Fn(Context) -> ApplyFuture + Send + Sync>;

/// A plugin whose `apply` is a closure; it injects `systemPrompt`.
pub struct Probe(Apply);

impl Plugin for Probe {
    type Config = Value;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SYSTEM_PROMPT.name()] }
    }

    async fn apply(&self, ctx: Context, _config: Value) -> Result<(), BoxError> {
        (self.0)(ctx).await
    }
}

/// Mounts a probe plugin under the root as row `row` and waits for it to start.
pub async fn mount_probe<F, Fut>(harness: &Harness, row: &str, apply: F) -> FiberHandle
where
    F: Fn(Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    let fiber = harness
        .root()
        .mount(Mount {
            label: FiberLabel::row(row, format!("test-{row}")),
            plugin: Arc::new(Probe(Arc::new(move |ctx| Box::pin(apply(ctx))))),
            inject: Vec::new(),
            config: ConfigSource::Value(Value::Null),
        })
        .unwrap();
    harness.kernel.settle().await;
    harness.kernel.audit(&[fiber.id()]).unwrap();
    fiber
}
