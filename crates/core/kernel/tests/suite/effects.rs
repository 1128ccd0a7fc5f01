//! Effects: undone newest first on unload, once, and early through a disposer.

use std::sync::Arc;

use dsh_kernel::FiberState;
use dsh_kernel::Kernel;
use dsh_kernel::ServiceKey;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::Log;
use super::support::mount_row;
use super::support::probe;

#[tokio::test]
async fn effects_are_undone_in_reverse_registration_order() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let effects = log.clone();
    let fiber = mount_row(
        &kernel.root(),
        "ordered",
        probe(&[], move |ctx, _| {
            let effects = effects.clone();
            async move {
                for step in 1..=3 {
                    let effects = effects.clone();
                    ctx.effect(move || effects.push(format!("undo {step}")))?;
                }
                let effects = effects.clone();
                ctx.effect_async(move || async move {
                    tokio::task::yield_now().await;
                    effects.push("undo 4 (async)");
                })?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    fiber.dispose().await;
    assert_eq!(log.take(), ["undo 4 (async)", "undo 3", "undo 2", "undo 1"]);
}

#[tokio::test]
async fn a_disposer_undoes_its_effect_once() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let disposers = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&disposers);
    let effects = log.clone();
    let fiber = mount_row(
        &kernel.root(),
        "early",
        probe(&[], move |ctx, _| {
            let keep = Arc::clone(&keep);
            let effects = effects.clone();
            async move {
                for step in ["a", "b"] {
                    let effects = effects.clone();
                    let disposer = ctx.effect(move || effects.push(format!("undo {step}")))?;
                    keep.lock().unwrap().push(disposer);
                }
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    let first = disposers.lock().unwrap().remove(0);
    first.dispose().await;
    assert_eq!(log.take(), ["undo a"]);
    fiber.dispose().await;
    assert_eq!(
        log.take(),
        ["undo b"],
        "the disposed effect did not run again"
    );
}

#[tokio::test]
async fn spawned_tasks_are_aborted_when_their_fiber_unloads() {
    let kernel = Kernel::new().unwrap();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<()>();
    let fiber = mount_row(
        &kernel.root(),
        "worker",
        probe(&[], move |ctx, _| {
            let sender = sender.clone();
            async move {
                ctx.spawn(async move {
                    let _held = sender;
                    std::future::pending::<()>().await;
                })?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(fiber.state(), FiberState::Active);
    fiber.dispose().await;
    // The task held the only sender left; aborting it closes the channel.
    assert_eq!(receiver.recv().await, None);
}

#[tokio::test]
async fn withdrawing_a_service_early_unloads_its_dependents_before_returning() {
    const FLAG: ServiceKey<bool> = ServiceKey::new("flag");
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let flag = kernel.root().provide(&FLAG, Arc::new(true)).unwrap();
    let effects = log.clone();
    let consumer = mount_row(
        &kernel.root(),
        "consumer",
        probe(const { &[FLAG.name()] }, move |ctx, _| {
            let effects = effects.clone();
            async move {
                ctx.effect(move || effects.push("consumer down"))?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(consumer.state(), FiberState::Active);
    flag.dispose().await;
    assert_eq!(log.take(), ["consumer down"]);
    assert_eq!(consumer.state(), FiberState::Pending);
}

#[tokio::test(start_paused = true)]
async fn shutdown_within_stops_waiting_for_a_stuck_undo() {
    let kernel = Kernel::new().unwrap();
    mount_row(
        &kernel.root(),
        "stuck",
        probe(&[], |ctx, _| async move {
            ctx.effect_async(std::future::pending::<()>)?;
            Ok(())
        }),
        json!(null),
    );
    kernel.settle().await;
    let finished = kernel
        .shutdown_within(std::time::Duration::from_secs(5))
        .await;
    assert!(!finished, "a stuck undo cannot hold the shutdown");
}

#[tokio::test]
async fn shutdown_within_reports_a_clean_unload() {
    let kernel = Kernel::new().unwrap();
    let log = Log::default();
    let undone = log.clone();
    mount_row(
        &kernel.root(),
        "clean",
        probe(&[], move |ctx, _| {
            let undone = undone.clone();
            async move {
                ctx.effect(move || undone.push("undone"))?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert!(
        kernel
            .shutdown_within(std::time::Duration::from_secs(5))
            .await
    );
    assert_eq!(log.take(), ["undone"]);
}
