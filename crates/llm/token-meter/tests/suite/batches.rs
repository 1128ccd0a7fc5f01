//! Property: folding a log in any batches gives, after each batch, what one fold of that
//! prefix gives; replaces included.

use dsh_session::{Session, SessionEvent, SessionHeader, SurfaceOp};
use dsh_test_support::plans::config;
use dsh_test_support::turns::long_session;
use dsh_token_meter::SessionMeter;
use proptest::prelude::*;
use serde_json::json;

/// `turns` realistic turns, a compaction-like replace over surface positions
/// `first..=first + span`, then one more user message.
fn log(turns: u64, first: usize, span: usize) -> Vec<SessionEvent> {
    let mut events = long_session(turns);
    let session = Session::from_seed(SessionHeader::new("s", 1), events.clone()).unwrap();
    let nodes = session.surface().nodes();
    let first = first % nodes.len();
    let last = (first + span).min(nodes.len() - 1);
    let shadowed = nodes[first..=last].to_vec();
    let user = |seq: u64, text: &str| {
        SessionEvent::new(
            "user/message",
            seq,
            1,
            json!({"content": [{"type": "text", "text": text}], "source": {"kind": "plugin", "plugin": "compaction"},
                "role": "user", "id": format!("u{seq}")}),
        )
    };
    let mut summary = user(events.len() as u64, "summary of the earlier work");
    summary.surface_op = Some(SurfaceOp::Replace {
        start: shadowed[0],
        end: *shadowed.last().unwrap(),
    });
    summary.source_event_seqs = Some(shadowed);
    events.push(summary);
    let mut next = user(events.len() as u64, "and now the next task");
    next.surface_op = Some(SurfaceOp::Append);
    events.push(next);
    // The log is one the session accepts.
    Session::from_seed(SessionHeader::new("s", 1), events.clone()).unwrap();
    events
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn any_batching_measures_like_one_fold(
        turns in 1u64..4,
        first in 0usize..16,
        span in 0usize..6,
        cuts in prop::collection::vec(0usize..200, 0..12),
    ) {
        let events = log(turns, first, span);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut % (events.len() + 1)).collect();
        cuts.push(events.len());
        cuts.sort_unstable();
        let mut meter = SessionMeter::new();
        for cut in cuts {
            meter.sync(&events[..cut]).unwrap();
            let mut fresh = SessionMeter::new();
            fresh.sync(&events[..cut]).unwrap();
            prop_assert_eq!(meter.measure(None), fresh.measure(None));
            prop_assert_eq!(meter.nodes(), fresh.nodes());
        }
        let mut whole = SessionMeter::new();
        whole.sync(&events).unwrap();
        prop_assert_eq!(meter.measure(None), whole.measure(None));
        prop_assert_eq!(meter.log_revision(), events.len() as u64);
    }
}
