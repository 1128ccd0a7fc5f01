//! The tool-call scheduler: parallel-safe calls overlap, exclusive calls are barriers, the
//! pool honours `maxParallelToolCalls`, and results commit in model order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_tools::{FnTool, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::{Barrier, Notify};

use super::support::{
    Harness, Reply, Setup, assert_well_formed, events_of, idle, kinds, object_schema, text_reply,
    tool_reply, user,
};

/// How long a call waits for a sibling that should be running at the same time.
const OVERLAP: Duration = Duration::from_secs(5);

fn id_of(args: &Value) -> String {
    args.get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `(kind, callId)` of every tool event, in log order.
fn tool_events(agent: &dsh_agent_loop::Agent) -> Vec<(String, String)> {
    agent
        .session()
        .events()
        .iter()
        .filter(|event| event.kind == "tool/call" || event.kind == "tool/result")
        .map(|event| {
            let id = event
                .data
                .get("callId")
                .or_else(|| event.data["message"]["source"].get("callId"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned();
            (event.kind.to_string(), id)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(kind, id)| ((*kind).to_owned(), (*id).to_owned()))
        .collect()
}

fn result_texts(agent: &dsh_agent_loop::Agent) -> Vec<String> {
    events_of(agent, "tool/result")
        .iter()
        .map(|event| {
            event.data["message"]["content"][0]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_safe_calls_overlap_and_commit_in_model_order() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(
            None,
            &[
                ("a", "meet", json!({"id": "a"})),
                ("b", "meet", json!({"id": "b"})),
            ],
        )),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    let barrier = Arc::new(Barrier::new(2));
    let b_done = Arc::new(Notify::new());
    let finished = Arc::new(Mutex::new(Vec::new()));
    let (barrier_in, b_done_in, finished_in) = (
        Arc::clone(&barrier),
        Arc::clone(&b_done),
        Arc::clone(&finished),
    );
    h.tool(
        FnTool::new(
            "meet",
            "Waits for its sibling.",
            object_schema(&["id"]),
            move |args, _run| {
                let (barrier, b_done, finished) = (
                    Arc::clone(&barrier_in),
                    Arc::clone(&b_done_in),
                    Arc::clone(&finished_in),
                );
                async move {
                    let id = id_of(&args);
                    let met = tokio::time::timeout(OVERLAP, barrier.wait()).await.is_ok();
                    if id == "a" {
                        // a settles only after b did: b finishes first.
                        let _ = tokio::time::timeout(OVERLAP, b_done.notified()).await;
                    } else {
                        b_done.notify_one();
                    }
                    finished.lock().unwrap().push(id.clone());
                    let verdict = if met { "met" } else { "alone" };
                    Ok(ToolOutput::text(format!("{id} {verdict}")))
                }
            },
        )
        .concurrency_safe(|_| true),
    );
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(result_texts(&agent), ["a met", "b met"], "both ran at once");
    assert_eq!(*finished.lock().unwrap(), ["b", "a"], "b settled first");
    assert_eq!(
        tool_events(&agent),
        pairs(&[
            ("tool/call", "a"),
            ("tool/call", "b"),
            ("tool/result", "a"),
            ("tool/result", "b"),
        ]),
        "results commit in model order"
    );
    let transcript = &super::support::request_transcripts(&h.adapter)[1];
    assert_eq!(transcript[2], "user: result a: a met");
    assert_eq!(transcript[3], "user: result b: b met");
    assert_well_formed(&agent);
    h.shutdown().await;
}

/// A parallel-safe tool that tracks how many of its calls run at once.
fn counting_tool(in_flight: &Arc<AtomicUsize>, peak: &Arc<AtomicUsize>) -> FnTool {
    let (in_flight, peak) = (Arc::clone(in_flight), Arc::clone(peak));
    FnTool::new(
        "count",
        "Counts concurrent calls.",
        object_schema(&["id"]),
        move |args, _run| {
            let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(ToolOutput::text(id_of(&args)))
            }
        },
    )
    .concurrency_safe(|_| true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_of_one_runs_parallel_safe_calls_one_after_another() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxParallelToolCalls": 1})),
            ..Setup::default()
        },
        vec![
            Reply::Chunks(tool_reply(
                None,
                &[
                    ("a", "count", json!({"id": "a"})),
                    ("b", "count", json!({"id": "b"})),
                    ("c", "count", json!({"id": "c"})),
                ],
            )),
            Reply::Chunks(text_reply("done")),
        ],
    )
    .await;
    let (in_flight, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    h.tool(counting_tool(&in_flight, &peak));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(peak.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_events(&agent),
        pairs(&[
            ("tool/call", "a"),
            ("tool/result", "a"),
            ("tool/call", "b"),
            ("tool/result", "b"),
            ("tool/call", "c"),
            ("tool/result", "c"),
        ])
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_never_exceeds_its_cap() {
    let h = Harness::with(
        Setup {
            loop_config: Some(json!({"maxParallelToolCalls": 2})),
            ..Setup::default()
        },
        vec![
            Reply::Chunks(tool_reply(
                None,
                &[
                    ("a", "count", json!({"id": "a"})),
                    ("b", "count", json!({"id": "b"})),
                    ("c", "count", json!({"id": "c"})),
                    ("d", "count", json!({"id": "d"})),
                ],
            )),
            Reply::Chunks(text_reply("done")),
        ],
    )
    .await;
    let (in_flight, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    h.tool(counting_tool(&in_flight, &peak));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(peak.load(Ordering::SeqCst), 2);
    assert_eq!(result_texts(&agent), ["a", "b", "c", "d"]);
    let events = tool_events(&agent);
    let first_result = events.iter().position(|(kind, _)| kind == "tool/result");
    let third_call = events
        .iter()
        .position(|(kind, id)| kind == "tool/call" && id == "c");
    assert!(
        first_result.is_some() && third_call > Some(1),
        "the third call waits for a free slot: {events:?}"
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_call_is_a_barrier_between_parallel_groups() {
    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(
            None,
            &[
                ("p1", "par", json!({"id": "p1"})),
                ("p2", "par", json!({"id": "p2"})),
                ("x", "solo", json!({"id": "x"})),
                ("p3", "par", json!({"id": "p3"})),
                ("p4", "par", json!({"id": "p4"})),
            ],
        )),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    let trace = Arc::new(Mutex::new(Vec::<String>::new()));
    let first_pair = Arc::new(Barrier::new(2));
    let second_pair = Arc::new(Barrier::new(2));
    let (trace_in, first_in, second_in) = (
        Arc::clone(&trace),
        Arc::clone(&first_pair),
        Arc::clone(&second_pair),
    );
    h.tool(
        FnTool::new(
            "par",
            "Parallel-safe; meets its pair.",
            object_schema(&["id"]),
            move |args, _run| {
                let trace = Arc::clone(&trace_in);
                let id = id_of(&args);
                let barrier = if id == "p1" || id == "p2" {
                    Arc::clone(&first_in)
                } else {
                    Arc::clone(&second_in)
                };
                async move {
                    trace.lock().unwrap().push(format!("start {id}"));
                    let met = tokio::time::timeout(OVERLAP, barrier.wait()).await.is_ok();
                    trace.lock().unwrap().push(format!("end {id}"));
                    Ok(ToolOutput::text(if met { "met" } else { "alone" }))
                }
            },
        )
        .concurrency_safe(|_| true),
    );
    let solo_trace = Arc::clone(&trace);
    h.tool(FnTool::new(
        "solo",
        "Exclusive.",
        object_schema(&["id"]),
        move |_args, _run| {
            let trace = Arc::clone(&solo_trace);
            async move {
                trace.lock().unwrap().push("start x".into());
                tokio::time::sleep(Duration::from_millis(20)).await;
                trace.lock().unwrap().push("end x".into());
                Ok(ToolOutput::text("solo done"))
            }
        },
    ));
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(
        result_texts(&agent),
        ["met", "met", "solo done", "met", "met"]
    );
    let trace = trace.lock().unwrap().clone();
    let at = |entry: &str| trace.iter().position(|e| e == entry).unwrap();
    assert!(
        at("start x") > at("end p1") && at("start x") > at("end p2"),
        "{trace:?}"
    );
    assert!(
        at("end x") < at("start p3") && at("end x") < at("start p4"),
        "{trace:?}"
    );
    assert_eq!(
        tool_events(&agent),
        pairs(&[
            ("tool/call", "p1"),
            ("tool/call", "p2"),
            ("tool/result", "p1"),
            ("tool/result", "p2"),
            ("tool/call", "x"),
            ("tool/result", "x"),
            ("tool/call", "p3"),
            ("tool/call", "p4"),
            ("tool/result", "p3"),
            ("tool/result", "p4"),
        ])
    );
    assert_eq!(
        kinds(&agent).iter().filter(|k| *k == "step/start").count(),
        2
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipeline_listeners_see_calls_in_model_order_and_a_denial_is_an_error_result() {
    use dsh_kernel::Next;
    use dsh_tools::{
        PostExecute, PostToolDecision, PreToolDecision, ToolError, ToolExecution, ToolsPostExecute,
        ToolsPreExecute,
    };

    let h = Harness::new(vec![
        Reply::Chunks(tool_reply(
            None,
            &[
                ("a", "nap", json!({"id": "a"})),
                ("b", "nap", json!({"id": "b"})),
                ("c", "nap", json!({"id": "c"})),
            ],
        )),
        Reply::Chunks(text_reply("done")),
    ])
    .await;
    let ran = Arc::new(Mutex::new(Vec::new()));
    let bodies = Arc::clone(&ran);
    h.tool(
        FnTool::new(
            "nap",
            "Sleeps less the later it comes.",
            object_schema(&["id"]),
            move |args, _run| {
                let bodies = Arc::clone(&bodies);
                async move {
                    let id = id_of(&args);
                    let nap = if id == "a" { 60 } else { 5 };
                    tokio::time::sleep(Duration::from_millis(nap)).await;
                    bodies.lock().unwrap().push(id.clone());
                    Ok(ToolOutput::text(format!("{id} slept")))
                }
            },
        )
        .concurrency_safe(|_| true),
    );
    let order = Arc::new(Mutex::new(Vec::new()));
    let pre = Arc::clone(&order);
    h.ctx
        .on::<ToolsPreExecute>(
            move |exec: ToolExecution,
                  next: Next<ToolExecution, Result<PreToolDecision, ToolError>>| {
                let id = exec.call_id().to_owned();
                pre.lock().unwrap().push(format!("pre {id}"));
                async move {
                    if id == "b" {
                        return Ok(PreToolDecision::Deny {
                            reason: "b is not allowed".into(),
                        });
                    }
                    next.run(exec).await
                }
            },
        )
        .unwrap();
    let post = Arc::clone(&order);
    h.ctx
        .on::<ToolsPostExecute>(
            move |args: Arc<PostExecute>,
                  next: Next<Arc<PostExecute>, Result<PostToolDecision, ToolError>>| {
                post.lock()
                    .unwrap()
                    .push(format!("post {}", args.execution.call_id()));
                next.run(args)
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("go")).unwrap();
    idle(&agent).await;

    assert_eq!(
        *order.lock().unwrap(),
        ["pre a", "pre b", "pre c", "post a", "post b", "post c"]
    );
    assert_eq!(
        *ran.lock().unwrap(),
        ["c", "a"],
        "b never ran; c settled first"
    );
    assert_eq!(
        result_texts(&agent),
        ["a slept", "Error: b is not allowed", "c slept"]
    );
    assert_eq!(
        tool_events(&agent),
        pairs(&[
            ("tool/call", "a"),
            ("tool/call", "b"),
            ("tool/call", "c"),
            ("tool/result", "a"),
            ("tool/result", "b"),
            ("tool/result", "c"),
        ])
    );
    assert_well_formed(&agent);
    h.shutdown().await;
}
