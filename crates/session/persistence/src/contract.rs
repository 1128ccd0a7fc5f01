//! The backend-neutral contract every [`SessionPersistence`] must keep (dsh's
//! `runPersistenceContract`), for a backend's own test suite.
//!
//! ```ignore
//! let failures = dsh_persistence::contract::run(|| open_fresh_store()).await;
//! assert!(failures.is_empty(), "{failures:#?}");
//! ```
//!
//! `open` is called once per case for a fresh, empty store; the returned opener is called again
//! inside a case to reopen the same storage, as a new process would.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use dsh_protocol::json::to_js_string;
use dsh_protocol::kinds;
use dsh_session::repair::{OUTCOME_UNKNOWN_TEXT, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN};
use dsh_session::{SessionEvent, SessionHeader, SurfaceOp};
use serde_json::{Value, json};

use crate::error::PersistenceError;
use crate::seam::SessionPersistence;

/// Opens the store under test; each call opens the same storage anew.
pub type Opener = Arc<dyn Fn() -> Arc<dyn SessionPersistence> + Send + Sync>;

type CaseFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// One contract case: its name and body.
pub type Case = (&'static str, fn(Opener) -> CaseFuture);

/// Lists cases by function name.
macro_rules! cases {
    ($($case:ident),* $(,)?) => {
        &[$((stringify!($case), |open: Opener| -> CaseFuture { Box::pin($case(open)) })),*]
    };
}

/// The contract's cases, by name.
pub const CASES: &[Case] = cases![
    round_trip_is_byte_identical,
    an_unsafe_created_at_is_refused_without_reserving_the_id,
    an_interrupted_turn_is_closed_and_stays_continuable,
    an_unstarted_tool_call_gets_a_retryable_result,
    a_started_tool_call_gets_an_outcome_unknown_result,
    list_excludes_sessions_never_appended,
    read_from_returns_the_stored_suffix,
    revisions_change_only_on_writes,
    append_refuses_a_wrong_first_seq,
    append_refuses_a_gap_inside_a_batch,
    append_refuses_data_json_cannot_carry,
    ids_are_unique_and_missing_ids_are_named,
    prepare_returns_a_session_that_resumes_after_an_end_seed,
];

/// Runs every case against fresh stores from `open`; returns `"case: failure"` lines.
pub async fn run(open: impl Fn() -> Opener) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, case) in CASES {
        if let Err(failure) = case(open()).await {
            failures.push(format!("{name}: {failure}"));
        }
    }
    failures
}

fn check(condition: bool, what: impl Into<String>) -> Result<(), String> {
    if condition { Ok(()) } else { Err(what.into()) }
}

fn equal<T: PartialEq + std::fmt::Debug>(actual: T, expected: T, what: &str) -> Result<(), String> {
    check(
        actual == expected,
        format!("{what}: expected {expected:?}, got {actual:?}"),
    )
}

fn fail(error: PersistenceError) -> String {
    error.to_string()
}

fn header(id: &str) -> SessionHeader {
    SessionHeader::new(id, 1_700_000_000_000).with_cwd("/work")
}

fn event(kind: &str, seq: u64, data: Value) -> SessionEvent {
    SessionEvent::new(
        kind,
        seq,
        1_700_000_000_000 + i64::try_from(seq).unwrap_or(0),
        data,
    )
}

fn surface(kind: &str, seq: u64, data: Value) -> SessionEvent {
    let mut event = event(kind, seq, data);
    event.surface_op = Some(SurfaceOp::Append);
    event
}

fn user(seq: u64, text: &str) -> SessionEvent {
    surface(
        kinds::USER_MESSAGE,
        seq,
        json!({"id": format!("u{seq}"), "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}),
    )
}

fn assistant(seq: u64, turn: u64, content: Value) -> SessionEvent {
    surface(
        kinds::ASSISTANT_MESSAGE,
        seq,
        json!({"turn": turn, "step": 1, "message": {"id": format!("a{seq}"), "role": "assistant",
            "content": content, "source": {"kind": "model", "provider": "mock", "model": "mock"}}}),
    )
}

/// Turn 1, balanced: seqs 0..=5.
fn one_turn() -> Vec<SessionEvent> {
    vec![
        event(kinds::TURN_START, 0, json!({"turn": 1})),
        user(1, "hi ✓ \u{1F600}"),
        event(kinds::STEP_START, 2, json!({"turn": 1, "step": 1})),
        assistant(3, 1, json!([{"type": "text", "text": "hello"}])),
        event(kinds::STEP_END, 4, json!({"turn": 1, "step": 1})),
        event(
            kinds::TURN_END,
            5,
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        ),
    ]
}

fn texts(events: &[SessionEvent]) -> Vec<String> {
    events.iter().map(to_js_string).collect()
}

fn kinds(events: &[SessionEvent]) -> Vec<&str> {
    events.iter().map(|event| event.kind.as_ref()).collect()
}

async fn stored(open: &Opener, id: &str, events: Vec<SessionEvent>) -> Result<(), String> {
    let store = open();
    store.create(header(id)).await.map_err(fail)?;
    store.append(id, events).await.map_err(fail)
}

async fn revision_of(store: &dyn SessionPersistence, id: &str) -> Result<Option<String>, String> {
    let snapshots = store.list_snapshots().await.map_err(fail)?;
    Ok(snapshots
        .into_iter()
        .find(|s| s.header.id == id)
        .map(|s| s.revision))
}

async fn round_trip_is_byte_identical(open: Opener) -> Result<(), String> {
    let mut log = one_turn();
    log.push(event(
        kinds::GOAL_CHANGE,
        6,
        json!({"z": 1, "a": [1.5, -2, 1e21, "é"], "n": null}),
    ));
    let mut newer = event("plugin/from-a-newer-harness", 7, json!({"kept": true}));
    newer.ignorable = true;
    log.push(newer);
    stored(&open, "s1", log.clone()).await?;
    let loaded = open().load("s1").await.map_err(fail)?;
    equal(loaded.header.id.as_str(), "s1", "header id")?;
    equal(loaded.header.cwd.as_deref(), Some("/work"), "header cwd")?;
    equal(loaded.header.version, 0, "header version")?;
    equal(texts(&loaded.events), texts(&log), "events")
}

async fn an_unsafe_created_at_is_refused_without_reserving_the_id(
    open: Opener,
) -> Result<(), String> {
    let store = open();
    let mut bad = header("unsafe-created-at");
    bad.created_at = 1 << 60;
    check(
        store.create(bad).await.is_err(),
        "a createdAt beyond 2^53 was accepted",
    )?;
    store
        .create(header("unsafe-created-at"))
        .await
        .map_err(fail)?;
    store
        .append("unsafe-created-at", one_turn())
        .await
        .map_err(fail)?;
    let loaded = store.load("unsafe-created-at").await.map_err(fail)?;
    equal(loaded.header.created_at, 1_700_000_000_000, "createdAt")
}

async fn an_interrupted_turn_is_closed_and_stays_continuable(open: Opener) -> Result<(), String> {
    stored(&open, "interrupted", one_turn()).await?;
    let store = open();
    store
        .append(
            "interrupted",
            vec![
                event(kinds::TURN_START, 6, json!({"turn": 2})),
                event(kinds::STEP_START, 7, json!({"turn": 2, "step": 1})),
            ],
        )
        .await
        .map_err(fail)?;
    let before = revision_of(store.as_ref(), "interrupted").await?;
    let inspected = store.inspect("interrupted").await.map_err(fail)?;
    equal(
        revision_of(store.as_ref(), "interrupted").await?,
        before.clone(),
        "revision after inspect",
    )?;
    let expected = [
        kinds::TURN_START,
        kinds::USER_MESSAGE,
        kinds::STEP_START,
        kinds::ASSISTANT_MESSAGE,
        kinds::STEP_END,
        kinds::TURN_END,
        kinds::TURN_START,
        kinds::STEP_START,
        kinds::STEP_END,
        kinds::TURN_END,
    ];
    equal(
        kinds(&inspected.events),
        expected.to_vec(),
        "inspected kinds",
    )?;
    let loaded = open().load("interrupted").await.map_err(fail)?;
    check(
        revision_of(store.as_ref(), "interrupted").await? != before,
        "load did not commit the repair",
    )?;
    equal(kinds(&loaded.events), expected.to_vec(), "loaded kinds")?;
    let seqs: Vec<u64> = loaded.events.iter().map(|e| e.seq).collect();
    equal(seqs, (0..10).collect(), "seqs")?;
    let reason = loaded
        .events
        .last()
        .and_then(|e| e.data.get("reason"))
        .cloned();
    equal(reason, Some(json!({"kind": "interrupted"})), "reason")?;
    let store = open();
    store
        .append(
            "interrupted",
            vec![
                event(kinds::TURN_START, 10, json!({"turn": 3})),
                event(
                    kinds::TURN_END,
                    11,
                    json!({"turn": 3, "reason": {"kind": "completed"}}),
                ),
            ],
        )
        .await
        .map_err(fail)?;
    let reloaded = open().load("interrupted").await.map_err(fail)?;
    equal(reloaded.events.len(), 12, "events after continuing")
}

async fn an_unstarted_tool_call_gets_a_retryable_result(open: Opener) -> Result<(), String> {
    let mut log = one_turn();
    log.extend([
        event(kinds::TURN_START, 6, json!({"turn": 2})),
        event(kinds::STEP_START, 7, json!({"turn": 2, "step": 1})),
        assistant(
            8,
            2,
            json!([{"type": "tool-call", "id": "call-x", "name": "bash", "arguments": "{}"}]),
        ),
    ]);
    stored(&open, "unstarted", log).await?;
    let loaded = open().load("unstarted").await.map_err(fail)?;
    let tail: Vec<&str> = kinds(&loaded.events).into_iter().skip(6).collect();
    equal(
        tail,
        vec![
            kinds::TURN_START,
            kinds::STEP_START,
            kinds::ASSISTANT_MESSAGE,
            kinds::TOOL_RESULT,
            kinds::STEP_END,
            kinds::TURN_END,
        ],
        "kinds",
    )?;
    let result = loaded
        .events
        .iter()
        .find(|e| e.kind == kinds::TOOL_RESULT)
        .ok_or("no tool/result")?;
    equal(
        result.data.pointer("/error/code").and_then(Value::as_str),
        Some(TOOL_NOT_STARTED),
        "error code",
    )?;
    equal(
        result.data.pointer("/message/source"),
        Some(&json!({"kind": "tool", "callId": "call-x"})),
        "source",
    )?;
    equal(
        result
            .data
            .pointer("/message/content/0/isError")
            .and_then(Value::as_bool),
        Some(true),
        "isError",
    )?;
    equal(
        result
            .data
            .pointer("/message/content/0/toolCallId")
            .and_then(Value::as_str),
        Some("call-x"),
        "toolCallId",
    )
}

async fn a_started_tool_call_gets_an_outcome_unknown_result(open: Opener) -> Result<(), String> {
    let log = vec![
        event(kinds::TURN_START, 0, json!({"turn": 1})),
        event(kinds::STEP_START, 1, json!({"turn": 1, "step": 1})),
        assistant(
            2,
            1,
            json!([{"type": "tool-call", "id": "call-risk", "name": "write", "arguments": "{}"}]),
        ),
        event(
            kinds::TOOL_CALL,
            3,
            json!({"turn": 1, "step": 1, "callId": "call-risk", "name": "write", "arguments": "{}"}),
        ),
    ];
    stored(&open, "unknown-outcome", log).await?;
    let loaded = open().load("unknown-outcome").await.map_err(fail)?;
    let result = loaded
        .events
        .iter()
        .find(|e| e.kind == kinds::TOOL_RESULT)
        .ok_or("no tool/result")?;
    equal(
        result.data.pointer("/error"),
        Some(&json!({"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN})),
        "error",
    )?;
    equal(
        result
            .data
            .pointer("/message/content/0/content/0/text")
            .and_then(Value::as_str),
        Some(OUTCOME_UNKNOWN_TEXT),
        "text",
    )?;
    equal(
        result.source_event_seqs.clone(),
        Some(vec![3]),
        "provenance",
    )
}

async fn list_excludes_sessions_never_appended(open: Opener) -> Result<(), String> {
    let store = open();
    store.create(header("empty")).await.map_err(fail)?;
    check(
        store.list().await.map_err(fail)?.is_empty(),
        "an unappended session is listed",
    )?;
    store.append("empty", Vec::new()).await.map_err(fail)?;
    check(
        open().list().await.map_err(fail)?.is_empty(),
        "an empty append materialized the session",
    )?;
    stored(&open, "full", one_turn()).await?;
    let ids: Vec<String> = open()
        .list()
        .await
        .map_err(fail)?
        .into_iter()
        .map(|h| h.id)
        .collect();
    equal(ids, vec!["full".to_owned()], "listed ids")?;
    let listing = open().list_with_unreadable().await.map_err(fail)?;
    equal(
        listing.sessions.into_iter().map(|h| h.id).collect(),
        vec!["full".to_owned()],
        "ids listed with the unreadable ones",
    )?;
    equal(listing.unreadable, Vec::new(), "unreadable artifacts")
}

async fn read_from_returns_the_stored_suffix(open: Opener) -> Result<(), String> {
    stored(&open, "suffix", one_turn()).await?;
    let store = open();
    let before = revision_of(store.as_ref(), "suffix").await?;
    let suffix = store.read_from("suffix", 3).await.map_err(fail)?;
    equal(
        texts(&suffix),
        texts(one_turn().get(3..).unwrap_or_default()),
        "suffix",
    )?;
    equal(
        store.read_from("suffix", 6).await.map_err(fail)?.len(),
        0,
        "suffix at the end",
    )?;
    equal(
        store.read_from("suffix", 99).await.map_err(fail)?.len(),
        0,
        "suffix past the end",
    )?;
    equal(
        revision_of(store.as_ref(), "suffix").await?,
        before,
        "revision after read_from",
    )
}

async fn revisions_change_only_on_writes(open: Opener) -> Result<(), String> {
    stored(&open, "rev", one_turn()).await?;
    let store = open();
    let first = revision_of(store.as_ref(), "rev")
        .await?
        .ok_or("no revision")?;
    let again = revision_of(store.as_ref(), "rev")
        .await?
        .ok_or("no revision")?;
    equal(again.clone(), first.clone(), "revision while unchanged")?;
    store
        .append("rev", vec![event(kinds::GOAL_CHANGE, 6, json!({}))])
        .await
        .map_err(fail)?;
    let after = revision_of(store.as_ref(), "rev")
        .await?
        .ok_or("no revision")?;
    check(after != first, "revision unchanged after an append")
}

async fn append_refuses_a_wrong_first_seq(open: Opener) -> Result<(), String> {
    stored(&open, "mismatch", one_turn()).await?;
    let error = open()
        .append("mismatch", vec![event(kinds::GOAL_CHANGE, 7, json!({}))])
        .await;
    let text = error.err().map(|e| e.to_string()).unwrap_or_default();
    equal(
        text.as_str(),
        "append seq mismatch for \"mismatch\": expected 6 at index 0, got 7",
        "error",
    )
}

async fn append_refuses_a_gap_inside_a_batch(open: Opener) -> Result<(), String> {
    let store = open();
    store.create(header("gap")).await.map_err(fail)?;
    let batch = vec![
        event(kinds::GOAL_CHANGE, 0, json!({})),
        event(kinds::GOAL_CHANGE, 2, json!({})),
    ];
    let text = store
        .append("gap", batch)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    equal(
        text.as_str(),
        "append seq mismatch for \"gap\": expected 1 at index 1, got 2",
        "error",
    )?;
    check(
        open().list().await.map_err(fail)?.is_empty(),
        "a refused batch was written",
    )
}

async fn append_refuses_data_json_cannot_carry(open: Opener) -> Result<(), String> {
    let store = open();
    store.create(header("nonjson")).await.map_err(fail)?;
    let negative_zero: Value = serde_json::from_str("{\"x\":-0.0}").map_err(|e| e.to_string())?;
    let error = store
        .append("nonjson", vec![event("plugin/bad", 0, negative_zero)])
        .await;
    let text = error.err().map(|e| e.to_string()).unwrap_or_default();
    check(
        text.contains("plugin/bad") && text.contains("not losslessly JSON-serializable"),
        format!("error names the type: {text}"),
    )
}

async fn ids_are_unique_and_missing_ids_are_named(open: Opener) -> Result<(), String> {
    stored(&open, "dup", one_turn()).await?;
    check(
        open().create(header("dup")).await.is_err(),
        "a stored id was created again",
    )?;
    let store = open();
    store.create(header("fresh")).await.map_err(fail)?;
    check(
        store.create(header("fresh")).await.is_err(),
        "a registered id was created again",
    )?;
    let missing = open()
        .load("missing")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    equal(missing.as_str(), "session \"missing\" not found", "missing")
}

async fn prepare_returns_a_session_that_resumes_after_an_end_seed(
    open: Opener,
) -> Result<(), String> {
    stored(&open, "resume", one_turn()).await?;
    let prepared = open().prepare("resume").await.map_err(fail)?;
    let session = prepared.session;
    equal(session.first_live_seq(), 6, "first live seq")?;
    equal(session.events().len(), 7, "events with the end-seed")?;
    equal(
        session.events().last().map(|e| e.kind.to_string()),
        Some(kinds::SESSION_END_SEED.into()),
        "last event",
    )
}
