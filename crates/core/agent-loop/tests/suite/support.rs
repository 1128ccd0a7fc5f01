//! The shared harness: a kernel with the loop's plugins, a scripted model adapter that
//! records every request, small tools, and readers of the session log.

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_agent_loop::{
    AGENTS, Agent, AgentLoopPlugin, AgentOptions, AgentRegistry, CreateAgentOptions, LlmRetryPlugin,
};
use dsh_kernel::sync::lock;
use dsh_kernel::{Context, Kernel};
use dsh_llm::{
    AdapterStream, ContentBlock, FinishReason, GenerateOptions, LLM, LlmAdapter, LlmFailure,
    LlmPlugin, Message, MessageSource, RetryPolicy, StreamChunk, TokenUsage, async_trait,
};
use dsh_persistence_jsonl::JsonlPersistencePlugin;
use dsh_session::{SESSIONS, SessionEvent, SessionPlugin, SessionStore};
use dsh_system_prompt::{SYSTEM_PROMPT, SystemPrompt, SystemPromptPlugin};
use dsh_tools::{FnTool, TOOLS, ToolOutput, ToolRegistry, ToolsPlugin};
use futures_util::StreamExt;
use futures_util::stream;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// How long any single wait in a test may take before it counts as a hang.
pub const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------
// The scripted adapter

/// One scripted model reply.
pub enum Reply {
    /// Streams these chunks.
    Chunks(Vec<StreamChunk>),
    /// Streams these chunks, then waits until the request is cancelled (announcing the wait
    /// on [`Scripted::wait_hung`]).
    Hang(Vec<StreamChunk>),
    /// Waits until the gate is notified, then streams the chunks.
    Gated(Arc<Notify>, Vec<StreamChunk>),
    /// Fails before streaming.
    Fail(LlmFailure),
}

/// Computes a reply when the script is exhausted: `(request index, request)`.
pub type Fallback = Arc<dyn Fn(usize, &GenerateOptions) -> Vec<StreamChunk> + Send + Sync>;

/// A model adapter driven by a script: each request takes the next reply. Records every
/// request it receives.
pub struct Scripted {
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Option<Fallback>>,
    requests: Mutex<Vec<GenerateOptions>>,
    hung: Arc<Notify>,
    retry_policy: Option<RetryPolicy>,
}

impl Scripted {
    /// An adapter answering with `script`, then failing with `script exhausted`.
    pub fn new(script: Vec<Reply>, retry_policy: Option<RetryPolicy>) -> Self {
        Self {
            script: Mutex::new(script.into()),
            fallback: Mutex::new(None),
            requests: Mutex::default(),
            hung: Arc::new(Notify::new()),
            retry_policy,
        }
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.script).push_back(reply);
    }

    /// Answers every request past the script with `fallback`.
    pub fn set_fallback(&self, fallback: Fallback) {
        *lock(&self.fallback) = Some(fallback);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<GenerateOptions> {
        lock(&self.requests).clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        lock(&self.requests).len()
    }

    /// Waits until a [`Reply::Hang`] streamed its chunks and waits for cancellation.
    pub async fn wait_hung(&self) {
        within("the adapter to hang", self.hung.notified()).await;
    }
}

#[async_trait]
impl LlmAdapter for Scripted {
    fn retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        self.retry_policy.clone()
    }

    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        let index = {
            let mut requests = lock(&self.requests);
            requests.push(options.clone());
            requests.len() - 1
        };
        let next = lock(&self.script).pop_front();
        let reply = match next {
            Some(reply) => reply,
            None => match lock(&self.fallback).clone() {
                Some(fallback) => Reply::Chunks(fallback(index, &options)),
                None => Reply::Fail(LlmFailure::new("SCRIPT", "script exhausted")),
            },
        };
        Ok(match reply {
            Reply::Chunks(chunks) => stream::iter(chunks.into_iter().map(Ok)).boxed(),
            Reply::Hang(chunks) => {
                let hung = Arc::clone(&self.hung);
                let signal = options.signal;
                let wait = stream::once(async move {
                    hung.notify_one();
                    signal.cancelled().await;
                    Err(LlmFailure::aborted("aborted"))
                });
                stream::iter(chunks.into_iter().map(Ok)).chain(wait).boxed()
            }
            Reply::Gated(gate, chunks) => {
                let opened = stream::once(async move { gate.notified().await })
                    .filter_map(|()| std::future::ready(None));
                opened
                    .chain(stream::iter(chunks.into_iter().map(Ok)))
                    .boxed()
            }
            Reply::Fail(failure) => return Err(failure),
        })
    }
}

// ---------------------------------------------------------------------------------------
// Chunk scripts

fn usage(output_tokens: u64) -> StreamChunk {
    StreamChunk::Usage {
        usage: TokenUsage {
            input_tokens: 10,
            output_tokens,
            ..TokenUsage::default()
        },
    }
}

/// The chunks of one text block at `index`, one delta per character.
pub fn text_block(index: u64, text: &str) -> Vec<StreamChunk> {
    let mut chunks = vec![StreamChunk::BlockStart {
        index,
        block_type: "text".into(),
    }];
    chunks.extend(text.chars().map(|c| StreamChunk::TextDelta {
        index,
        text: c.to_string(),
    }));
    chunks.push(StreamChunk::BlockEnd {
        index,
        block: ContentBlock::text(text),
    });
    chunks
}

/// The chunks of one tool-call block at `index`; the arguments arrive in two deltas.
pub fn tool_block(index: u64, id: &str, name: &str, args: &Value) -> Vec<StreamChunk> {
    let arguments = args.to_string();
    let split = arguments.len().min(3);
    let (head, tail) = arguments.split_at(split);
    vec![
        StreamChunk::BlockStart {
            index,
            block_type: "tool-call".into(),
        },
        StreamChunk::ToolCallDelta {
            index,
            id: id.into(),
            name: Some(name.into()),
            arguments_delta: head.into(),
        },
        StreamChunk::ToolCallDelta {
            index,
            id: id.into(),
            name: None,
            arguments_delta: tail.into(),
        },
        StreamChunk::BlockEnd {
            index,
            block: ContentBlock::tool_call(id, name, arguments.clone()),
        },
    ]
}

/// A complete text reply that stops.
pub fn text_reply(text: &str) -> Vec<StreamChunk> {
    let mut chunks = text_block(0, text);
    chunks.push(usage(u64::try_from(text.len()).unwrap_or(0)));
    chunks.push(StreamChunk::finish(FinishReason::Stop));
    chunks
}

/// A reply asking for `calls` (`(id, name, arguments)`), optionally after some text.
pub fn tool_reply(text: Option<&str>, calls: &[(&str, &str, Value)]) -> Vec<StreamChunk> {
    let mut chunks = Vec::new();
    let mut index = 0;
    if let Some(text) = text {
        chunks.extend(text_block(index, text));
        index += 1;
    }
    for (id, name, args) in calls {
        chunks.extend(tool_block(index, id, name, args));
        index += 1;
    }
    chunks.push(usage(5));
    chunks.push(StreamChunk::finish(FinishReason::ToolCalls));
    chunks
}

/// `chunks` with their finish replaced by `max-tokens`.
pub fn cut_off(mut chunks: Vec<StreamChunk>) -> Vec<StreamChunk> {
    if let Some(last) = chunks.last_mut() {
        *last = StreamChunk::finish(FinishReason::MaxTokens);
    }
    chunks
}

/// A reply that streams some text and then finishes with an `error` of `code`.
pub fn error_reply(code: &str) -> Vec<StreamChunk> {
    vec![
        StreamChunk::BlockStart {
            index: 0,
            block_type: "text".into(),
        },
        StreamChunk::TextDelta {
            index: 0,
            text: "doomed partial".into(),
        },
        StreamChunk::error(LlmFailure::new(code, format!("provider said {code}"))),
    ]
}

// ---------------------------------------------------------------------------------------
// The harness

/// What to boot besides the defaults.
#[derive(Default)]
pub struct Setup {
    /// The agent-loop row config (default `{}`).
    pub loop_config: Option<Value>,
    /// The persona (default none).
    pub persona: Option<String>,
    /// The mock route's retry policy config; also mounts `LlmRetryPlugin`.
    pub retry_policy: Option<Value>,
    /// Mounts JSONL persistence rooted here.
    pub persistence: Option<PathBuf>,
    /// Session invariant checking (on unless set to `Some(false)`).
    pub invariants: Option<bool>,
}

/// A booted kernel with the loop and a scripted adapter on the `mock` route.
pub struct Harness {
    /// The kernel (keeps the plugins loaded).
    pub kernel: Kernel,
    /// The root context: listeners and registrations of the test.
    pub ctx: Context,
    /// The agents service.
    pub agents: Arc<AgentRegistry>,
    /// The tool registry.
    pub tools: Arc<ToolRegistry>,
    /// The session store.
    pub sessions: Arc<SessionStore>,
    /// The system prompt service.
    pub prompt: Arc<SystemPrompt>,
    /// The scripted model.
    pub adapter: Arc<Scripted>,
}

impl Harness {
    /// The default composition answering with `script`.
    pub async fn new(script: Vec<Reply>) -> Self {
        Self::with(Setup::default(), script).await
    }

    /// Boots the composition `setup` describes.
    pub async fn with(setup: Setup, script: Vec<Reply>) -> Self {
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(
            SessionPlugin,
            json!({"invariants": setup.invariants.unwrap_or(true)}),
        )
        .unwrap();
        ctx.plugin(LlmPlugin, Value::Null).unwrap();
        ctx.plugin(ToolsPlugin, json!({})).unwrap();
        let persona = setup
            .persona
            .map_or_else(|| json!({}), |p| json!({"persona": p}));
        ctx.plugin(SystemPromptPlugin, persona).unwrap();
        if let Some(root) = &setup.persistence {
            ctx.plugin(JsonlPersistencePlugin, json!({"root": root}))
                .unwrap();
        }
        ctx.plugin(
            AgentLoopPlugin,
            setup.loop_config.unwrap_or_else(|| json!({})),
        )
        .unwrap();
        let policy = setup.retry_policy.map(|config| {
            ctx.plugin(LlmRetryPlugin, json!({})).unwrap();
            RetryPolicy::from_config(Some(&config), "mock.retryPolicy").unwrap()
        });
        kernel.settle().await;
        let adapter = Arc::new(Scripted::new(script, policy));
        let llm = ctx.require(&LLM).unwrap();
        llm.register_adapter(&ctx, ["mock"], Arc::clone(&adapter) as Arc<dyn LlmAdapter>)
            .unwrap();
        Self {
            agents: ctx.require(&AGENTS).expect("the agent loop is up"),
            tools: ctx.require(&TOOLS).unwrap(),
            sessions: ctx.require(&SESSIONS).unwrap(),
            prompt: ctx.require(&SYSTEM_PROMPT).unwrap(),
            kernel,
            ctx,
            adapter,
        }
    }

    /// A new agent on the mock route (session cwd `/tmp`).
    pub async fn agent(&self) -> Arc<Agent> {
        self.agents
            .create(CreateAgentOptions {
                agent_options: route(),
                cwd: Some("/tmp".into()),
                ..CreateAgentOptions::default()
            })
            .await
            .unwrap()
    }

    /// Registers `tool` for the test's lifetime.
    pub fn tool(&self, tool: FnTool) {
        self.tools.register(&self.ctx, Arc::new(tool)).unwrap();
    }

    /// Unloads everything.
    pub async fn shutdown(self) {
        self.kernel.shutdown().await;
    }
}

/// The mock route.
pub fn route() -> AgentOptions {
    AgentOptions::route("mock", "m")
}

/// A user-typed message.
pub fn user(text: &str) -> Message {
    Message::user(vec![ContentBlock::text(text)], MessageSource::User)
}

/// A plugin-sourced message.
pub fn plugin_message(plugin: &str, text: &str) -> Message {
    Message::user(
        vec![ContentBlock::text(text)],
        MessageSource::plugin(plugin),
    )
}

// ---------------------------------------------------------------------------------------
// Tools

/// An object schema with optional string properties.
pub fn object_schema(properties: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = properties
        .iter()
        .map(|name| ((*name).to_owned(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties})
}

/// `echo`: answers `echo: <text>`.
pub fn echo_tool() -> FnTool {
    FnTool::new(
        "echo",
        "Echo the text back.",
        object_schema(&["text"]),
        |args, _run| async move {
            let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
            Ok(ToolOutput::text(format!("echo: {text}")))
        },
    )
}

// ---------------------------------------------------------------------------------------
// Waiting

/// Awaits `future`, failing the test when it takes longer than [`PATIENCE`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Waits until the agent is idle.
pub async fn idle(agent: &Agent) {
    within("the agent to go idle", agent.when_idle()).await;
}

/// Polls `condition` until it holds.
pub async fn eventually(what: &str, condition: impl Fn() -> bool) {
    within(what, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

/// Waits until the agent's log has an event of `kind`.
pub async fn logged(agent: &Agent, kind: &str) {
    eventually(&format!("a {kind} event"), || {
        agent
            .session()
            .events()
            .iter()
            .any(|event| event.kind == kind)
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Reading the log

/// The event kinds of the agent's log, in order.
pub fn kinds(agent: &Agent) -> Vec<String> {
    agent
        .session()
        .events()
        .iter()
        .map(|event| event.kind.to_string())
        .collect()
}

/// The agent's events of `kind`.
pub fn events_of(agent: &Agent, kind: &str) -> Vec<Arc<SessionEvent>> {
    agent
        .session()
        .events()
        .into_iter()
        .filter(|event| event.kind == kind)
        .collect()
}

/// Each `turn/end`'s reason.
pub fn turn_ends(agent: &Agent) -> Vec<Value> {
    events_of(agent, "turn/end")
        .iter()
        .map(|event| event.data["reason"].clone())
        .collect()
}

/// The text of every logged `user/message`, in order.
pub fn user_texts(agent: &Agent) -> Vec<String> {
    events_of(agent, "user/message")
        .iter()
        .map(|event| block_texts(&event.data["content"]))
        .collect()
}

/// The texts of a JSON content array, joined.
pub fn block_texts(content: &Value) -> String {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect()
}

/// A readable line per message: `user: hi`, `assistant: hello`,
/// `assistant: call c1 echo {"text":"x"}`, `result c1: echo: x`.
pub fn transcript(messages: &[Message]) -> Vec<String> {
    messages.iter().map(describe).collect()
}

fn describe(message: &Message) -> String {
    let role = match message.role {
        dsh_llm::Role::User => "user",
        dsh_llm::Role::Assistant => "assistant",
        dsh_llm::Role::System => "system",
    };
    let parts: Vec<String> = message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Reasoning { text } => format!("(thinking) {text}"),
            ContentBlock::ToolCall {
                id,
                name,
                arguments,
            } => format!("call {id} {name} {arguments}"),
            ContentBlock::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                let text: String = content.iter().filter_map(ContentBlock::as_text).collect();
                let flag = if *is_error == Some(true) {
                    " (error)"
                } else {
                    ""
                };
                format!("result {tool_call_id}{flag}: {text}")
            }
            other => format!("{other:?}"),
        })
        .collect();
    format!("{role}: {}", parts.join(" | "))
}

/// The request messages of every request, as transcripts.
pub fn request_transcripts(adapter: &Scripted) -> Vec<Vec<String>> {
    adapter
        .requests()
        .iter()
        .map(|request| transcript(&request.messages))
        .collect()
}

/// Checks the structure of a whole log: contiguous seqs, balanced and alternating turn and
/// step boundaries with increasing numbers, every `tool/call` answered by exactly one
/// `tool/result` of the same call citing it.
pub fn assert_well_formed(agent: &Agent) {
    let events = agent.session().events();
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.seq, index as u64, "seqs are contiguous");
    }
    let mut open_turn: Option<u64> = None;
    let mut open_step: Option<u64> = None;
    let mut last_turn = 0;
    let mut calls: Vec<(u64, String)> = Vec::new();
    let mut answered: Vec<u64> = Vec::new();
    for event in &events {
        let turn = event.data.get("turn").and_then(Value::as_u64);
        let step = event.data.get("step").and_then(Value::as_u64);
        match event.kind.as_ref() {
            "turn/start" => {
                assert_eq!(open_turn, None, "turns do not nest (seq {})", event.seq);
                let turn = turn.unwrap();
                assert_eq!(turn, last_turn + 1, "turn numbers increase by one");
                last_turn = turn;
                open_turn = Some(turn);
            }
            "turn/end" => {
                assert_eq!(open_step, None, "no step is open at turn/end");
                assert_eq!(open_turn, turn, "turn/end closes the open turn");
                open_turn = None;
            }
            "step/start" => {
                assert!(open_turn.is_some(), "steps sit in turns");
                assert_eq!(open_step, None, "steps do not nest");
                open_step = step;
            }
            "step/end" => {
                assert_eq!(open_step, step, "step/end closes the open step");
                open_step = None;
            }
            "assistant/chunk" | "assistant/message" | "tool/call" | "tool/result" => {
                assert!(open_step.is_some(), "{} sits in a step", event.kind);
                assert_eq!(turn, open_turn, "{} names its turn", event.kind);
                assert_eq!(step, open_step, "{} names its step", event.kind);
                if event.kind == "tool/call" {
                    calls.push((event.seq, event.data["callId"].as_str().unwrap().to_owned()));
                }
                if event.kind == "tool/result" {
                    let sources = event.source_event_seqs.clone().unwrap_or_default();
                    assert_eq!(sources.len(), 1, "a tool/result cites its call");
                    let call = calls
                        .iter()
                        .find(|(seq, _)| *seq == sources[0])
                        .expect("the cited tool/call exists");
                    assert_eq!(
                        event.data["message"]["source"]["callId"].as_str(),
                        Some(call.1.as_str()),
                        "the result answers its call"
                    );
                    assert!(!answered.contains(&call.0), "a call is answered once");
                    answered.push(call.0);
                }
            }
            _ => {}
        }
    }
    assert_eq!(open_turn, None, "every turn ended");
    assert_eq!(
        calls.len(),
        answered.len(),
        "every tool/call has its tool/result"
    );
}
