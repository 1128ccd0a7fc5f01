//! The recorded steps of dsh 0.1.1's session come back chunk for chunk, tool calls included;
//! running out or diverging is a clear failure.

use std::path::PathBuf;

use dsh_llm::{
    ContentBlock, GenerateOptions, LlmAdapter, LlmFailure, Message, MessageSource, StreamChunk,
};
use dsh_llm_replay::{REPLAY_DIVERGED, REPLAY_EXHAUSTED, Recording, ReplayAdapter};
use futures_util::StreamExt;

pub(super) fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../session/persistence-jsonl/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/session.jsonl.zstd",
    )
}

pub(super) fn user(text: &str) -> Message {
    Message::user(
        vec![ContentBlock::Text { text: text.into() }],
        MessageSource::User,
    )
}

pub(super) fn options(messages: Vec<Message>) -> GenerateOptions {
    let mut options = GenerateOptions::new("deepseek-official", "deepseek-v4-flash", messages);
    options.session_id = Some("replayed".into());
    options
}

async fn chunks(
    adapter: &ReplayAdapter,
    options: GenerateOptions,
) -> Result<Vec<StreamChunk>, LlmFailure> {
    let stream = adapter.stream(options).await?;
    Ok(stream.map(Result::unwrap).collect().await)
}

#[test]
fn dshs_session_holds_two_model_steps() {
    let recording = Recording::load(&fixture()).unwrap();
    assert_eq!(recording.steps.len(), 2);
    assert_eq!((recording.steps[0].turn, recording.steps[0].step), (1, 1));
    assert_eq!(recording.steps[0].tool_call_ids().len(), 1);
    assert!(recording.steps[1].tool_call_ids().is_empty());
}

#[tokio::test]
async fn the_same_tool_call_is_issued_then_the_final_text() {
    let recording = Recording::load(&fixture()).unwrap();
    let expected = recording.clone();
    let adapter = ReplayAdapter::new(recording);
    let first = chunks(&adapter, options(vec![user("go")])).await.unwrap();
    assert_eq!(first, expected.steps[0].chunks);
    let call = expected.steps[0].tool_call_ids().remove(0);
    let calls = first
        .iter()
        .filter(|chunk| {
            matches!(
                chunk,
                StreamChunk::BlockEnd {
                    block: ContentBlock::ToolCall { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(calls, 1, "one bash call");

    let result = Message::tool_result(
        &call,
        vec![ContentBlock::Text {
            text: "hello".into(),
        }],
        false,
    );
    let second = chunks(&adapter, options(vec![user("go"), result.clone()]))
        .await
        .unwrap();
    assert_eq!(second, expected.steps[1].chunks);

    let error = chunks(&adapter, options(vec![result])).await.unwrap_err();
    assert_eq!(error.code, REPLAY_EXHAUSTED);
    assert_eq!(
        error.message,
        "the replay recording has no more model steps: all 2 were replayed"
    );
}

#[tokio::test]
async fn a_request_without_the_recorded_tool_result_diverges() {
    let adapter = ReplayAdapter::new(Recording::load(&fixture()).unwrap());
    chunks(&adapter, options(vec![user("go")])).await.unwrap();
    let error = chunks(&adapter, options(vec![user("something else")]))
        .await
        .unwrap_err();
    assert_eq!(error.code, REPLAY_DIVERGED);
    assert!(
        error
            .message
            .starts_with("replay diverged at recorded step 2"),
        "{}",
        error.message
    );
}

#[test]
fn a_missing_or_empty_recording_is_named() {
    let error = Recording::load(&PathBuf::from("/no/such/session.jsonl")).unwrap_err();
    assert!(
        error.starts_with("cannot read the recording /no/such/session.jsonl"),
        "{error}"
    );
}

#[test]
fn a_sqlite_database_given_as_a_log_file_is_told_to_use_its_session_id() {
    let database = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../apps/dsh/tests/fixtures/dsh-0.1.1/04-sqlite-one-bash/sessions.sqlite");
    let error = Recording::load(&database).unwrap_err();
    assert!(
        error.contains("is a SQLite database, not a session log"),
        "{error}"
    );
    assert!(error.contains("`sessionId: <id>`"), "{error}");
}

#[test]
fn a_relative_recording_path_that_does_not_read_says_where_it_was_looked_for() {
    let error = Recording::load(&PathBuf::from("no/such/session.jsonl")).unwrap_err();
    assert!(
        error.contains("taken from the directory dsh runs in"),
        "{error}"
    );
    assert!(error.contains("start it with `./`"), "{error}");
}

#[tokio::test]
async fn the_plugin_answers_the_deepseek_route_through_the_runtime() {
    use dsh_kernel::Kernel;
    use dsh_llm::{LLM, LlmPlugin};
    use dsh_llm_replay::ReplayPlugin;
    use serde_json::json;

    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(LlmPlugin, json!({})).unwrap();
    ctx.plugin(ReplayPlugin, json!({"session": fixture()}))
        .unwrap();
    kernel.settle().await;
    let llm = ctx.get(&LLM).unwrap();
    let streamed: Vec<StreamChunk> = llm.stream(options(vec![user("go")])).collect().await;
    let recorded = Recording::load(&fixture()).unwrap();
    assert_eq!(streamed, recorded.steps[0].chunks);
    kernel.shutdown().await;
}
