//! The shared harness: a kernel with the agent loop, the host disk as `fs`, the plugin under
//! test, a scripted model that records its requests, a `read` tool, and a temporary project.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_agent_instructions::AgentInstructionsPlugin;
use dsh_agent_loop::{
    AGENTS, Agent, AgentLoopPlugin, AgentOptions, AgentRegistry, CreateAgentOptions,
    ResumeAgentOptions,
};
use dsh_fs::{DEFAULT_DIFF_BASIS_MAX_BYTES, FS, FileSystem, LocalDisk};
use dsh_kernel::{Context, Kernel};
use dsh_llm::{
    AdapterStream, ContentBlock, FinishReason, GenerateOptions, LLM, LlmAdapter, LlmFailure,
    LlmPlugin, Message, MessageSource, StreamChunk, TokenUsage, async_trait,
};
use dsh_persistence_jsonl::JsonlPersistencePlugin;
use dsh_session::{SessionEvent, SessionPlugin};
use dsh_system_prompt::{PromptContext, SYSTEM_PROMPT, SystemPromptPlugin};
use dsh_tools::{FnTool, TOOLS, ToolError, ToolOutput, ToolRunContext, ToolsPlugin};
use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

/// The runtime-context line the harness registers, so each first step logs a snapshot.
pub const POLICY: &str = "Current DSH file policy: test.";

/// A model answering each request with the next scripted reply (then `done`), recording
/// every request.
#[derive(Default)]
pub struct Scripted {
    script: Mutex<VecDeque<Vec<StreamChunk>>>,
    requests: Mutex<Vec<GenerateOptions>>,
}

impl Scripted {
    /// Every request so far.
    pub fn requests(&self) -> Vec<GenerateOptions> {
        self.requests.lock().unwrap().clone()
    }

    /// Queues replies.
    pub fn push(&self, replies: Vec<Vec<StreamChunk>>) {
        self.script.lock().unwrap().extend(replies);
    }
}

#[async_trait]
impl LlmAdapter for Scripted {
    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        self.requests.lock().unwrap().push(options);
        let reply = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| text_reply("done"));
        Ok(stream::iter(reply.into_iter().map(Ok)).boxed())
    }
}

fn usage() -> StreamChunk {
    StreamChunk::Usage {
        usage: TokenUsage {
            input_tokens: 10,
            output_tokens: 2,
            ..TokenUsage::default()
        },
    }
}

/// A text reply that ends the turn.
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
        usage(),
        StreamChunk::finish(FinishReason::Stop),
    ]
}

/// A reply calling `name` with `args`.
pub fn tool_reply(id: &str, name: &str, args: &Value) -> Vec<StreamChunk> {
    let arguments = args.to_string();
    vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "tool-call".into(),
        },
        StreamChunk::ToolCallDelta {
            index: 0,
            id: id.into(),
            name: Some(name.into()),
            arguments_delta: arguments.clone(),
        },
        StreamChunk::BlockEnd {
            index: 0,
            block: ContentBlock::tool_call(id, name, arguments),
        },
        usage(),
        StreamChunk::finish(FinishReason::ToolCalls),
    ]
}

/// The file a call names, taken from the caller's cwd.
fn target(args: &Value, run: &ToolRunContext) -> PathBuf {
    let cwd = run
        .caller
        .as_ref()
        .and_then(|caller| caller.session_header.as_ref())
        .and_then(|header| header.cwd.clone())
        .unwrap_or_default();
    Path::new(&cwd).join(args["file_path"].as_str().unwrap_or_default())
}

/// Small stand-ins for the file tools, on the real disk: `read` (fails on a missing file),
/// `write` (`file_path`, `content`), and `rm`, which is not a touch.
fn file_tools() -> Vec<FnTool> {
    let schema = json!({"type": "object", "properties": {
        "file_path": {"type": "string"},
        "content": {"type": "string"},
    }});
    vec![
        FnTool::new(
            "read",
            "Read a file.",
            schema.clone(),
            |args, run| async move {
                std::fs::read_to_string(target(&args, &run))
                    .map(ToolOutput::text)
                    .map_err(|error| ToolError::new(error.to_string()))
            },
        ),
        FnTool::new(
            "write",
            "Write a file.",
            schema.clone(),
            |args, run| async move {
                let path = target(&args, &run);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, args["content"].as_str().unwrap_or_default()).unwrap();
                Ok(ToolOutput::text("written"))
            },
        ),
        FnTool::new("rm", "Delete a file.", schema, |args, run| async move {
            std::fs::remove_file(target(&args, &run)).unwrap();
            Ok(ToolOutput::text("deleted"))
        }),
    ]
}

/// A temporary project (with `.git`) and harness home.
pub struct Project {
    /// The project directory.
    pub dir: tempfile::TempDir,
    /// The harness home (empty: no user-global file).
    pub home: tempfile::TempDir,
}

impl Project {
    /// A project holding `files` (`(path, text)`), with a `.git` directory.
    pub fn new(files: &[(&str, &str)]) -> Self {
        let project = Self {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(project.dir.path().join(".git")).unwrap();
        for (path, text) in files {
            project.write(path, text);
        }
        project
    }

    /// Writes `text` at `path` (relative to the project).
    pub fn write(&self, path: &str, text: &str) {
        let path = self.dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The absolute path of `relative` (the project itself for `""`).
    pub fn path(&self, relative: &str) -> String {
        let path: PathBuf = if relative.is_empty() {
            self.dir.path().to_owned()
        } else {
            self.dir.path().join(relative)
        };
        path.to_str().unwrap().to_owned()
    }

    /// The plugin config: `maxBytes` 65536, this project's home, and `extra`.
    pub fn config(&self, extra: Value) -> Value {
        let mut config = json!({"maxBytes": 65536, "dshHome": self.home.path()});
        if let (Some(map), Value::Object(extra)) = (config.as_object_mut(), extra) {
            map.extend(extra);
        }
        config
    }
}

/// What to boot.
pub struct Boot {
    /// The plugin's config (`None`: the plugin is not loaded).
    pub config: Option<Value>,
    /// Provide the host disk as `fs`.
    pub fs: bool,
    /// Keep sessions as JSONL under this directory.
    pub persistence: Option<PathBuf>,
}

/// A booted kernel.
pub struct Harness {
    /// The kernel.
    pub kernel: Kernel,
    /// Its root context.
    pub ctx: Context,
    /// The agents service.
    pub agents: Arc<AgentRegistry>,
    /// The model.
    pub model: Arc<Scripted>,
}

impl Harness {
    /// Boots the loop with a `read` tool, a runtime-context line, and what `boot` asks for.
    pub async fn boot(boot: Boot) -> Self {
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(SessionPlugin, json!({"invariants": true}))
            .unwrap();
        ctx.plugin(LlmPlugin, Value::Null).unwrap();
        ctx.plugin(ToolsPlugin, json!({})).unwrap();
        ctx.plugin(SystemPromptPlugin, json!({})).unwrap();
        if let Some(root) = &boot.persistence {
            ctx.plugin(JsonlPersistencePlugin, json!({"root": root}))
                .unwrap();
        }
        ctx.plugin(AgentLoopPlugin, json!({})).unwrap();
        if boot.fs {
            let disk: Arc<dyn FileSystem> =
                Arc::new(LocalDisk::new("/", DEFAULT_DIFF_BASIS_MAX_BYTES));
            ctx.provide(&FS, disk).unwrap();
        }
        if let Some(config) = boot.config {
            ctx.plugin(AgentInstructionsPlugin, config).unwrap();
        }
        kernel.settle().await;
        let model = Arc::new(Scripted::default());
        let llm = ctx.require(&LLM).unwrap();
        llm.register_adapter(&ctx, ["mock"], Arc::clone(&model) as Arc<dyn LlmAdapter>)
            .unwrap();
        let prompt = ctx.require(&SYSTEM_PROMPT).unwrap();
        prompt
            .context(&ctx, PromptContext::new("sandbox:policy", 110.0, POLICY))
            .unwrap();
        let tools = ctx.require(&TOOLS).unwrap();
        for tool in file_tools() {
            tools.register(&ctx, Arc::new(tool)).unwrap();
        }
        Self {
            agents: ctx.require(&AGENTS).unwrap(),
            kernel,
            ctx,
            model,
        }
    }

    /// A new agent on the mock route working in `cwd`.
    pub async fn agent(&self, id: &str, cwd: &str) -> Arc<Agent> {
        self.agents
            .create(CreateAgentOptions {
                session_id: Some(id.to_owned()),
                cwd: Some(cwd.to_owned()),
                agent_options: AgentOptions::route("mock", "m"),
                setup: None,
            })
            .await
            .unwrap()
    }

    /// The stored session `id`, resumed.
    pub async fn resume(&self, id: &str) -> Arc<Agent> {
        self.agents
            .resume(ResumeAgentOptions {
                session_id: id.to_owned(),
                agent_options: AgentOptions::route("mock", "m"),
                setup: None,
            })
            .await
            .unwrap()
    }

    /// Unloads everything.
    pub async fn shutdown(self) {
        self.kernel.shutdown().await;
    }
}

/// Runs one turn of `agent` on the prompt `text`.
pub async fn turn(agent: &Agent, text: &str) {
    let prompt = Message::user(vec![ContentBlock::text(text)], MessageSource::User);
    tokio::time::timeout(Duration::from_secs(20), agent.run_turn(prompt))
        .await
        .expect("the turn ends in time")
        .unwrap();
}

/// The agent's events.
pub fn events(agent: &Agent) -> Vec<Arc<SessionEvent>> {
    agent.session().events()
}

/// The `data` of every `user/message`, in order.
pub fn user_messages(agent: &Agent) -> Vec<Value> {
    events(agent)
        .iter()
        .filter(|event| event.kind == "user/message")
        .map(|event| (*event.data).clone())
        .collect()
}

/// The `user/message`s this plugin wrote.
pub fn instructions(agent: &Agent) -> Vec<Value> {
    user_messages(agent)
        .into_iter()
        .filter(|data| data["source"]["kind"] == "agent-instructions")
        .collect()
}

/// The joined texts of a message's content (JSON).
pub fn text_of(data: &Value) -> String {
    data["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect()
}

/// A kind-and-gist line per event: `user/message:user`, `user/message:agent-instructions`,
/// `step/start`...
pub fn outline(agent: &Agent) -> Vec<String> {
    events(agent)
        .iter()
        .filter(|event| event.kind != "assistant/chunk")
        .map(|event| match event.kind.as_ref() {
            "user/message" => {
                let source = &event.data["source"];
                let kind = source["kind"].as_str().unwrap_or_default();
                match source["plugin"].as_str() {
                    Some(plugin) => format!("user/message:{kind}:{plugin}"),
                    None => format!("user/message:{kind}"),
                }
            }
            kind => kind.to_owned(),
        })
        .collect()
}

/// The texts of a request's messages, one string per message.
pub fn request_texts(request: &GenerateOptions) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|message| {
            message
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect()
        })
        .collect()
}
