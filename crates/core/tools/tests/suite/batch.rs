//! Execution modes and batches: parallel-safe calls overlap, exclusive ones run alone,
//! results come back in call order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_tools::{CancellationToken, ExecutionMode, FnTool, ToolExecutionInput, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::Barrier;

use super::support::{Counter, Harness, Log, call, echo, echo_parameters};

/// Calls in flight now, and the most seen at once.
#[derive(Clone, Default)]
struct InFlight {
    now: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

impl InFlight {
    fn enter(&self) -> usize {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        now
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

/// A tool that records, per call id, how many calls were in flight when it started; `safe`
/// decides whether it is concurrency safe.
fn timed(name: &str, safe: bool, flight: &InFlight, starts: &Log<(String, usize)>) -> FnTool {
    let flight = flight.clone();
    let starts = starts.clone();
    FnTool::new(
        name,
        "Sleeps a little.",
        json!({"type": "object"}),
        move |_, run| {
            let flight = flight.clone();
            let starts = starts.clone();
            async move {
                starts.push((run.call_id.clone(), flight.enter()));
                tokio::time::sleep(Duration::from_millis(20)).await;
                flight.leave();
                Ok(ToolOutput::text(run.call_id))
            }
        },
    )
    .concurrency_safe(move |_| safe)
}

fn input(id: &str, name: &str) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, json!({}), CancellationToken::new())
}

#[tokio::test]
async fn execution_mode_is_parallel_only_for_a_safe_tool_with_valid_arguments() {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()).concurrency_safe(|args| args["text"] != "unsafe"));
    h.add(FnTool::new("plain", "Default.", json!({}), |_, _| async {
        Ok(ToolOutput::text(""))
    }));
    let mode = |name: &str, args| h.tools.execution_mode(&call(name, args));
    assert_eq!(mode("echo", json!({"text": "x"})), ExecutionMode::Parallel);
    assert_eq!(
        mode("echo", json!({"text": "unsafe"})),
        ExecutionMode::Exclusive
    );
    assert_eq!(mode("echo", json!({"text": 1})), ExecutionMode::Exclusive);
    assert_eq!(mode("plain", json!({})), ExecutionMode::Exclusive);
    assert_eq!(mode("nope", json!({})), ExecutionMode::Exclusive);
}

#[tokio::test]
async fn parallel_calls_overlap() {
    let h = Harness::new().await;
    let barrier = Arc::new(Barrier::new(3));
    h.add(
        FnTool::new(
            "meet",
            "Waits for two others.",
            echo_parameters(),
            move |args, _| {
                let barrier = Arc::clone(&barrier);
                async move {
                    barrier.wait().await;
                    Ok(ToolOutput::json(args["text"].clone()))
                }
            },
        )
        .concurrency_safe(|_| true),
    );
    let inputs = ["a", "b", "c"]
        .map(|text| {
            ToolExecutionInput::new(
                text,
                "meet",
                json!({"text": text}),
                CancellationToken::new(),
            )
        })
        .to_vec();
    let results = tokio::time::timeout(Duration::from_secs(5), h.tools.execute_batch(inputs))
        .await
        .expect("three parallel calls met at the barrier");
    let texts: Vec<String> = results
        .iter()
        .map(dsh_tools::ToolExecutionResult::text)
        .collect();
    assert_eq!(texts, ["a", "b", "c"]);
}

#[tokio::test]
async fn exclusive_calls_run_alone_and_results_keep_call_order() {
    let h = Harness::new().await;
    let flight = InFlight::default();
    let starts = Log::default();
    h.add(timed("par", true, &flight, &starts));
    h.add(timed("ex", false, &flight, &starts));
    let order = ["p1", "p2", "x1", "p3", "p4", "p5", "x2", "x3", "p6"];
    let inputs = order
        .iter()
        .map(|id| input(id, if id.starts_with('x') { "ex" } else { "par" }))
        .collect();
    let results = h.tools.execute_batch(inputs).await;
    let texts: Vec<String> = results
        .iter()
        .map(dsh_tools::ToolExecutionResult::text)
        .collect();
    assert_eq!(texts, order);

    let starts = starts.entries();
    for (id, in_flight) in &starts {
        if id.starts_with('x') {
            assert_eq!(*in_flight, 1, "{id} ran alone");
        }
    }
    assert_eq!(flight.peak(), 3, "p3..p5 overlapped");
    let started: Vec<&str> = starts.iter().map(|(id, _)| id.as_str()).collect();
    let position = |id: &str| started.iter().position(|s| *s == id).unwrap();
    assert!(position("x1") > position("p2") && position("x1") < position("p3"));
}

#[tokio::test]
async fn at_most_the_limit_run_at_once() {
    let h = Harness::new().await;
    let flight = InFlight::default();
    h.add(timed("par", true, &flight, &Log::default()));
    let inputs: Vec<ToolExecutionInput> = (0..12).map(|i| input(&format!("c{i}"), "par")).collect();
    let results = h.tools.execute_batch(inputs).await;
    assert_eq!(results.len(), 12);
    assert!(results.iter().all(|result| !result.is_error));
    assert_eq!(flight.peak(), 10);

    let flight = InFlight::default();
    let h = Harness::new().await;
    h.add(timed("par", true, &flight, &Log::default()));
    let inputs: Vec<ToolExecutionInput> = (0..5).map(|i| input(&format!("c{i}"), "par")).collect();
    h.tools.execute_batch_with_limit(inputs, 2).await;
    assert_eq!(flight.peak(), 2);
}
