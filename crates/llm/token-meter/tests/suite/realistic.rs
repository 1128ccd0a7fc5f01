//! The meter over realistic logs from dsh-test-support: what it prices agrees with the
//! session's own fold and derived messages.

use dsh_session::{Session, SessionHeader};
use dsh_test_support::turns::{PREAMBLE_EVENTS, TURN_EVENTS, long_session};
use dsh_token_meter::{
    Baseline, PricedHeader, SessionMeter, estimate_header, estimate_message_json,
};
use pretty_assertions::assert_eq;

fn session(turns: u64) -> Session {
    Session::from_seed(SessionHeader::new("s", 1), long_session(turns)).unwrap()
}

#[test]
fn a_short_session_anchors_on_the_last_replys_usage() {
    let session = session(3);
    let mut meter = SessionMeter::new();
    meter.sync(session.events()).unwrap();
    let measurement = meter.measure(None);
    assert_eq!(measurement.log_revision, session.events().len() as u64);
    // Turn 3, step 2: input 1403 + output 40.
    let Baseline::Usage { tokens, .. } = measurement.baseline else {
        panic!("{measurement:?}")
    };
    assert_eq!(tokens, 1443);
    // The provider streamed six 28-character deltas (168 chars: 42 + 4 + 4 = 50 tokens); the
    // logged reply is 27 characters (7 + 4 + 4 = 15): the surface is 35 below the anchor.
    assert_eq!(measurement.surface_delta_tokens, 15 - 50);
    assert_eq!(measurement.total_tokens, 1443 - 35);
}

#[test]
fn the_priced_surface_is_the_sessions_surface() {
    let mut session = session(12);
    let mut meter = SessionMeter::new();
    meter.sync(session.events()).unwrap();
    let seqs: Vec<u64> = meter.nodes().iter().map(|node| node.seq).collect();
    assert_eq!(seqs, session.surface().nodes());
    let derived: u64 = session
        .derive_messages()
        .iter()
        .map(|message| estimate_message_json(message.json()))
        .sum();
    assert_eq!(meter.surface_tokens(), derived);
    let header = meter.header().unwrap();
    assert_eq!(header.tokens(), estimate_header(Some(header.value())));
}

#[test]
fn a_long_session_outgrows_its_usage_and_anchors_on_the_estimate() {
    let session = session(40);
    let mut meter = SessionMeter::new();
    meter.sync(session.events()).unwrap();
    let measurement = meter.measure(None);
    let header = meter.header().unwrap().tokens();
    let Baseline::Estimated { tokens } = measurement.baseline else {
        panic!("{measurement:?}")
    };
    assert!(tokens > 1440 + 40, "{tokens}");
    assert_eq!(
        measurement.total_tokens,
        header + measurement.surface_tokens,
        "an estimated anchor plus the delta is the full estimate"
    );
}

#[test]
fn measuring_step_by_step_reads_each_event_once() {
    let events = long_session(5);
    let mut meter = SessionMeter::new();
    meter.sync(&events[..PREAMBLE_EVENTS]).unwrap();
    assert_eq!(
        meter.measure(None).baseline,
        Baseline::Estimated {
            tokens: meter.header().unwrap().tokens()
        }
    );
    for turn in 0..5 {
        let end = PREAMBLE_EVENTS + (turn + 1) * TURN_EVENTS;
        meter.sync(&events[..end]).unwrap();
        assert_eq!(meter.log_revision(), end as u64);
    }
    let mut whole = SessionMeter::new();
    whole.sync(&events).unwrap();
    assert_eq!(meter.measure(None), whole.measure(None));
    let other = PricedHeader::new(
        &serde_json::json!({"config": {"provider": "deepseek", "model": "deepseek-reasoner"}}),
    );
    let estimated = meter.measure(Some(&other));
    assert_eq!(
        estimated.baseline,
        Baseline::Estimated {
            tokens: estimated.surface_tokens
        }
    );
}
