//! The session API over real loopback HTTP, against a scripted model.

use std::sync::Arc;
use std::time::Duration;

use dsh_agent_loop::{AGENTS, AgentDefaultModelPlugin, AgentLoopPlugin};
use dsh_kernel::Kernel;
use dsh_llm::{
    AdapterStream, FinishReason, GenerateOptions, LLM, LlmAdapter, LlmFailure, LlmPlugin,
    StreamChunk, adapter_stream_of, async_trait,
};
use dsh_web::{ApiPlugin, WEBSERVER, WebServer, WebServerPlugin};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Answers every request with one short text.
struct Echo;

#[async_trait]
impl LlmAdapter for Echo {
    async fn stream(&self, _options: GenerateOptions) -> Result<AdapterStream, LlmFailure> {
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
    _home: tempfile::TempDir,
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
    root.plugin(LlmPlugin, Value::Null).unwrap();
    root.plugin(dsh_tools::ToolsPlugin, json!({})).unwrap();
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
    let server = root.require(&WEBSERVER).unwrap();
    Web {
        kernel,
        server,
        client: reqwest::Client::new(),
        _home: home,
    }
}

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
    let (status, created) = w.post("/api/agents", json!({"cwd": "/tmp"})).await;
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
    assert_eq!(listed[0]["cwd"], "/tmp");
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
