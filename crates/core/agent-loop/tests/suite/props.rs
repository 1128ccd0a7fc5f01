//! Property tests: any script of text and tool replies, sent as bursts of follow-ups, gives
//! one turn per follow-up and a well-formed log (contiguous seqs, balanced turns and steps,
//! every `tool/call` answered once, results in model order), and every request extends the
//! one before it.

use std::sync::Arc;

use dsh_tools::{FnTool, ToolOutput};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::support::{
    Harness, Reply, assert_well_formed, events_of, idle, object_schema, text_reply, tool_reply,
    turn_ends, user, user_texts,
};

/// One turn of the script: tool rounds (each a list of calls, `true` = parallel-safe), then
/// a closing text.
#[derive(Debug, Clone)]
struct TurnPlan {
    rounds: Vec<Vec<bool>>,
}

fn turn_plan() -> impl Strategy<Value = TurnPlan> {
    prop::collection::vec(prop::collection::vec(any::<bool>(), 1..=3), 0..=2)
        .prop_map(|rounds| TurnPlan { rounds })
}

/// Bursts of turns: each burst's follow-ups are sent together, then the test waits for idle.
fn bursts() -> impl Strategy<Value = Vec<Vec<TurnPlan>>> {
    prop::collection::vec(prop::collection::vec(turn_plan(), 1..=3), 1..=3)
}

fn tool(name: &str, parallel: bool) -> FnTool {
    let tool = FnTool::new(
        name,
        "Answers with its id.",
        object_schema(&["id"]),
        |args, _run| async move {
            tokio::task::yield_now().await;
            let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
            Ok(ToolOutput::text(format!("ran {id}")))
        },
    );
    if parallel {
        tool.concurrency_safe(|_| true)
    } else {
        tool
    }
}

async fn run(bursts: Vec<Vec<TurnPlan>>) {
    let h = Harness::new(vec![]).await;
    h.tool(tool("par", true));
    h.tool(tool("ex", false));
    let agent = h.agent().await;
    let mut sent = Vec::new();
    let mut steps = 0;
    let mut turn = 0;
    for burst in bursts {
        // The burst's first reply waits until every follow-up of the burst is queued.
        let gate = Arc::new(Notify::new());
        let mut first = true;
        let mut texts = Vec::new();
        for plan in burst {
            turn += 1;
            let mut replies = Vec::new();
            for (round, calls) in plan.rounds.iter().enumerate() {
                let calls: Vec<(String, &str, Value)> = calls
                    .iter()
                    .enumerate()
                    .map(|(index, parallel)| {
                        let id = format!("t{turn}r{round}c{index}");
                        let name = if *parallel { "par" } else { "ex" };
                        (id.clone(), name, json!({"id": id}))
                    })
                    .collect();
                let borrowed: Vec<(&str, &str, Value)> = calls
                    .iter()
                    .map(|(id, name, args)| (id.as_str(), *name, args.clone()))
                    .collect();
                replies.push(tool_reply(None, &borrowed));
            }
            replies.push(text_reply(&format!("done {turn}")));
            steps += replies.len();
            for chunks in replies {
                if first {
                    h.adapter.push(Reply::Gated(Arc::clone(&gate), chunks));
                    first = false;
                } else {
                    h.adapter.push(Reply::Chunks(chunks));
                }
            }
            texts.push(format!("prompt {turn}"));
        }
        for text in &texts {
            agent.followup(user(text)).unwrap();
        }
        gate.notify_one();
        sent.extend(texts);
        idle(&agent).await;
    }

    assert_well_formed(&agent);
    assert_eq!(
        user_texts(&agent),
        sent,
        "one user message per follow-up, in order"
    );
    let turns: Vec<Value> = events_of(&agent, "turn/start")
        .iter()
        .map(|event| event.data["turn"].clone())
        .collect();
    let expected: Vec<Value> = (1..=sent.len()).map(|turn| json!(turn)).collect();
    assert_eq!(turns, expected, "one turn per follow-up");
    assert!(
        turn_ends(&agent)
            .iter()
            .all(|reason| *reason == json!({"kind": "completed"}))
    );
    assert_eq!(events_of(&agent, "step/start").len(), steps);
    let requests = h.adapter.requests();
    assert_eq!(requests.len(), steps, "one request per step");
    for pair in requests.windows(2) {
        assert!(
            pair[1].messages.starts_with(&pair[0].messages),
            "each request extends the previous one"
        );
    }
    // Within each step, results commit in the order the model asked for them.
    let events = agent.session().events();
    let mut calls: Vec<String> = Vec::new();
    let mut results: Vec<String> = Vec::new();
    for event in &events {
        match event.kind.as_ref() {
            "tool/call" => calls.push(event.data["callId"].as_str().unwrap().to_owned()),
            "tool/result" => results.push(
                event.data["message"]["source"]["callId"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ),
            "step/end" => {
                assert_eq!(results, calls, "results in model order");
                calls.clear();
                results.clear();
            }
            _ => {}
        }
    }
    h.shutdown().await;
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_script_gives_a_well_formed_log(bursts in bursts()) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(run(bursts));
    }
}
