//! A booted kernel with the tools plugin, tools built from closures, and a probe plugin.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_kernel::{
    BoxError, ConfigSource, Context, FiberHandle, FiberLabel, Kernel, Mount, Plugin, ServiceName,
};
use dsh_tools::{
    CancellationToken, FnTool, TOOLS, ToolExecutionInput, ToolOutput, ToolRegistry, ToolsPlugin,
};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// A kernel with the `dsh-tools` plugin loaded.
pub struct Harness {
    pub kernel: Kernel,
    pub tools: Arc<ToolRegistry>,
}

impl Harness {
    pub async fn new() -> Self {
        let kernel = Kernel::new().unwrap();
        let fiber = kernel.root().plugin(ToolsPlugin, Value::Null).unwrap();
        kernel.settle().await;
        kernel.audit(&[fiber.id()]).unwrap();
        let tools = kernel.root().require(&TOOLS).unwrap();
        Self { kernel, tools }
    }

    pub fn root(&self) -> Context {
        self.kernel.root()
    }

    /// Registers `tool` on the root fiber.
    pub fn add(&self, tool: FnTool) {
        self.tools.register(&self.root(), Arc::new(tool)).unwrap();
    }
}

/// `{"text": string (required), "n": number}`.
pub fn echo_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "n": {"type": "number"}},
        "required": ["text"]
    })
}

/// `echo`: returns its `text` argument; counts its runs.
pub fn echo(runs: &Counter) -> FnTool {
    let runs = runs.clone();
    FnTool::new(
        "echo",
        "Echo the text back.",
        echo_parameters(),
        move |args, _run| {
            runs.bump();
            async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) }
        },
    )
}

/// A call with a fresh signal.
pub fn call(name: &str, arguments: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("call-1", name, arguments, CancellationToken::new())
}

/// A shared counter.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A log shared between listeners.
#[derive(Clone)]
pub struct Log<T>(Arc<Mutex<Vec<T>>>);

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

impl<T: Clone> Log<T> {
    pub fn push(&self, entry: T) {
        self.0.lock().unwrap().push(entry);
    }

    pub fn entries(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }
}

type Apply = Arc<dyn Fn(Context) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

/// A plugin whose `apply` is a closure; it injects `tools`.
pub struct Probe(Apply);

impl Plugin for Probe {
    type Config = Value;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name()] }
    }

    async fn apply(&self, ctx: Context, _config: Value) -> Result<(), BoxError> {
        (self.0)(ctx).await
    }
}

/// Mounts a probe plugin under the root as row `row`.
pub fn mount_probe<F, Fut>(root: &Context, row: &str, apply: F) -> FiberHandle
where
    F: Fn(Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    root.mount(Mount {
        label: FiberLabel::row(row, format!("test-{row}")),
        plugin: Arc::new(Probe(Arc::new(move |ctx| Box::pin(apply(ctx))))),
        inject: Vec::new(),
        config: ConfigSource::Value(Value::Null),
    })
    .unwrap()
}

/// The rest of a `tools/pre-execute` chain.
pub type PreNext = dsh_kernel::Next<
    dsh_tools::ToolExecution,
    Result<dsh_tools::PreToolDecision, dsh_tools::ToolError>,
>;
/// The rest of a `tools/execute` chain.
pub type ExecNext = dsh_kernel::Next<
    dsh_tools::ToolDispatch,
    Result<dsh_tools::ToolExecutionResult, dsh_tools::ToolError>,
>;
/// The rest of a `tools/post-execute` chain.
pub type PostNext = dsh_kernel::Next<
    Arc<dsh_tools::PostExecute>,
    Result<dsh_tools::PostToolDecision, dsh_tools::ToolError>,
>;
