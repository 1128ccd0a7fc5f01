use std::collections::HashMap;
use std::sync::Arc;

use dsh_llm::{
    ContentBlock, GenerateOptions, LlmAdapter, LlmFailure, Message, MessageSource, StreamChunk,
};
use dsh_llm_deepseek::{DeepSeekAdapter, DeepSeekConfig, PROVIDER};
use dsh_test_support::fake_deepseek::FakeDeepSeek;
use futures_util::StreamExt;

pub const KEY: &str = "sk-test-secret-key-0123";

pub fn adapter_for(server: &FakeDeepSeek, config: DeepSeekConfig) -> DeepSeekAdapter {
    let mut env = HashMap::new();
    env.insert("DEEPSEEK_API_KEY".to_string(), KEY.to_string());
    env.insert("DEEPSEEK_BASE_URL".to_string(), server.base_url());
    let env = Arc::new(env);
    DeepSeekAdapter::new(config)
        .unwrap()
        .with_env(move |name| env.get(name).cloned())
}

pub fn options(text: &str) -> GenerateOptions {
    GenerateOptions::new(
        PROVIDER,
        "deepseek-v4-flash",
        vec![Message::user(
            vec![ContentBlock::text(text)],
            MessageSource::User,
        )],
    )
}

/// All chunks, or the failure that ended the stream (`Err` from `stream` or an `Err` item).
pub async fn collect(
    adapter: &DeepSeekAdapter,
    options: GenerateOptions,
) -> (Vec<StreamChunk>, Option<LlmFailure>) {
    let mut chunks = Vec::new();
    let mut stream = match adapter.stream(options).await {
        Ok(stream) => stream,
        Err(failure) => return (chunks, Some(failure)),
    };
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => chunks.push(chunk),
            Err(failure) => return (chunks, Some(failure)),
        }
    }
    (chunks, None)
}
