//! Wakes racing the end of an activity: a follow-up sent while the driver winds down must
//! run, and `when_idle` must not return while a turn it started is still running.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use dsh_agent_loop::events::{AgentStatusChanged, StatusChange};
use dsh_agent_loop::{Agent, AgentStatus, InboxTarget};
use dsh_session::{EventNotice, SessionEventAppended};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::Notify;

use super::support::{
    Harness, PATIENCE, Reply, assert_well_formed, events_of, text_reply, turn_ends, user,
    user_texts, within,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_idle_waits_for_a_turn_started_by_an_idle_listener() {
    let gate = Arc::new(Notify::new());
    let h = Harness::new(vec![
        Reply::Chunks(text_reply("first reply")),
        Reply::Gated(Arc::clone(&gate), text_reply("second reply")),
    ])
    .await;
    let slot: Arc<OnceLock<Arc<Agent>>> = Arc::default();
    let target = Arc::clone(&slot);
    let sent = Arc::new(std::sync::atomic::AtomicBool::new(false));
    h.ctx
        .on::<AgentStatusChanged>(move |change: &StatusChange| {
            if change.status == AgentStatus::Idle
                && !sent.swap(true, std::sync::atomic::Ordering::SeqCst)
                && let Some(agent) = target.get()
            {
                agent.followup(user("sent from the idle listener"))?;
            }
            Ok(())
        })
        .unwrap();
    let agent = h.agent().await;
    slot.set(Arc::clone(&agent)).unwrap();
    let release = Arc::clone(&gate);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        release.notify_one();
    });
    agent.followup(user("first")).unwrap();
    within("idle", agent.when_idle()).await;

    assert_eq!(
        agent.status(),
        AgentStatus::Idle,
        "when_idle returned while the second turn runs; log: {:?}",
        super::support::kinds(&agent)
    );
    assert_eq!(
        turn_ends(&agent),
        [json!({"kind": "completed"}), json!({"kind": "completed"})]
    );
    assert_eq!(user_texts(&agent), ["first", "sent from the idle listener"]);
    h.shutdown().await;
}

/// Busy-waits `micros` microseconds (a sleep is far coarser than the window probed).
fn spin(micros: u64) {
    let until = Instant::now() + Duration::from_micros(micros);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_racing_the_end_of_a_turn_is_never_stranded() {
    const TURNS: usize = 150;
    let h = Harness::new(vec![]).await;
    h.adapter
        .set_fallback(Arc::new(|_index, _request| text_reply("pong")));
    let slot: Arc<OnceLock<Arc<Agent>>> = Arc::default();
    let target = Arc::clone(&slot);
    h.ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| {
            let Some(agent) = target.get() else {
                return Ok(());
            };
            if notice.session.id() != agent.id() || notice.event.kind != "turn/end" {
                return Ok(());
            }
            let turn = notice.event.data["turn"].as_u64().unwrap_or_default();
            if usize::try_from(turn).unwrap_or(usize::MAX) >= TURNS {
                return Ok(());
            }
            // From another thread, a moment after the turn ended: sweeping the delay
            // probes the whole wind-down of the driver.
            let agent = Arc::clone(agent);
            // `followup` spawns the driver, so the thread enters the runtime.
            let runtime = tokio::runtime::Handle::current();
            std::thread::spawn(move || {
                let _entered = runtime.enter();
                spin(turn % 60);
                agent.followup(user(&format!("ping {turn}"))).unwrap();
            });
            Ok(())
        })
        .unwrap();
    let agent = h.agent().await;
    slot.set(Arc::clone(&agent)).unwrap();
    agent.followup(user("ping 0")).unwrap();

    let started = Instant::now();
    let mut stranded_since: Option<Instant> = None;
    loop {
        let ended = events_of(&agent, "turn/end").len();
        if ended >= TURNS {
            break;
        }
        let stranded = agent.status() == AgentStatus::Idle
            && !agent.pending(InboxTarget::NextTurn).unwrap().is_empty();
        match (stranded, stranded_since) {
            (true, None) => stranded_since = Some(Instant::now()),
            (true, Some(since)) if since.elapsed() > Duration::from_millis(200) => panic!(
                "after {ended} turns a follow-up waits in the inbox of an idle agent: {:?}",
                agent.pending(InboxTarget::NextTurn).unwrap()
            ),
            (false, _) => stranded_since = None,
            _ => {}
        }
        assert!(started.elapsed() < PATIENCE, "only {ended} turns ran");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    within("idle", agent.when_idle()).await;
    assert_well_formed(&agent);
    // One turn per follow-up, each with exactly its message.
    let mut per_turn: Vec<usize> = Vec::new();
    for event in agent.session().events() {
        match event.kind.as_ref() {
            "turn/start" => per_turn.push(0),
            "user/message" => *per_turn.last_mut().unwrap() += 1,
            _ => {}
        }
    }
    let empty: Vec<usize> = per_turn
        .iter()
        .enumerate()
        .filter(|(_, count)| **count != 1)
        .map(|(index, _)| index + 1)
        .collect();
    let turn_log = |turn: usize| -> Vec<String> {
        let events = agent.session().events();
        let start = events
            .iter()
            .position(|e| e.kind == "turn/start" && e.data["turn"] == json!(turn))
            .unwrap();
        events[start..]
            .iter()
            .take_while(|e| !(e.kind == "turn/end" && e.data["turn"] == json!(turn)))
            .map(|e| e.kind.to_string())
            .chain(std::iter::once("turn/end".to_owned()))
            .collect()
    };
    assert!(
        empty.is_empty(),
        "turns without exactly one user message (a wake whose message another turn \
         already claimed): {empty:?}, the first logs {:?}",
        empty.first().map(|turn| turn_log(*turn))
    );
    assert_eq!(per_turn.len(), TURNS);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_whose_message_was_already_claimed_opens_no_empty_turn() {
    let gate = Arc::new(Notify::new());
    let h = Harness::new(vec![
        Reply::Gated(Arc::clone(&gate), text_reply("A reply")),
        Reply::Chunks(text_reply("B reply")),
    ])
    .await;
    // Holds the sender of B between its splice and its wake.
    let (inserted_tx, inserted_rx) = std::sync::mpsc::channel::<()>();
    let (resume_tx, resume_rx) = std::sync::mpsc::channel::<()>();
    let inserted_tx = std::sync::Mutex::new(inserted_tx);
    let resume_rx = std::sync::Mutex::new(resume_rx);
    h.ctx
        .on::<dsh_agent_loop::events::AgentInboxInserted>(
            move |notice: &dsh_agent_loop::events::InboxNotice| {
                if notice.message.content == [dsh_llm::ContentBlock::text("B")] {
                    inserted_tx.lock().unwrap().send(()).unwrap();
                    resume_rx.lock().unwrap().recv().unwrap();
                }
                Ok(())
            },
        )
        .unwrap();
    let agent = h.agent().await;
    agent.followup(user("A")).unwrap();
    super::support::eventually("turn 1 to wait for its reply", || {
        h.adapter.request_count() == 1
    })
    .await;

    let runtime = tokio::runtime::Handle::current();
    let sender_agent = Arc::clone(&agent);
    let sender = std::thread::spawn(move || {
        let _entered = runtime.enter();
        sender_agent.followup(user("B")).unwrap();
    });
    tokio::task::spawn_blocking(move || inserted_rx.recv().unwrap())
        .await
        .unwrap();
    // B is queued; its sender has not woken the driver yet. Turn 1 ends, and the running
    // driver claims B for turn 2 and goes idle.
    gate.notify_one();
    super::support::eventually("turn 2 to end and the agent to idle", || {
        events_of(&agent, "turn/end").len() == 2 && agent.status() == AgentStatus::Idle
    })
    .await;
    // Now B's sender wakes the driver: nothing is pending any more.
    resume_tx.send(()).unwrap();
    tokio::task::spawn_blocking(move || sender.join().unwrap())
        .await
        .unwrap();
    within("idle", agent.when_idle()).await;

    assert_eq!(user_texts(&agent), ["A", "B"]);
    assert_eq!(
        events_of(&agent, "turn/start").len(),
        2,
        "log: {:?}",
        super::support::kinds(&agent)
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_listener_may_touch_the_inbox_during_a_splice() {
    let h = Harness::new(vec![Reply::Chunks(text_reply("first"))]).await;
    let slot: Arc<OnceLock<Arc<Agent>>> = Arc::default();
    let target = Arc::clone(&slot);
    let nested = Arc::new(std::sync::atomic::AtomicBool::new(false));
    h.ctx
        .on::<SessionEventAppended>(move |notice: &EventNotice| {
            let Some(agent) = target.get() else {
                return Ok(());
            };
            if notice.session.id() != agent.id()
                || notice.event.kind != "agent/inbox/spliced"
                || notice.event.data["inserted"]
                    .as_array()
                    .is_none_or(Vec::is_empty)
                || nested.swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                return Ok(());
            }
            // Reading the inbox, then a nested send (which may be refused, as dsh refuses
            // a reentrant append) must both return.
            let _ = agent.pending(InboxTarget::NextTurn);
            let _ = agent.followup(user("queued listener message"));
            Ok(())
        })
        .unwrap();
    let agent = h.agent().await;
    slot.set(Arc::clone(&agent)).unwrap();

    // On its own thread: a deadlock must not take a runtime worker with it.
    let runtime = tokio::runtime::Handle::current();
    let sender_agent = Arc::clone(&agent);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _entered = runtime.enter();
        let sent = sender_agent.followup(user("outer message"));
        let _ = done_tx.send(sent.is_ok());
    });
    let returned =
        tokio::task::spawn_blocking(move || done_rx.recv_timeout(Duration::from_secs(5)))
            .await
            .unwrap();
    assert_eq!(returned, Ok(true), "the outer follow-up never returned");
    within("idle", agent.when_idle()).await;
    assert_eq!(user_texts(&agent)[0], "outer message");
    h.shutdown().await;
}
