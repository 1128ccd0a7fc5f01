//! Timeouts and cancellation: a search that outlives `timeoutMs` fails with dsh's timeout
//! text, a cancelled call with `SEARCH_ABORTED`, and both return promptly.

use std::time::{Duration, Instant};

use dsh_tools::{CancellationToken, ToolExecutionInput};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{code, error_name, harness_with, session, text};
use super::tree::Tree;

/// A tree holding one large sparse file: searching it takes seconds, reading it costs nothing.
fn slow_tree() -> Tree {
    let tree = Tree::new();
    let file = std::fs::File::create(tree.join("big.bin")).unwrap();
    file.set_len(4 << 30).unwrap();
    tree.write("small.txt", "needle\n");
    tree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_past_its_budget_times_out_promptly() {
    let tree = slow_tree();
    let harness = harness_with(json!({"timeoutMs": 50})).await;
    let started = Instant::now();
    let result = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "needle", "path": "big.bin"}),
        )
        .await;
    assert_eq!(text(&result), "Error: tool call timed out after 50ms");
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    assert_eq!(error_name(&result).as_deref(), Some("ToolTimeoutError"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The same budget is plenty for a small search.
    let quick = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "needle", "path": "small.txt"}),
        )
        .await;
    assert_eq!(text(&quick), "Found 1 match\n\nsmall.txt\nLine 1: needle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_aborted_promptly() {
    let tree = slow_tree();
    let harness = harness_with(json!({})).await;
    let signal = CancellationToken::new();
    let canceller = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let input = ToolExecutionInput::new(
        "call-1",
        "grep",
        json!({"pattern": "needle", "path": "big.bin"}),
        signal,
    )
    .with_caller(session(tree.path()));
    let result = harness.tools.execute(input).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&result).as_deref(), Some("SEARCH_ABORTED"));
    assert_eq!(error_name(&result).as_deref(), Some("SearchError"));
    assert_eq!(
        text(&result),
        "Error: grep was aborted before completion (tool timeout or caller cancellation)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_aborted_call_never_starts() {
    let tree = slow_tree();
    let harness = harness_with(json!({})).await;
    let signal = CancellationToken::new();
    signal.cancel();
    let input = ToolExecutionInput::new("call-1", "glob", json!({"pattern": "*"}), signal)
        .with_caller(session(tree.path()));
    let result = harness.tools.execute(input).await;
    assert_eq!(code(&result).as_deref(), Some("ABORTED_BEFORE_DISPATCH"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_walk_stops_too() {
    // Many files, a budget far too small to walk them.
    let tree = Tree::new();
    for i in 0..3000 {
        tree.write(&format!("d{}/f{i}.txt", i % 30), "x\n");
    }
    let harness = harness_with(json!({"timeoutMs": 1})).await;
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(text(&result), "Error: tool call timed out after 1ms");
}
