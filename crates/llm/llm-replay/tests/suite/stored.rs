//! A recording named by `sessionId` is read through the session persistence seam, whatever
//! store is behind it; the row names its recording exactly once.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use dsh_kernel::{ConfigSource, FiberLabel, FiberState, Kernel, Mount};
use dsh_llm::{LLM, LlmPlugin, StreamChunk};
use dsh_llm_replay::{Recording, RecordingSource, ReplayConfig, ReplayPlugin};
use dsh_persistence::log_file::decode::decode_framed;
use dsh_persistence::{
    PersistenceError, PersistenceSnapshot, SESSION_PERSISTENCE, SessionInspection, SessionLocation,
    SessionPersistence, SessionPreparation, SessionRawArtifact,
};
use dsh_session::{SessionEvent, SessionHeader};
use futures_util::StreamExt;
use serde_json::json;

use super::replay::{fixture, options, user};

/// The id the store keeps dsh 0.1.1's session under.
const ID: &str = "recorded";

/// A store holding one session, dsh 0.1.1's, that can only be read.
struct OneSession(SessionInspection);

impl OneSession {
    fn new() -> Self {
        let bytes = std::fs::read(fixture()).unwrap();
        let log = decode_framed(&bytes, &fixture()).unwrap();
        Self(SessionInspection {
            header: log.header,
            events: log.events,
        })
    }
}

fn absent(id: &str) -> PersistenceError {
    PersistenceError::NotFound(id.to_owned())
}

#[async_trait]
impl SessionPersistence for OneSession {
    fn locate(&self, _: &SessionHeader) -> Option<SessionLocation> {
        None
    }
    fn supports_raw_artifacts(&self) -> bool {
        false
    }
    async fn read_raw(&self, _: &str) -> Result<Option<SessionRawArtifact>, PersistenceError> {
        Ok(None)
    }
    async fn create(&self, _: SessionHeader) -> Result<(), PersistenceError> {
        Ok(())
    }
    async fn append(&self, id: &str, _: Vec<SessionEvent>) -> Result<(), PersistenceError> {
        Err(absent(id))
    }
    async fn prepare(&self, id: &str) -> Result<SessionPreparation, PersistenceError> {
        Err(absent(id))
    }
    async fn load(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        Err(absent(id))
    }
    async fn inspect(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        if id == ID {
            Ok(self.0.clone())
        } else {
            Err(absent(id))
        }
    }
    async fn read_from(&self, id: &str, _: u64) -> Result<Vec<SessionEvent>, PersistenceError> {
        Err(absent(id))
    }
    async fn list(&self) -> Result<Vec<SessionHeader>, PersistenceError> {
        Ok(Vec::new())
    }
    async fn list_snapshots(&self) -> Result<Vec<PersistenceSnapshot>, PersistenceError> {
        Ok(Vec::new())
    }
}

/// A kernel with the LLM runtime and the one-session store, and a replay row mounted with
/// `config`, injecting `sessionPersistence` when `inject` says so (as a row's `inject` does).
async fn boot(config: serde_json::Value, inject: bool) -> (Kernel, FiberState, Option<String>) {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(LlmPlugin, json!({})).unwrap();
    let store: Arc<dyn SessionPersistence> = Arc::new(OneSession::new());
    ctx.provide(&SESSION_PERSISTENCE, store).unwrap();
    let row = ctx
        .mount(Mount {
            label: FiberLabel::plugin("llm-replay"),
            plugin: Arc::new(ReplayPlugin),
            inject: if inject {
                vec![SESSION_PERSISTENCE.name().as_str().to_owned()]
            } else {
                Vec::new()
            },
            config: ConfigSource::Value(config),
        })
        .unwrap();
    kernel.settle().await;
    let (state, error) = (row.state(), row.error());
    (kernel, state, error)
}

#[tokio::test]
async fn a_stored_session_replays_through_the_store() {
    let (kernel, state, error) = boot(json!({"sessionId": ID}), true).await;
    assert_eq!(state, FiberState::Active, "{error:?}");
    let llm = kernel.root().get(&LLM).unwrap();
    let streamed: Vec<StreamChunk> = llm.stream(options(vec![user("go")])).collect().await;
    let recorded = Recording::load(&fixture()).unwrap();
    assert_eq!(streamed, recorded.steps[0].chunks);
    kernel.shutdown().await;
}

#[tokio::test]
async fn an_unknown_or_uninjected_stored_session_fails_the_row() {
    let (kernel, state, error) = boot(json!({"sessionId": "nope"}), true).await;
    assert_eq!(state, FiberState::Failed);
    let error = error.unwrap();
    assert!(
        error.contains("the recorded session \"nope\" does not read: "),
        "{error}"
    );
    kernel.shutdown().await;

    let (kernel, state, error) = boot(json!({"sessionId": ID}), false).await;
    assert_eq!(state, FiberState::Failed);
    let error = error.unwrap();
    assert!(
        error.contains("add `inject: [sessionPersistence]` to the row"),
        "{error}"
    );
    kernel.shutdown().await;
}

#[test]
fn a_row_names_its_recording_once() {
    let config: ReplayConfig =
        serde_json::from_value(json!({"session": "/r/session.jsonl"})).unwrap();
    assert_eq!(
        config.recording,
        RecordingSource::File(PathBuf::from("/r/session.jsonl"))
    );
    assert_eq!(config.providers, ["deepseek-official"]);
    let config: ReplayConfig =
        serde_json::from_value(json!({"sessionId": "s", "providers": ["p"]})).unwrap();
    assert_eq!(config.recording, RecordingSource::Stored("s".into()));
    assert_eq!(config.providers, ["p"]);

    let missing = serde_json::from_value::<ReplayConfig>(json!({})).unwrap_err();
    assert_eq!(missing.to_string(), "missing field `session`");
    let both = serde_json::from_value::<ReplayConfig>(json!({"session": "a", "sessionId": "b"}))
        .unwrap_err();
    assert!(both.to_string().contains("not both"), "{both}");
    let unknown = serde_json::from_value::<ReplayConfig>(json!({"sesion": "a"})).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown field `sesion`"),
        "{unknown}"
    );
}
