//! The five dispatch modes: order, results and error rules.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use dsh_kernel::Bail;
use dsh_kernel::BoxError;
use dsh_kernel::Emit;
use dsh_kernel::Event;
use dsh_kernel::FiberState;
use dsh_kernel::Kernel;
use dsh_kernel::Next;
use dsh_kernel::Parallel;
use dsh_kernel::Serial;
use dsh_kernel::Waterfall;
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::Barrier;

use super::support::Log;
use super::support::mount_row;
use super::support::probe;

struct Observed;
impl Event for Observed {
    const NAME: &'static str = "test/observed";
    type Mode = Emit<String>;
}

struct Broadcast;
impl Event for Broadcast {
    const NAME: &'static str = "test/broadcast";
    type Mode = Parallel<String>;
}

struct Ask;
impl Event for Ask {
    const NAME: &'static str = "test/ask";
    type Mode = Serial<u32, String>;
}

struct AskNow;
impl Event for AskNow {
    const NAME: &'static str = "test/ask-now";
    type Mode = Bail<u32, String>;
}

struct Pipeline;
impl Event for Pipeline {
    const NAME: &'static str = "test/pipeline";
    type Mode = Waterfall<String, String>;
}

fn err(message: &str) -> BoxError {
    message.to_owned().into()
}

#[tokio::test]
async fn emit_calls_listeners_in_order_and_first_registered_with_on_first() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    for name in ["b", "c"] {
        let log = log.clone();
        root.on::<Observed>(move |payload: &String| {
            log.push(format!("{name}:{payload}"));
            Ok(())
        })
        .unwrap();
    }
    let first = log.clone();
    root.on_first::<Observed>(move |payload: &String| {
        first.push(format!("a:{payload}"));
        Ok(())
    })
    .unwrap();

    root.emit::<Observed>(&"x".to_owned()).unwrap();
    assert_eq!(log.take(), ["a:x", "b:x", "c:x"]);
}

#[tokio::test]
async fn emit_runs_every_listener_and_reports_each_failure_with_its_owner() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    let seen = log.clone();
    let fiber = mount_row(
        &root,
        "observer",
        probe(&[], move |ctx, _| {
            let seen = seen.clone();
            async move {
                ctx.on::<Observed>(|_: &String| Err(err("first broke")))?;
                ctx.on::<Observed>(move |payload: &String| {
                    seen.push(payload.clone());
                    Ok(())
                })?;
                ctx.on::<Observed>(|_: &String| Err(err("third broke")))?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    assert_eq!(fiber.state(), FiberState::Active);

    let error = root.emit::<Observed>(&"x".to_owned()).unwrap_err();
    assert_eq!(log.take(), ["x"], "the listener after a failure still ran");
    assert_eq!(error.failures.len(), 2);
    assert_eq!(
        error.to_string(),
        "event \"test/observed\": 2 listener(s) failed; \
         row \"observer\" (test-observer): first broke; \
         row \"observer\" (test-observer): third broke"
    );
}

#[tokio::test]
async fn emit_without_listeners_is_ok() {
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .emit::<Observed>(&"nobody".to_owned())
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_starts_all_listeners_before_awaiting_any() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    // Each listener waits for all three to arrive: run one at a time, this would hang.
    let barrier = Arc::new(Barrier::new(3));
    let finished = Arc::new(AtomicUsize::new(0));
    for _ in 0..3 {
        let barrier = Arc::clone(&barrier);
        let finished = Arc::clone(&finished);
        root.on::<Broadcast>(move |_: Arc<String>| {
            let barrier = Arc::clone(&barrier);
            let finished = Arc::clone(&finished);
            async move {
                barrier.wait().await;
                finished.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
        .unwrap();
    }
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        root.parallel::<Broadcast>("go".to_owned()),
    )
    .await
    .expect("parallel listeners ran concurrently")
    .unwrap();
    assert_eq!(
        finished.load(Ordering::SeqCst),
        3,
        "every listener was awaited"
    );
}

#[tokio::test]
async fn parallel_aggregates_failures_after_all_settle() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let finished = Arc::new(AtomicUsize::new(0));
    for index in 0..3 {
        let finished = Arc::clone(&finished);
        root.on::<Broadcast>(move |_: Arc<String>| {
            let finished = Arc::clone(&finished);
            async move {
                tokio::task::yield_now().await;
                finished.fetch_add(1, Ordering::SeqCst);
                if index == 1 {
                    Ok(())
                } else {
                    Err(err(&format!("listener {index}")))
                }
            }
        })
        .unwrap();
    }
    let error = root
        .parallel::<Broadcast>("go".to_owned())
        .await
        .unwrap_err();
    assert_eq!(finished.load(Ordering::SeqCst), 3);
    let messages: Vec<String> = error.failures.iter().map(|f| f.error.to_string()).collect();
    assert_eq!(messages, ["listener 0", "listener 2"]);
}

#[tokio::test]
async fn serial_returns_the_first_answer_and_skips_the_rest() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    let answers = [None, Some("second"), Some("third")];
    for (index, answer) in answers.into_iter().enumerate() {
        let log = log.clone();
        root.on::<Ask>(move |question: Arc<u32>| {
            let log = log.clone();
            async move {
                log.push(format!("{index}:{question}"));
                Ok(answer.map(str::to_owned))
            }
        })
        .unwrap();
    }
    let answer = root.serial::<Ask>(7).await.unwrap();
    assert_eq!(answer.as_deref(), Some("second"));
    assert_eq!(log.take(), ["0:7", "1:7"]);
}

#[tokio::test]
async fn serial_runs_one_listener_at_a_time_and_stops_at_the_first_error() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let running = Arc::new(AtomicUsize::new(0));
    let log = Log::default();
    for index in 0..3 {
        let running = Arc::clone(&running);
        let log = log.clone();
        root.on::<Ask>(move |_: Arc<u32>| {
            let running = Arc::clone(&running);
            let log = log.clone();
            async move {
                assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "one at a time");
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                log.push(index.to_string());
                if index == 1 {
                    Err(err("stop here"))
                } else {
                    Ok(None)
                }
            }
        })
        .unwrap();
    }
    let error = root.serial::<Ask>(1).await.unwrap_err();
    assert_eq!(error.failures[0].error.to_string(), "stop here");
    assert_eq!(
        log.take(),
        ["0", "1"],
        "the listener after the error did not run"
    );
}

#[tokio::test]
async fn serial_without_an_answer_is_none() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    root.on::<Ask>(|_: Arc<u32>| async { Ok(None) }).unwrap();
    assert_eq!(root.serial::<Ask>(1).await.unwrap(), None);
}

#[tokio::test]
async fn bail_returns_the_first_answer_synchronously_and_stops_at_errors() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    let first = log.clone();
    root.on::<AskNow>(move |n: &u32| {
        first.push("first");
        Ok((*n > 10).then(|| "big".to_owned()))
    })
    .unwrap();
    let second = log.clone();
    root.on::<AskNow>(move |n: &u32| {
        second.push("second");
        if *n == 0 {
            Err(err("zero"))
        } else {
            Ok(Some("small".to_owned()))
        }
    })
    .unwrap();
    let third = log.clone();
    root.on::<AskNow>(move |_: &u32| {
        third.push("third");
        Ok(Some("never".to_owned()))
    })
    .unwrap();

    assert_eq!(root.bail::<AskNow>(&11).unwrap().as_deref(), Some("big"));
    assert_eq!(log.take(), ["first"]);
    assert_eq!(root.bail::<AskNow>(&3).unwrap().as_deref(), Some("small"));
    assert_eq!(log.take(), ["first", "second"]);
    let error = root.bail::<AskNow>(&0).unwrap_err();
    assert_eq!(error.failures[0].error.to_string(), "zero");
    assert_eq!(log.take(), ["first", "second"]);
}

fn wrap(
    log: &Log,
    name: &'static str,
) -> impl Fn(String, Next<String, String>) -> futures_util::future::BoxFuture<'static, String>
+ Send
+ Sync
+ 'static {
    let log = log.clone();
    move |args: String, next: Next<String, String>| {
        let log = log.clone();
        Box::pin(async move {
            log.push(format!("{name} in"));
            let result = next.run(format!("{args}>{name}")).await;
            log.push(format!("{name} out"));
            format!("{result}<{name}")
        })
    }
}

#[tokio::test]
async fn waterfall_runs_outermost_first_with_the_inner_function_at_the_bottom() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    root.on::<Pipeline>(wrap(&log, "b")).unwrap();
    root.on::<Pipeline>(wrap(&log, "c")).unwrap();
    root.on_first::<Pipeline>(wrap(&log, "a")).unwrap();
    let inner_log = log.clone();
    let result = root
        .waterfall::<Pipeline, _, _>("start".to_owned(), move |args| async move {
            inner_log.push(format!("inner {args}"));
            "done".to_owned()
        })
        .await;
    assert_eq!(result, "done<c<b<a");
    assert_eq!(
        log.take(),
        [
            "a in",
            "b in",
            "c in",
            "inner start>a>b>c",
            "c out",
            "b out",
            "a out"
        ]
    );
}

#[tokio::test]
async fn waterfall_listener_that_does_not_call_next_short_circuits() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    root.on::<Pipeline>(wrap(&log, "outer")).unwrap();
    let veto = log.clone();
    root.on::<Pipeline>(move |args: String, _next: Next<String, String>| {
        let veto = veto.clone();
        async move {
            veto.push("veto");
            format!("denied {args}")
        }
    })
    .unwrap();
    root.on::<Pipeline>(wrap(&log, "never")).unwrap();
    let inner_log = log.clone();
    let result = root
        .waterfall::<Pipeline, _, _>("x".to_owned(), move |_| async move {
            inner_log.push("inner");
            "ran".to_owned()
        })
        .await;
    assert_eq!(result, "denied x>outer<outer");
    assert_eq!(log.take(), ["outer in", "veto", "outer out"]);
}

#[tokio::test]
async fn waterfall_without_listeners_calls_inner() {
    let kernel = Kernel::new().unwrap();
    let result = kernel
        .root()
        .waterfall::<Pipeline, _, _>("x".to_owned(), |args| async move { format!("{args}!") })
        .await;
    assert_eq!(result, "x!");
}

#[tokio::test]
async fn a_disposed_listener_and_the_listeners_of_an_unloaded_fiber_hear_nothing() {
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    let log = Log::default();
    let early = log.clone();
    let disposer = root
        .on::<Observed>(move |_: &String| {
            early.push("root");
            Ok(())
        })
        .unwrap();
    let plugin_log = log.clone();
    let fiber = mount_row(
        &root,
        "listener",
        probe(&[], move |ctx, _| {
            let plugin_log = plugin_log.clone();
            async move {
                ctx.on::<Observed>(move |_: &String| {
                    plugin_log.push("plugin");
                    Ok(())
                })?;
                Ok(())
            }
        }),
        json!(null),
    );
    kernel.settle().await;
    root.emit::<Observed>(&String::new()).unwrap();
    assert_eq!(log.take(), ["root", "plugin"]);

    disposer.dispose().await;
    root.emit::<Observed>(&String::new()).unwrap();
    assert_eq!(log.take(), ["plugin"]);

    fiber.dispose().await;
    root.emit::<Observed>(&String::new()).unwrap();
    assert_eq!(log.take(), Vec::<String>::new());
}
