//! The session API over real loopback HTTP, against a scripted model.

use std::sync::Arc;
use std::time::Duration;

use dsh_agent_loop::{AGENTS, AgentDefaultModelPlugin, AgentLoopPlugin};
use dsh_kernel::Kernel;
use dsh_llm::{
    AdapterStream, ContentBlock, FinishReason, GenerateOptions, LLM, LlmAdapter, LlmFailure,
    LlmPlugin, StreamChunk, adapter_stream_of, async_trait,
};
use dsh_session::SESSIONS;
use dsh_tools::{
    FnTool, PreToolDecision, TOOLS, ToolError, ToolExecution, ToolOutput, ToolsPreExecute,
};
use dsh_web::{ApiPlugin, WEBSERVER, WebServer, WebServerPlugin};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Answers every request with one short text, except that a task naming `guarded` first
/// gets a call of the `guarded` tool.
struct Echo;

#[async_trait]
impl LlmAdapter for Echo {
    async fn stream(&self, options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
        let history = serde_json::to_string(&options.messages).unwrap_or_default();
        if history.contains("guarded") && !history.contains("tool-result") {
            let arguments = "{}".to_owned();
            return Ok(adapter_stream_of([
                Ok(StreamChunk::BlockStart {
                    index: 0,
                    block_type: "tool-call".into(),
                }),
                Ok(StreamChunk::BlockEnd {
                    index: 0,
                    block: ContentBlock::tool_call("call-g", "guarded", arguments),
                }),
                Ok(StreamChunk::finish(FinishReason::ToolCalls)),
            ]));
        }
        Ok(adapter_stream_of([
            Ok(StreamChunk::TextDelta {
                index: 0,
                text: "pong".into(),
            }),
            Ok(StreamChunk::finish(FinishReason::Stop)),
        ]))
    }
}

struct Web {
    kernel: Kernel,
    server: Arc<WebServer>,
    client: reqwest::Client,
    /// Holds the sessions and the dsh home (`<home>/dsh-home`).
    home: tempfile::TempDir,
}

async fn web() -> Web {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let home = tempfile::tempdir().unwrap();
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    root.plugin(dsh_session::SessionPlugin, json!({})).unwrap();
    root.plugin(
        dsh_persistence_jsonl::JsonlPersistencePlugin,
        json!({"root": home.path().join("sessions")}),
    )
    .unwrap();
    root.plugin(
        dsh_shell_env::ShellEnvPlugin,
        json!({"dshHome": home.path().join("dsh-home")}),
    )
    .unwrap();
    root.plugin(LlmPlugin, Value::Null).unwrap();
    root.plugin(dsh_tools::ToolsPlugin, json!({})).unwrap();
    root.plugin(dsh_tools::UserApprovalPlugin, json!({}))
        .unwrap();
    root.plugin(dsh_system_prompt::SystemPromptPlugin, json!({}))
        .unwrap();
    root.plugin(AgentLoopPlugin, json!({})).unwrap();
    root.plugin(
        AgentDefaultModelPlugin,
        json!({"provider": "mock", "model": "m"}),
    )
    .unwrap();
    root.plugin(WebServerPlugin, json!({"port": 0})).unwrap();
    root.plugin(ApiPlugin, json!({})).unwrap();
    kernel.settle().await;
    root.require(&LLM)
        .unwrap()
        .register_adapter(&root, ["mock"], Arc::new(Echo))
        .unwrap();
    guard_a_tool(&root);
    let server = root.require(&WEBSERVER).unwrap();
    Web {
        kernel,
        server,
        client: reqwest::Client::new(),
        home,
    }
}

/// Registers the `guarded` tool, whose every call asks for approval.
fn guard_a_tool(root: &dsh_kernel::Context) {
    let tool = FnTool::new(
        "guarded",
        "Needs approval.",
        json!({"type": "object"}),
        |_args, _run| async move { Ok(ToolOutput::json(json!("ran"))) },
    );
    root.require(&TOOLS)
        .unwrap()
        .register(root, Arc::new(tool))
        .unwrap();
    root.on::<ToolsPreExecute>(|exec: ToolExecution, next: PreNext| async move {
        if exec.name() == "guarded" {
            return Ok(PreToolDecision::Ask {
                reason: Some("it is guarded".into()),
            });
        }
        next.run(exec).await
    })
    .unwrap();
}

type PreNext = dsh_kernel::Next<ToolExecution, Result<PreToolDecision, ToolError>>;

impl Web {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.server.url()))
            .header("x-dsh-token", self.server.token())
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .request(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    /// Reads the stream until the `turn/end` of turn `turn`, with an optional
    /// `Last-Event-ID`.
    async fn events(&self, id: &str, from: &str, last: Option<u64>, turn: u64) -> Vec<Value> {
        let mut request = self.request(
            reqwest::Method::GET,
            &format!("/api/sessions/{id}/events{from}"),
        );
        if let Some(last) = last {
            request = request.header("last-event-id", last.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let mut body = response.bytes_stream();
        let mut text = String::new();
        let mut events = Vec::new();
        let read = async {
            while let Some(chunk) = body.next().await {
                text.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                while let Some(end) = text.find("\n\n") {
                    let frame: String = text.drain(..end + 2).collect();
                    let Some(data) = frame.lines().find_map(|line| line.strip_prefix("data: "))
                    else {
                        continue;
                    };
                    let event: Value = serde_json::from_str(data).unwrap();
                    let done = event["type"] == "turn/end" && event["data"]["turn"] == turn;
                    events.push(event);
                    if done {
                        return;
                    }
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the stream stalled");
        events
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_send_and_watch_a_turn_then_list_it() {
    let w = web().await;
    let project = w.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    let (status, created) = w.post("/api/agents", json!({"cwd": project})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["sessionId"].as_str().unwrap().to_owned();
    let (status, sent) = w
        .post(
            &format!("/api/agents/{id}/messages"),
            json!({"text": "ping"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let events = w.events(&id, "?from=0", None, 1).await;
    let seqs: Vec<u64> = events
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (0..seqs.len() as u64).collect::<Vec<_>>(),
        "every event, in order"
    );
    let answer = events
        .iter()
        .find(|event| event["type"] == "assistant/message")
        .unwrap();
    assert_eq!(answer["data"]["message"]["content"][0]["text"], "pong");
    assert_eq!(
        events.last().unwrap()["data"]["reason"],
        json!({"kind": "completed"})
    );

    // A page that reconnects after seq 3 gets 4 onward, nothing doubled.
    let resumed = w.events(&id, "", Some(3), 1).await;
    assert_eq!(resumed[0]["seq"], 4);
    assert_eq!(resumed.len(), events.len() - 4);

    let (_, list) = w.get("/api/sessions").await;
    let listed = list["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["status"], "idle");
    assert_eq!(listed[0]["cwd"], json!(project));
    assert_eq!(listed[0]["title"], "ping", "the first typed line");
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_session_resumes_and_unknown_ones_are_404() {
    let w = web().await;
    let (_, created) = w.post("/api/agents", json!({})).await;
    let id = created["sessionId"].as_str().unwrap().to_owned();
    w.post(
        &format!("/api/agents/{id}/messages"),
        json!({"text": "one"}),
    )
    .await;
    w.events(&id, "", None, 1).await;
    let agents = w.kernel.root().require(&AGENTS).unwrap();
    agents.dispose(&id).await.unwrap();

    let (status, _) = w
        .post(&format!("/api/agents/{id}/messages"), json!({"text": "x"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, stream) = w.get(&format!("/api/sessions/{id}/events")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        stream["error"].as_str().unwrap().contains("resume it"),
        "{stream}"
    );
    let (_, list) = w.get("/api/sessions").await;
    assert_eq!(
        list["sessions"][0]["status"],
        Value::Null,
        "stored, not live"
    );

    let (status, resumed) = w
        .post(&format!("/api/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(
        (status, resumed["resumed"].clone()),
        (StatusCode::OK, json!(true))
    );
    w.post(
        &format!("/api/agents/{id}/messages"),
        json!({"text": "two"}),
    )
    .await;
    let events = w.events(&id, "", None, 2).await;
    let turns: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "turn/start")
        .map(|event| &event["data"]["turn"])
        .collect();
    assert_eq!(turns, [&json!(1), &json!(2)]);

    let (status, missing) = w.post("/api/sessions/session-nope/resume", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_status_and_a_reason() {
    let w = web().await;
    let (_, created) = w.post("/api/agents", json!({})).await;
    let id = created["sessionId"].as_str().unwrap().to_owned();
    let malformed = w
        .request(reqwest::Method::POST, &format!("/api/agents/{id}/messages"))
        .header("content-type", "application/json")
        .body("{\"text\":")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    let reason: Value = malformed.json().await.unwrap();
    assert!(!reason["error"].as_str().unwrap().is_empty());
    let (status, blank) = w
        .post(&format!("/api/agents/{id}/messages"), json!({"text": " "}))
        .await;
    assert_eq!(
        (status, blank["error"].clone()),
        (StatusCode::BAD_REQUEST, json!("text must not be blank"))
    );
    let (status, _) = w
        .post(&format!("/api/agents/{id}/messages"), json!({"txt": "x"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, relative) = w.post("/api/agents", json!({"cwd": "work"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{relative}");
    let (status, _) = w.post("/api/agents/nobody/cancel", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, cancelled) = w.post(&format!("/api/agents/{id}/cancel"), json!({})).await;
    assert_eq!(
        (status, cancelled["status"].clone()),
        (StatusCode::ACCEPTED, json!("idle"))
    );
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_question_waits_for_the_pages_answer() {
    let w = web().await;
    let (_, created) = w.post("/api/agents", json!({})).await;
    let id = created["sessionId"].as_str().unwrap().to_owned();
    w.post(
        &format!("/api/agents/{id}/messages"),
        json!({"text": "call guarded"}),
    )
    .await;
    let session = w
        .kernel
        .root()
        .require(&SESSIONS)
        .unwrap()
        .get(&id)
        .unwrap();
    let asked = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let asked = session
                .events()
                .iter()
                .find(|event| event.kind == "approval/asked")
                .map(|event| (*event.data).clone());
            if let Some(asked) = asked {
                return asked;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("no approval/asked");
    assert_eq!(asked["toolName"], "guarded");
    assert_eq!(asked["callId"], "call-g");
    assert_eq!(asked["reason"], "it is guarded");
    let question = asked["id"].as_str().unwrap();
    let path = format!("/api/agents/{id}/approvals/{question}");

    let (status, body) = w.post(&path, json!({"outcome": "maybe"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = w
        .post(
            &format!("/api/agents/other/approvals/{question}"),
            json!({"outcome": "allowed-once"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = w.post(&path, json!({"outcome": "allowed-once"})).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"outcome": "allowed-once"}))
    );
    let (status, _) = w.post(&path, json!({"outcome": "rejected"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "answered once only");

    let events = w.events(&id, "?from=0", None, 1).await;
    let decided = events
        .iter()
        .find(|event| event["type"] == "approval/decided")
        .unwrap();
    assert_eq!(decided["data"]["outcome"], "allowed-once");
    let result = events
        .iter()
        .find(|event| event["type"] == "tool/result")
        .unwrap();
    let content = &result["data"]["message"]["content"][0];
    assert_eq!(content["isError"], false, "{content}");
    assert_eq!(content["content"][0]["text"], "ran");
    assert_eq!(
        events.last().unwrap()["data"]["reason"]["kind"],
        "completed"
    );
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_stops_reading_is_resynced_from_the_log_without_loss() {
    let w = web().await;
    let session = w
        .kernel
        .root()
        .require(&SESSIONS)
        .unwrap()
        .create(dsh_session::CreateOptions::default())
        .unwrap();
    let id = session.id().to_owned();
    let response = w
        .request(reqwest::Method::GET, &format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // Far more than a page buffers and the socket holds, while the page reads nothing.
    let total: u64 = 40_000;
    let filler = "x".repeat(200);
    for n in 0..total {
        session
            .append(
                "test/tick",
                json!({"n": n, "filler": filler}),
                dsh_session::SurfaceIntent::default(),
            )
            .unwrap();
    }
    let mut body = response.bytes_stream();
    let mut text = String::new();
    let mut seqs = Vec::new();
    let read = async {
        while let Some(chunk) = body.next().await {
            text.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            while let Some(end) = text.find("\n\n") {
                let frame: String = text.drain(..end + 2).collect();
                if let Some(seq) = frame.lines().find_map(|line| line.strip_prefix("id: ")) {
                    seqs.push(seq.parse::<u64>().unwrap());
                }
            }
            if seqs.len() as u64 == total {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("the stream stalled");
    assert_eq!(seqs, (0..total).collect::<Vec<_>>());
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_requests_get_json_errors_and_never_panic() {
    let w = web().await;
    let (_, created) = w.post("/api/agents", json!({})).await;
    let id = created["sessionId"].as_str().unwrap().to_owned();
    let (status, body) = w.get(&format!("/api/sessions/{id}/events?from=abc")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("from must be a seq")
    );
    let (status, body) = w.get(&format!("/api/sessions/{id}/bogus")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("no API route"));
    let (status, body) = w.get("/api/agents").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    // The largest seq a page could claim to have seen: nothing after it, and no overflow.
    let beyond = w
        .request(reqwest::Method::GET, &format!("/api/sessions/{id}/events"))
        .header("last-event-id", u64::MAX.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(beyond.status(), StatusCode::OK);
    drop(beyond);
    let (status, _) = w.get("/api/health").await;
    assert_eq!(status, StatusCode::OK, "still serving");
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_needs_an_existing_project_directory() {
    let w = web().await;
    let error_of = |(status, body): (StatusCode, Value)| {
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        body["error"].as_str().unwrap().to_owned()
    };
    let nul = error_of(w.post("/api/agents", json!({"cwd": "/tmp/a\u{0}b"})).await);
    assert_eq!(nul, "cwd must not contain a NUL byte (got \"/tmp/a\\0b\")");
    let missing = w.home.path().join("missing");
    let absent = error_of(w.post("/api/agents", json!({"cwd": missing})).await);
    assert_eq!(
        absent,
        format!(
            "cwd {} does not exist: create the directory first, or pass an existing one",
            missing.display()
        )
    );
    let file = w.home.path().join("file");
    std::fs::write(&file, "").unwrap();
    let not_dir = error_of(w.post("/api/agents", json!({"cwd": file})).await);
    assert!(
        not_dir.ends_with("is not a directory: pass the directory to work in"),
        "{not_dir}"
    );

    let root = error_of(w.post("/api/agents", json!({"cwd": "/"})).await);
    assert_eq!(
        root,
        "cwd refused: / is the filesystem root, where a model's commands could write anywhere; \
         start the session in a project directory (pass cwd, or run dsh web from one)"
    );
    if let Some(home) = std::env::home_dir().filter(|home| home.is_dir()) {
        let refused = error_of(w.post("/api/agents", json!({"cwd": home})).await);
        assert!(refused.contains("is your home directory"), "{refused}");
    }
    std::fs::create_dir_all(w.home.path().join("dsh-home")).unwrap();
    let holder = error_of(w.post("/api/agents", json!({"cwd": w.home.path()})).await);
    assert!(holder.contains("holds the dsh home"), "{holder}");
    let sneaky = format!("{}/project/../..", w.home.path().join("x").display());
    std::fs::create_dir_all(w.home.path().join("x/project")).unwrap();
    let dotted = error_of(w.post("/api/agents", json!({"cwd": sneaky})).await);
    assert!(
        dotted.contains("holds the dsh home"),
        "`..` is resolved first: {dotted}"
    );

    let project = w.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let (status, created) = w.post("/api/agents", json!({"cwd": project})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (_, list) = w.get("/api/sessions").await;
    assert_eq!(
        list["sessions"][0]["cwd"],
        json!(project.canonicalize().unwrap()),
        "the workspace is kept canonical"
    );
    w.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_session_whose_workspace_is_the_root_is_not_resumed() {
    let w = web().await;
    let agents = w.kernel.root().require(&AGENTS).unwrap();
    // Not through the API (which refuses it): as a session another front end stored.
    let agent = agents
        .create(dsh_agent_loop::CreateAgentOptions {
            cwd: Some("/".to_owned()),
            agent_options: dsh_agent_loop::AgentOptions::route("mock", "m"),
            ..dsh_agent_loop::CreateAgentOptions::default()
        })
        .await
        .unwrap();
    let id = agent.id().to_owned();
    drop(agent);
    w.post(
        &format!("/api/agents/{id}/messages"),
        json!({"text": "one"}),
    )
    .await;
    w.events(&id, "", None, 1).await;
    agents.dispose(&id).await.unwrap();

    let (status, body) = w
        .post(&format!("/api/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["error"],
        format!(
            "session \"{id}\" cannot be resumed here: its workspace / is the filesystem root, \
             where a model's commands could write anywhere; start a new session in a project \
             directory instead"
        )
    );
    assert!(agents.get(&id).is_none(), "no agent was started");
    let (status, _) = w.post("/api/sessions/session-nope/resume", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "unknown ids still get 404");
    w.kernel.shutdown().await;
}
