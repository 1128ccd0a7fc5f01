//! Registration rules: all or nothing, duplicates, metadata, policies, lifetimes, catalog.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_llm::retry::{Backoff, RetryMode};
use dsh_llm::{
    AdaptersUpdated, CancellationToken, LLM, LlmAdapter, LlmFailure, ModelInfo, ProviderInfo,
    ReasoningInfo, RetryPolicy, codes,
};
use serde_json::Value;

use super::support::{Harness, Script, Scripted, final_failure, request, text_reply};

#[tokio::test]
async fn routes_go_to_their_adapter() {
    let h = Harness::new().await;
    let a = Scripted::arc(vec![Script::chunks(text_reply("from a"))]);
    let b = Scripted::arc(vec![Script::chunks(text_reply("from b"))]);
    h.register(&["a"], a.clone());
    h.register(&["b"], b.clone());
    let chunks = h.collect(request("b")).await;
    assert_eq!(chunks, text_reply("from b"));
    assert_eq!(a.requests().len(), 0);
    assert_eq!(b.requests().len(), 1);
    assert_eq!(
        h.llm.providers(),
        vec![ProviderInfo::new("a", "a"), ProviderInfo::new("b", "b")]
    );
}

#[tokio::test]
async fn unknown_provider_is_no_adapter() {
    let h = Harness::new().await;
    let chunks = h.collect(request("nope")).await;
    assert_eq!(chunks.len(), 1);
    let (kind, failure) = final_failure(&chunks);
    assert_eq!(kind, "error");
    assert_eq!(
        failure,
        LlmFailure::new(
            codes::NO_ADAPTER,
            "no adapter registered for provider \"nope\""
        )
    );
    assert_eq!(
        h.llm.retry_policy("nope").unwrap_err().code,
        codes::NO_ADAPTER
    );
    let prepared = h
        .llm
        .prepare_call(
            dsh_llm::LlmCallConfig::new("nope", "m"),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(prepared.unwrap_err().code, codes::NO_ADAPTER);
}

#[tokio::test]
async fn a_taken_route_is_duplicate_and_nothing_is_registered() {
    let h = Harness::new().await;
    h.register(&["a"], Scripted::arc(vec![]));
    let error = h
        .llm
        .register_adapter(&h.root(), ["b", "a"], Scripted::arc(vec![]))
        .unwrap_err();
    assert_eq!(error.code, codes::DUPLICATE_ADAPTER);
    assert_eq!(
        error.message,
        "an adapter for provider \"a\" is already registered"
    );
    assert!(!h.llm.has_provider("b"), "all or nothing");
    let twice = h
        .llm
        .register_adapter(&h.root(), ["c", "c"], Scripted::arc(vec![]))
        .unwrap_err();
    assert_eq!(twice.code, codes::DUPLICATE_ADAPTER);
    assert!(!h.llm.has_provider("c"));
}

#[tokio::test]
async fn invalid_registrations_are_refused() {
    let h = Harness::new().await;
    let empty: [&str; 0] = [];
    let none = h
        .llm
        .register_adapter(&h.root(), empty, Scripted::arc(vec![]))
        .unwrap_err();
    assert_eq!(none.code, codes::INVALID_ADAPTER);
    assert_eq!(
        none.message,
        "an adapter must register at least one provider"
    );
    let blank = h
        .llm
        .register_adapter(&h.root(), ["ok", ""], Scripted::arc(vec![]))
        .unwrap_err();
    assert_eq!(blank.message, "adapter provider names must be non-empty");

    struct Renaming;
    #[dsh_llm::async_trait]
    impl LlmAdapter for Renaming {
        fn provider_info(&self, _provider: &str) -> ProviderInfo {
            ProviderInfo::new("other", "Other")
        }
        async fn stream(
            &self,
            _options: dsh_llm::GenerateOptions,
        ) -> Result<dsh_llm::AdapterStream, LlmFailure> {
            Err(LlmFailure::unknown("unused"))
        }
    }
    let renamed = h
        .llm
        .register_adapter(&h.root(), ["x"], Arc::new(Renaming))
        .unwrap_err();
    assert_eq!(renamed.code, codes::INVALID_ADAPTER);
    assert!(h.llm.providers().is_empty());
}

#[tokio::test]
async fn one_adapter_serves_several_routes_and_names_them() {
    let h = Harness::new().await;
    let adapter = Arc::new(Scripted::new(vec![]).with_name("DeepSeek"));
    h.register(&["deepseek-official", "mirror"], adapter);
    assert_eq!(
        h.llm.providers(),
        vec![
            ProviderInfo::new("deepseek-official", "DeepSeek"),
            ProviderInfo::new("mirror", "DeepSeek")
        ]
    );
}

#[tokio::test]
async fn retry_policies_are_captured_per_route() {
    let h = Harness::new().await;
    let custom = RetryPolicy {
        mode: RetryMode::Always,
        backoff: Backoff::default(),
    };
    h.register(&["plain"], Scripted::arc(vec![]));
    h.register(
        &["custom"],
        Arc::new(Scripted::new(vec![]).with_policy(custom.clone())),
    );
    assert_eq!(h.llm.retry_policy("plain").unwrap(), RetryPolicy::default());
    assert_eq!(h.llm.retry_policy("custom").unwrap(), custom);
}

#[tokio::test]
async fn the_disposer_and_the_fiber_take_routes_away() {
    let h = Harness::new().await;
    let disposer = h
        .llm
        .register_adapter(&h.root(), ["a"], Scripted::arc(vec![]))
        .unwrap();
    disposer.dispose().await;
    assert!(!h.llm.has_provider("a"));
    h.register(&["a"], Scripted::arc(vec![]));
    assert!(h.llm.has_provider("a"), "the route is free again");

    /// A plugin registering route `owned` while it is loaded.
    struct Owner;
    impl Plugin for Owner {
        type Config = Value;
        fn inject(&self) -> &'static [ServiceName] {
            const { &[LLM.name()] }
        }
        async fn apply(&self, ctx: Context, _config: Value) -> Result<(), BoxError> {
            let llm = ctx.require(&LLM)?;
            llm.register_adapter(&ctx, ["owned"], Arc::new(Scripted::new(vec![])))?;
            Ok(())
        }
    }
    let fiber = h.root().plugin(Owner, Value::Null).unwrap();
    h.kernel.settle().await;
    assert!(h.llm.has_provider("owned"));
    fiber.dispose().await;
    assert!(!h.llm.has_provider("owned"));
}

#[tokio::test]
async fn adapters_updated_is_emitted_on_both_ends() {
    let h = Harness::new().await;
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    h.root()
        .on::<AdaptersUpdated>(move |_: &()| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok::<(), BoxError>(())
        })
        .unwrap();
    let disposer = h
        .llm
        .register_adapter(&h.root(), ["a", "b"], Scripted::arc(vec![]))
        .unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);
    disposer.dispose().await;
    assert_eq!(count.load(Ordering::SeqCst), 2);
    let _ = h
        .llm
        .register_adapter(&h.root(), Vec::<String>::new(), Scripted::arc(vec![]));
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "a refused registration changes nothing"
    );
}

struct Catalog(Vec<ModelInfo>);

#[dsh_llm::async_trait]
impl LlmAdapter for Catalog {
    async fn list_models(&self, _provider: &str) -> Result<Vec<ModelInfo>, LlmFailure> {
        Ok(self.0.clone())
    }
    async fn prepare_call(
        &self,
        _provider: &str,
        model: &str,
        _signal: &CancellationToken,
    ) -> Result<ModelInfo, LlmFailure> {
        Ok(self
            .0
            .iter()
            .find(|known| known.id == model)
            .cloned()
            .unwrap_or_else(|| ModelInfo::new(model)))
    }
    async fn stream(
        &self,
        _options: dsh_llm::GenerateOptions,
    ) -> Result<dsh_llm::AdapterStream, LlmFailure> {
        Err(LlmFailure::unknown("unused"))
    }
}

#[tokio::test]
async fn catalogs_are_listed_and_checked() {
    let h = Harness::new().await;
    let flash = ModelInfo {
        context_window: Some(1_000_000),
        reasoning: Some(ReasoningInfo::new(
            ["off", "low", "high", "max"],
            Some("high"),
        )),
        ..ModelInfo::new("deepseek-v4-flash")
    };
    h.register(&["good"], Arc::new(Catalog(vec![flash.clone()])));
    assert_eq!(
        h.llm.list_models("good").await.unwrap(),
        vec![flash.clone()]
    );
    let signal = CancellationToken::new();
    assert_eq!(
        h.llm
            .resolve_model("good", "deepseek-v4-flash", &signal)
            .await
            .unwrap(),
        flash
    );
    assert_eq!(
        h.llm
            .resolve_model("good", "anything", &signal)
            .await
            .unwrap(),
        ModelInfo::new("anything"),
        "the catalog is advisory"
    );
    h.register(
        &["twice"],
        Arc::new(Catalog(vec![ModelInfo::new("x"), ModelInfo::new("x")])),
    );
    let error = h.llm.list_models("twice").await.unwrap_err();
    assert_eq!(error.code, codes::INVALID_CATALOG);

    let bad_default = ModelInfo {
        reasoning: Some(ReasoningInfo::new(["low"], Some("max"))),
        ..ModelInfo::new("m")
    };
    h.register(&["bad"], Arc::new(Catalog(vec![bad_default])));
    let error = h.llm.resolve_model("bad", "m", &signal).await.unwrap_err();
    assert_eq!(error.code, codes::INVALID_MODEL_REASONING);
    assert_eq!(
        error.message,
        "adapter returned an unknown default reasoning effort for provider \"bad\" model \"m\""
    );
}
