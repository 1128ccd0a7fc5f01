//! Injection, activation, unload on provider loss, reload on provider replacement.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use dsh_kernel::ConfigSource;
use dsh_kernel::FiberLabel;
use dsh_kernel::FiberState;
use dsh_kernel::Kernel;
use dsh_kernel::KernelError;
use dsh_kernel::Mount;
use dsh_kernel::ServiceKey;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio::sync::Notify;

use super::support::Log;
use super::support::mount_row;
use super::support::probe;

const STORE: ServiceKey<String> = ServiceKey::new("store");

/// A provider of `store` whose value is its config.
fn store_provider(log: &Log) -> super::support::Probe {
    let log = log.clone();
    probe(&[], move |ctx, config| {
        let log = log.clone();
        async move {
            let value = config.as_str().unwrap_or_default().to_owned();
            log.push(format!("provide {value}"));
            ctx.provide(&STORE, Arc::new(value.clone()))?;
            ctx.effect(move || log.push(format!("withdraw {value}")))?;
            Ok(())
        }
    })
}

/// A consumer of `store` that logs the value it saw at each load and each unload.
fn store_consumer(log: &Log) -> super::support::Probe {
    let log = log.clone();
    probe(const { &[STORE.name()] }, move |ctx, _| {
        let log = log.clone();
        async move {
            let store = ctx.require(&STORE)?;
            log.push(format!("load with {store}"));
            ctx.effect(move || log.push(format!("unload from {store}")))?;
            Ok(())
        }
    })
}

#[tokio::test]
async fn a_plugin_waits_until_its_injected_service_is_provided_and_active() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        store_consumer(&log),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Pending);
    assert!(log.take().is_empty());

    mount_row(
        &kernel.root(),
        "provider",
        store_provider(&log),
        json!("v1"),
    );
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Active);
    assert_eq!(log.take(), ["provide v1", "load with v1"]);
}

#[tokio::test]
async fn a_service_is_invisible_while_its_provider_is_still_loading() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let provider = mount_row(
        &kernel.root(),
        "slow-provider",
        probe(&[], move |ctx, _| {
            let held = Arc::clone(&held);
            async move {
                ctx.provide(&STORE, Arc::new("late".to_owned()))?;
                held.notified().await;
                Ok(())
            }
        }),
        json!(null),
    );
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        store_consumer(&log),
        json!(null),
    );
    tokio::task::yield_now().await;
    assert_eq!(provider.state(), FiberState::Loading);
    assert_eq!(consumer.state(), FiberState::Pending);
    assert!(kernel.root().get(&STORE).is_none());

    gate.notify_one();
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Active);
    assert_eq!(log.take(), ["load with late"]);
}

#[tokio::test]
async fn dependents_unload_when_their_provider_goes_and_reload_with_a_replacement() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let first = mount_row(
        &kernel.root(),
        "provider-a",
        store_provider(&log),
        json!("a"),
    );
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        store_consumer(&log),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(log.take(), ["provide a", "load with a"]);

    first.dispose().await;
    assert_eq!(consumer.state(), FiberState::Pending);
    assert_eq!(first.state(), FiberState::Disposed);
    assert_eq!(
        log.take(),
        ["unload from a", "withdraw a"],
        "the dependent unloaded before its provider's effects were undone"
    );

    mount_row(
        &kernel.root(),
        "provider-b",
        store_provider(&log),
        json!("b"),
    );
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Active);
    assert_eq!(log.take(), ["provide b", "load with b"]);
}

#[tokio::test]
async fn replacing_a_service_in_place_reloads_its_dependents() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let holder: Arc<std::sync::Mutex<Option<dsh_kernel::Context>>> = Arc::default();
    let keep = Arc::clone(&holder);
    mount_row(
        &kernel.root(),
        "provider",
        probe(&[], move |ctx, _| {
            let keep = Arc::clone(&keep);
            async move {
                *keep.lock().unwrap() = Some(ctx);
                Ok(())
            }
        }),
        json!(null),
    );
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        store_consumer(&log),
        json!(null),
    );
    kernel.settle().await;
    let provider = holder.lock().unwrap().clone().unwrap();

    let old = provider
        .provide(&STORE, Arc::new("old".to_owned()))
        .unwrap();
    kernel.settle().await;
    assert_eq!(log.take(), ["load with old"]);

    old.dispose().await;
    provider
        .provide(&STORE, Arc::new("new".to_owned()))
        .unwrap();
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Active);
    assert_eq!(log.take(), ["unload from old", "load with new"]);
}

#[tokio::test]
async fn config_is_resolved_again_at_every_activation() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let resolutions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&resolutions);
    let seen = log.clone();
    let provider = mount_row(
        &kernel.root(),
        "provider",
        store_provider(&log),
        json!("one"),
    );
    kernel
        .root()
        .mount(Mount {
            label: FiberLabel::row("consumer", "test-consumer"),
            plugin: Arc::new(probe(const { &[STORE.name()] }, move |_, config: Value| {
                let seen = seen.clone();
                async move {
                    seen.push(format!("config {config}"));
                    Ok(())
                }
            })),
            inject: Vec::new(),
            config: ConfigSource::resolver(move |ctx| {
                let store = ctx.require(&STORE)?;
                let count = counter.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(json!(format!("{store}#{count}")))
            }),
        })
        .unwrap();
    kernel.settle().await;
    provider.dispose().await;
    mount_row(
        &kernel.root(),
        "provider-2",
        store_provider(&log),
        json!("two"),
    );
    kernel.settle().await;
    let configs: Vec<String> = log
        .take()
        .into_iter()
        .filter(|l| l.starts_with("config"))
        .collect();
    assert_eq!(configs, ["config \"one#1\"", "config \"two#2\""]);
}

#[tokio::test]
async fn a_second_provider_fails_with_both_rows_named() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let first = mount_row(&kernel.root(), "first", store_provider(&log), json!("1"));
    kernel.settle().await;
    let second = mount_row(&kernel.root(), "second", store_provider(&log), json!("2"));
    kernel.settle().await;
    assert_eq!(first.state(), FiberState::Active);
    assert_eq!(second.state(), FiberState::Failed);
    assert_eq!(
        second.error().unwrap(),
        "service \"store\" is already provided by row \"first\" (test-first); \
         row \"second\" (test-second) cannot provide it too (disable one of the two rows)"
    );
}

#[tokio::test]
async fn requiring_a_service_that_is_not_injected_is_an_error() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    mount_row(&kernel.root(), "provider", store_provider(&log), json!("v"));
    let outcome: Arc<std::sync::Mutex<Option<KernelError>>> = Arc::default();
    let slot = Arc::clone(&outcome);
    mount_row(
        &kernel.root(),
        "sneaky",
        probe(&[], move |ctx, _| {
            let slot = Arc::clone(&slot);
            async move {
                *slot.lock().unwrap() = ctx.require(&STORE).err();
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(
        outcome.lock().unwrap().as_ref().unwrap().to_string(),
        "row \"sneaky\" (test-sneaky) uses service \"store\" without injecting it \
         (add it to the plugin's inject list or the row's `inject`)"
    );
}

#[tokio::test]
async fn a_loading_fiber_whose_provider_goes_is_stopped_and_its_partial_effects_undone() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let provider = mount_row(&kernel.root(), "provider", store_provider(&log), json!("p"));
    kernel.settle().await;
    let started = Arc::new(Notify::new());
    let signal = Arc::clone(&started);
    let effects = log.clone();
    let stuck = mount_row(
        &kernel.root(),
        "stuck",
        probe(const { &[STORE.name()] }, move |ctx, _| {
            let signal = Arc::clone(&signal);
            let effects = effects.clone();
            async move {
                ctx.effect(move || effects.push("stuck cleanup"))?;
                signal.notify_one();
                std::future::pending::<()>().await;
                Ok(())
            }
        }),
        json!(null),
    );
    started.notified().await;
    assert_eq!(stuck.state(), FiberState::Loading);
    log.take();

    provider.dispose().await;
    kernel.settle().await;
    assert_eq!(stuck.state(), FiberState::Pending);
    assert_eq!(log.take(), ["stuck cleanup", "withdraw p"]);
}

#[tokio::test]
async fn a_failed_apply_undoes_what_it_registered_and_keeps_the_cause() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let partial = log.clone();
    let fiber = mount_row(
        &kernel.root(),
        "broken",
        probe(&[], move |ctx, _| {
            let partial = partial.clone();
            async move {
                ctx.provide(&STORE, Arc::new("half".to_owned()))?;
                ctx.effect(move || partial.push("undone"))?;
                Err("disk on fire".into())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(fiber.state(), FiberState::Failed);
    assert_eq!(fiber.error().as_deref(), Some("disk on fire"));
    assert_eq!(log.take(), ["undone"]);
    assert!(
        kernel.root().get(&STORE).is_none(),
        "its service was withdrawn"
    );
}

#[tokio::test]
async fn a_bad_config_fails_with_its_path() {
    #[derive(serde::Deserialize)]
    #[expect(
        dead_code,
        reason = "the field is only deserialized: the test is about the error of a config that does not fit it"
    )]
    struct Port {
        port: u16,
    }
    struct NeedsPort;
    impl dsh_kernel::Plugin for NeedsPort {
        type Config = Port;
        async fn apply(&self, _: dsh_kernel::Context, _: Port) -> Result<(), dsh_kernel::BoxError> {
            Ok(())
        }
    }
    let kernel = Kernel::new().unwrap();
    let fiber = kernel
        .root()
        .plugin(NeedsPort, json!({"port": "eighty"}))
        .unwrap();
    let missing = kernel
        .root()
        .plugin(NeedsPort, ConfigSource::none())
        .unwrap();
    kernel.settle().await;
    assert_eq!(
        fiber.error().unwrap(),
        "invalid config at `port`: invalid type: string \"eighty\", expected u16"
    );
    assert_eq!(
        missing.error().unwrap(),
        "invalid config at `.`: missing field `port`"
    );
}

#[tokio::test]
async fn child_plugins_go_with_their_parent() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let child_log = log.clone();
    let parent = mount_row(
        &kernel.root(),
        "parent",
        probe(&[], move |ctx, _| {
            let child_log = child_log.clone();
            async move {
                ctx.plugin(
                    probe(&[], move |ctx, _| {
                        let child_log = child_log.clone();
                        async move {
                            child_log.push("child up");
                            ctx.effect(move || child_log.push("child down"))?;
                            Ok(())
                        }
                    }),
                    Value::Null,
                )?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(log.take(), ["child up"]);
    parent.dispose().await;
    assert_eq!(log.take(), ["child down"]);
}

#[tokio::test]
async fn a_context_cannot_register_once_its_fiber_has_unloaded() {
    let kernel = Kernel::new().unwrap();
    let kept: Arc<std::sync::Mutex<Option<dsh_kernel::Context>>> = Arc::default();
    let keep = Arc::clone(&kept);
    let fiber = mount_row(
        &kernel.root(),
        "gone",
        probe(&[], move |ctx, _| {
            let keep = Arc::clone(&keep);
            async move {
                *keep.lock().unwrap() = Some(ctx);
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    fiber.dispose().await;
    let ctx = kept.lock().unwrap().clone().unwrap();
    let error = ctx.effect(|| {}).unwrap_err();
    assert_eq!(
        error,
        KernelError::Inactive {
            fiber: FiberLabel::plugin("disposed fiber"),
            state: FiberState::Disposed
        }
    );
}

#[tokio::test]
async fn shutdown_disposes_every_fiber_dependents_first() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let provider = mount_row(&kernel.root(), "provider", store_provider(&log), json!("s"));
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        store_consumer(&log),
        json!(null),
    );
    kernel.settle().await;
    log.take();
    kernel.shutdown().await;
    assert_eq!(log.take(), ["unload from s", "withdraw s"]);
    assert_eq!(provider.state(), FiberState::Disposed);
    assert_eq!(consumer.state(), FiberState::Disposed);
}

#[tokio::test]
async fn a_panicking_plugin_fails_its_row_instead_of_hanging_the_boot() {
    let kernel = Kernel::new().unwrap();
    let fiber = mount_row(
        &kernel.root(),
        "panicky",
        probe(&[], |_, _| async { panic!("index out of bounds") }),
        json!(null),
    );
    tokio::time::timeout(std::time::Duration::from_secs(5), kernel.settle())
        .await
        .expect("the runtime settled");
    assert_eq!(fiber.state(), FiberState::Failed);
    assert_eq!(
        fiber.error().as_deref(),
        Some("panicked: index out of bounds")
    );
}

#[tokio::test]
async fn a_failed_fiber_retries_when_its_provider_is_replaced() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let bad = mount_row(
        &kernel.root(),
        "bad-provider",
        store_provider(&log),
        json!("bad"),
    );
    let picky = mount_row(
        &kernel.root(),
        "picky",
        probe(const { &[STORE.name()] }, |ctx, _| async move {
            let store = ctx.require(&STORE)?;
            if store.as_str() == "bad" {
                return Err("the store is bad".into());
            }
            Ok(())
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(picky.state(), FiberState::Failed);
    bad.dispose().await;
    mount_row(
        &kernel.root(),
        "good-provider",
        store_provider(&log),
        json!("good"),
    );
    kernel.settle().await;
    assert_eq!(picky.state(), FiberState::Active);
}

#[tokio::test]
async fn a_replacement_provider_can_provide_while_the_old_one_is_still_unloading() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let gate = Arc::new(Notify::new());
    let old = mount_row(&kernel.root(), "old", store_provider(&log), json!("old"));
    let held = Arc::clone(&gate);
    let effects = log.clone();
    let slow = mount_row(
        &kernel.root(),
        "slow-consumer",
        probe(const { &[STORE.name()] }, move |ctx, _| {
            let held = Arc::clone(&held);
            let effects = effects.clone();
            async move {
                let store = ctx.require(&STORE)?;
                effects.push(format!("slow loads with {store}"));
                ctx.effect_async(move || async move { held.notified().await })?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    let disposing = tokio::spawn({
        let old = old.clone();
        async move { old.dispose().await }
    });
    tokio::task::yield_now().await;
    assert_eq!(slow.state(), FiberState::Unloading);
    let new = mount_row(&kernel.root(), "new", store_provider(&log), json!("new"));
    tokio::task::yield_now().await;
    gate.notify_one();
    disposing.await.unwrap();
    kernel.settle().await;
    assert_eq!(new.state(), FiberState::Active, "{:?}", new.error());
    assert_eq!(slow.state(), FiberState::Active);
    assert!(log.take().contains(&"slow loads with new".to_owned()));
}

#[tokio::test]
async fn dropping_a_service_may_call_back_into_the_kernel() {
    /// Reads its provider's label when dropped, which needs the runtime's lock.
    struct Reentrant(dsh_kernel::Context, Log);
    impl Drop for Reentrant {
        fn drop(&mut self) {
            self.1.push(format!("dropped while {}", self.0.state()));
        }
    }
    const REENTRANT: ServiceKey<Reentrant> = ServiceKey::new("reentrant");
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let dropped = log.clone();
    let fiber = mount_row(
        &kernel.root(),
        "reentrant",
        probe(&[], move |ctx, _| {
            let dropped = dropped.clone();
            async move {
                ctx.provide(&REENTRANT, Arc::new(Reentrant(ctx.clone(), dropped)))?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    tokio::time::timeout(std::time::Duration::from_secs(5), fiber.dispose())
        .await
        .expect("no deadlock");
    assert_eq!(log.take(), ["dropped while unloading"]);
}
