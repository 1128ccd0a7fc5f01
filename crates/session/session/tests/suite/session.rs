//! The log: contiguous appends, refusals that change nothing, seeds and their end marker,
//! derived messages.

use dsh_session::{
    Session, SessionError, SessionEvent, SessionHeader, SurfaceIntent, SurfaceOp, validate_log,
};
use serde_json::{Value, json};

fn header() -> SessionHeader {
    SessionHeader::new("s", 1)
}

fn user(text: &str) -> Value {
    json!({"id": text, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}})
}

#[test]
fn appends_are_contiguous_and_refusals_change_nothing() {
    let mut session = Session::new(header()).unwrap();
    session
        .append_at(
            "turn/start",
            json!({"turn": 1}),
            SurfaceIntent::default(),
            5,
        )
        .unwrap();
    let error = session.append_at("user/message", user("a"), SurfaceIntent::default(), 5);
    assert!(
        error
            .unwrap_err()
            .to_string()
            .contains("requires a surfaceOp marker")
    );
    let negative_zero: Value = serde_json::from_str("{\"x\":-0}").unwrap();
    assert!(matches!(
        session.append("plugin/x", negative_zero, SurfaceIntent::default()),
        Err(SessionError::NotJson { .. })
    ));
    let event = session
        .append_at("user/message", user("a"), SurfaceIntent::append(), 6)
        .unwrap();
    assert_eq!(event.seq, 1);
    assert_eq!(session.next_seq(), 2);
}

#[test]
fn a_seed_gets_one_end_marker() {
    let session = Session::from_seed(header(), vec![]).unwrap();
    assert_eq!(session.events().len(), 1);
    assert_eq!(session.first_live_seq(), 0);
    let seed: Vec<SessionEvent> = session.events().iter().map(|e| (**e).clone()).collect();
    let reopened = Session::from_seed(header(), seed).unwrap();
    assert_eq!(
        reopened.events().len(),
        1,
        "reopening does not grow the log"
    );
    assert_eq!(reopened.first_live_seq(), 1);
}

#[test]
fn a_long_log_reports_its_first_failure() {
    let mut events: Vec<SessionEvent> = (0..5000)
        .map(|seq| SessionEvent::new("goal/change", seq, 0, json!({"n": seq})))
        .collect();
    events[4500] = SessionEvent::new("user/message", 4500, 0, json!({"id": ""}));
    events[4500].surface_op = Some(SurfaceOp::Append);
    let error = validate_log(&header(), &events).unwrap_err();
    assert!(
        matches!(error, SessionError::InvalidSeed { index: 4500, .. }),
        "{error}"
    );
    events[100].surface_op = Some(SurfaceOp::Append);
    let error = validate_log(&header(), &events).unwrap_err();
    assert!(
        matches!(error, SessionError::InvalidSeed { index: 100, .. }),
        "{error}"
    );
    events[100].surface_op = None;
    events[4500] = SessionEvent::new("goal/change", 4500, 0, json!({}));
    assert!(validate_log(&header(), &events).is_ok());
}

#[test]
fn seeds_must_be_contiguous() {
    let seed = vec![SessionEvent::new("turn/start", 1, 0, json!({"turn": 1}))];
    let error = Session::from_seed(header(), seed).unwrap_err();
    assert!(error.to_string().contains("seed must be contiguous from 0"));
}

#[test]
fn derived_messages_follow_replaces() {
    let mut session = Session::new(header()).unwrap();
    session
        .append_at("user/message", user("a"), SurfaceIntent::append(), 0)
        .unwrap();
    session
        .append_at("user/message", user("b"), SurfaceIntent::append(), 0)
        .unwrap();
    assert_eq!(session.derive_messages().len(), 2);
    let replace = SurfaceIntent {
        op: Some(SurfaceOp::Replace { start: 0, end: 1 }),
        source_event_seqs: Some(vec![0, 1]),
    };
    session
        .append_at("user/message", user("summary"), replace, 0)
        .unwrap();
    let ids: Vec<_> = session
        .derive_messages()
        .iter()
        .map(|m| m.json()["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!("summary")]);
}
