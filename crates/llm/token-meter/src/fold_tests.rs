//! Unit tests of [`crate::SessionMeter`]: the anchor and baseline rules, replaces, errors.

use dsh_session::{SessionEvent, SurfaceOp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Baseline, PricedHeader, SessionMeter};

#[derive(Default)]
struct Log(Vec<SessionEvent>);

impl Log {
    fn seq(&self) -> u64 {
        self.0.len() as u64
    }

    fn push(&mut self, kind: &str, data: Value) -> u64 {
        let seq = self.seq();
        self.0.push(SessionEvent::new(kind, seq, 0, data));
        seq
    }

    fn surface(
        &mut self,
        kind: &str,
        data: Value,
        op: SurfaceOp,
        sources: Option<Vec<u64>>,
    ) -> u64 {
        let seq = self.push(kind, data);
        if let Some(event) = self.0.last_mut() {
            event.surface_op = Some(op);
            event.source_event_seqs = sources;
        }
        seq
    }

    fn header(&mut self, header: Value) -> u64 {
        self.push(
            "request/header",
            json!({"header": header, "reason": "initial"}),
        )
    }

    fn user(&mut self, text: &str) -> u64 {
        self.user_op(text, SurfaceOp::Append, None)
    }

    fn user_op(&mut self, text: &str, op: SurfaceOp, sources: Option<Vec<u64>>) -> u64 {
        let data = json!({"content": [{"type": "text", "text": text}], "source": {"kind": "user"}, "role": "user", "id": "u"});
        self.surface("user/message", data, op, sources)
    }

    fn chunk(&mut self, turn: u64, step: u64, text: &str) -> u64 {
        self.push(
            "assistant/chunk",
            json!({"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": text}}),
        )
    }

    fn reply(
        &mut self,
        turn: u64,
        step: u64,
        text: &str,
        usage: Option<Value>,
        sources: Option<Vec<u64>>,
    ) -> u64 {
        let content = if text.is_empty() {
            json!([])
        } else {
            json!([{"type": "text", "text": text}])
        };
        let mut data = json!({"turn": turn, "step": step, "message": {"role": "assistant", "content": content, "source": {"kind": "model"}, "id": "a"}});
        if let (Some(usage), Value::Object(map)) = (usage, &mut data) {
            map.insert("usage".into(), usage);
        }
        self.surface("assistant/message", data, SurfaceOp::Append, sources)
    }

    fn step(&mut self, kind: &str, turn: u64, step: u64) -> u64 {
        self.push(kind, json!({"turn": turn, "step": step}))
    }

    fn meter(&self) -> SessionMeter {
        let mut meter = SessionMeter::new();
        meter.sync(&self.0).unwrap();
        meter
    }
}

fn usage_34() -> Value {
    json!({"inputTokens": 20, "outputTokens": 7, "cacheReadTokens": 3, "cacheWriteTokens": 4, "reasoningTokens": 6})
}

/// Header, step 1 with the user's `abcd` (9) and a reply `hi` (9) streamed as one chunk.
fn one_step(usage: Option<Value>, sources: Option<Vec<u64>>) -> Log {
    let mut log = Log::default();
    log.header(json!({"config": {"provider": "p", "model": "m"}}));
    log.push("turn/start", json!({"turn": 1}));
    log.step("step/start", 1, 1);
    log.user("abcd");
    let chunk = log.chunk(1, 1, "hi");
    let sources = sources.map(|list| {
        if list == [u64::MAX] {
            vec![chunk]
        } else {
            list
        }
    });
    log.reply(1, 1, "hi", usage, sources);
    log
}

#[test]
fn an_empty_log_measures_nothing() {
    let measurement = SessionMeter::new().measure(None);
    assert_eq!(measurement.log_revision, 0);
    assert_eq!(measurement.baseline, Baseline::None);
    assert_eq!(
        (
            measurement.total_tokens,
            measurement.surface_tokens,
            measurement.surface_delta_tokens
        ),
        (0, 0, 0)
    );
    let text = dsh_protocol::json::to_js_string(&measurement);
    assert_eq!(
        text,
        r#"{"logRevision":0,"baseline":{"kind":"none","tokens":0},"surfaceDeltaTokens":0,"totalTokens":0,"surfaceTokens":0}"#
    );
}

#[test]
fn usage_anchors_when_it_covers_the_estimate() {
    let log = one_step(Some(usage_34()), Some(vec![u64::MAX]));
    let measurement = log.meter().measure(None);
    let Baseline::Usage { tokens, usage } = measurement.baseline else {
        panic!("{measurement:?}")
    };
    assert_eq!(
        tokens, 34,
        "input + cacheRead + cacheWrite + output; reasoning not added"
    );
    assert_eq!(usage.reasoning_tokens, Some(6));
    // The user message came after step/start: counted on top of the usage.
    assert_eq!(measurement.surface_tokens, 18);
    assert_eq!(measurement.surface_delta_tokens, 9);
    assert_eq!(measurement.total_tokens, 43);
    assert_eq!(measurement.log_revision, log.seq());
    assert!(
        dsh_protocol::json::to_js_string(&measurement)
            .contains(r#""baseline":{"kind":"usage","tokens":34,"usage":{"inputTokens":20"#)
    );
}

#[test]
fn usage_below_the_estimate_anchors_on_the_estimate() {
    let log = one_step(
        Some(json!({"inputTokens": 1, "outputTokens": 1})),
        Some(vec![u64::MAX]),
    );
    let measurement = log.meter().measure(None);
    assert_eq!(measurement.baseline, Baseline::Estimated { tokens: 9 });
    assert_eq!(
        (measurement.surface_delta_tokens, measurement.total_tokens),
        (9, 18)
    );
}

#[test]
fn an_empty_source_list_is_an_empty_stream_and_an_absent_one_the_durable_reply() {
    let usage = json!({"inputTokens": 1, "outputTokens": 1});
    let empty = one_step(Some(usage.clone()), Some(vec![]))
        .meter()
        .measure(None);
    assert_eq!(empty.baseline.tokens(), 2);
    assert_eq!((empty.surface_delta_tokens, empty.total_tokens), (18, 20));
    let absent = one_step(Some(usage), None).meter().measure(None);
    assert_eq!(absent.baseline, Baseline::Estimated { tokens: 9 });
    assert_eq!(absent.surface_delta_tokens, 9);
}

#[test]
fn a_reply_without_usage_anchors_on_the_estimate() {
    let log = one_step(None, Some(vec![u64::MAX]));
    let measurement = log.meter().measure(None);
    assert_eq!(measurement.baseline, Baseline::Estimated { tokens: 9 });
    assert_eq!(measurement.total_tokens, 18);
}

#[test]
fn a_content_less_reply_still_anchors() {
    let mut log = Log::default();
    log.header(json!({"config": {}, "system": "abcdefgh"}));
    log.step("step/start", 1, 1);
    log.user("abcd");
    log.reply(
        1,
        1,
        "",
        Some(json!({"inputTokens": 100, "outputTokens": 0})),
        Some(vec![]),
    );
    let measurement = log.meter().measure(None);
    assert_eq!(measurement.baseline.tokens(), 100);
    assert_eq!(
        measurement.surface_tokens, 9,
        "the reply derives no message"
    );
    assert_eq!(measurement.total_tokens, 109);
}

#[test]
fn without_a_header_usage_is_not_trusted() {
    let mut log = Log::default();
    log.step("step/start", 1, 1);
    log.reply(1, 1, "hi", Some(usage_34()), None);
    let measurement = log.meter().measure(None);
    assert_eq!(measurement.baseline, Baseline::Estimated { tokens: 9 });
    assert_eq!(measurement.total_tokens, 9);
}

#[test]
fn another_header_falls_back_to_the_full_estimate() {
    let log = one_step(Some(usage_34()), Some(vec![u64::MAX]));
    let meter = log.meter();
    let same = PricedHeader::new(&json!({"config": {"model": "m", "provider": "p"}, "tools": []}));
    assert_eq!(meter.measure(Some(&same)).total_tokens, 43);
    let other =
        PricedHeader::new(&json!({"config": {"provider": "p", "model": "m"}, "system": "abcd"}));
    let measurement = meter.measure(Some(&other));
    assert_eq!(measurement.baseline, Baseline::Estimated { tokens: 5 + 18 });
    assert_eq!(
        (measurement.surface_delta_tokens, measurement.total_tokens),
        (0, 23)
    );
    // A later logged header is the same change.
    let mut log = log;
    log.header(json!({"config": {"provider": "p", "model": "other"}}));
    assert_eq!(
        log.meter().measure(None).baseline,
        Baseline::Estimated { tokens: 18 }
    );
}

#[test]
fn a_replace_after_the_anchor_gives_a_negative_delta() {
    let mut log = Log::default();
    log.header(json!({"config": {}}));
    log.step("step/start", 1, 1);
    let first = log.user(&"x".repeat(400));
    log.reply(1, 1, "hi", None, None);
    log.step("step/end", 1, 1);
    log.step("step/start", 1, 2);
    let last = log.reply(
        1,
        2,
        "hi",
        Some(json!({"inputTokens": 1000, "outputTokens": 0})),
        None,
    );
    let before = log.meter().measure(None);
    assert_eq!(
        (
            before.baseline.tokens(),
            before.surface_delta_tokens,
            before.surface_tokens
        ),
        (1000, 0, 126)
    );
    let sources: Vec<u64> = (first..=last).collect();
    log.user_op(
        "abcd",
        SurfaceOp::Replace {
            start: first,
            end: last,
        },
        Some(sources),
    );
    let meter = log.meter();
    let after = meter.measure(None);
    assert_eq!(after.surface_tokens, 9);
    assert_eq!(after.surface_delta_tokens, 9 - 126);
    assert_eq!(after.total_tokens, 1000 - 117);
    assert_eq!(meter.nodes().len(), 1);
}

#[test]
fn an_estimated_anchor_keeps_the_total_at_header_plus_surface() {
    let mut log = Log::default();
    log.header(json!({"config": {}, "system": "abcd"}));
    let first = log.user(&"x".repeat(400));
    log.step("step/start", 1, 1);
    let reply = log.reply(
        1,
        1,
        "hi",
        Some(json!({"inputTokens": 10, "outputTokens": 0})),
        Some(vec![]),
    );
    let anchored = log.meter().measure(None);
    assert_eq!(anchored.baseline, Baseline::Estimated { tokens: 5 + 108 });
    log.user_op(
        "abcd",
        SurfaceOp::Replace {
            start: first,
            end: reply,
        },
        Some(vec![first, reply]),
    );
    let measurement = log.meter().measure(None);
    assert_eq!(
        measurement.surface_delta_tokens,
        9 - 108,
        "the anchor priced the empty stream, not the reply"
    );
    assert_eq!(measurement.total_tokens, 5 + 9);
}

fn refused(log: &Log, text: &str) {
    let mut meter = SessionMeter::new();
    let error = meter.sync(&log.0).unwrap_err();
    assert_eq!(error.to_string(), text);
    let revision = meter.log_revision();
    assert_eq!(revision, log.seq() - 1, "the failing event is not consumed");
    let again = meter.sync(&log.0).unwrap_err();
    assert_eq!(again.to_string(), text, "and fails the same way next time");
    assert_eq!(meter.log_revision(), revision);
}

#[test]
fn step_errors_have_dsh_texts() {
    let mut log = Log::default();
    log.step("step/start", 1, 1);
    log.step("step/start", 1, 2);
    refused(
        &log,
        "token meter: step/start at seq 1 arrived before turn 1/step 1 ended",
    );

    let mut log = Log::default();
    log.step("step/start", 1, 1);
    log.step("step/end", 1, 2);
    refused(
        &log,
        "token meter: step/end at seq 1 has no matching step/start event",
    );

    let mut log = Log::default();
    log.step("step/start", 1, 1);
    log.reply(2, 1, "hi", None, None);
    refused(
        &log,
        "token meter: assistant/message at seq 1 has no matching step/start event",
    );
}

/// Builds the cited seqs of a reply (pushing any chunks it needs).
type Sources = fn(&mut Log) -> Vec<u64>;

#[test]
fn source_errors_have_dsh_texts() {
    let cases: [(Sources, &str); 4] = [
        (|_| vec![9], "source seq 9 is not earlier"),
        (
            |log| {
                let c = log.chunk(1, 1, "a");
                vec![c, c]
            },
            "repeats source seq 2",
        ),
        (|_| vec![0], "source seq 0 is not assistant/chunk"),
        (
            |log| vec![log.chunk(1, 2, "a")],
            "source seq 2 belongs to another step",
        ),
    ];
    for (sources, text) in cases {
        let mut log = Log::default();
        log.header(json!({"config": {}}));
        log.step("step/start", 1, 1);
        let sources = sources(&mut log);
        let seq = log.reply(1, 1, "hi", Some(usage_34()), Some(sources));
        refused(
            &log,
            &format!("token meter: assistant/message at seq {seq} {text}"),
        );
    }
}

#[test]
fn an_invalid_replace_has_dsh_text() {
    let mut log = Log::default();
    let first = log.user("a");
    log.user_op(
        "b",
        SurfaceOp::Replace {
            start: first,
            end: 7,
        },
        Some(vec![first]),
    );
    refused(
        &log,
        "token surface: replace at seq 1 has invalid current range 0-7",
    );
}

#[test]
fn sync_reads_only_new_events() {
    let log = one_step(Some(usage_34()), Some(vec![u64::MAX]));
    let mut meter = SessionMeter::new();
    meter.sync(log.0.get(..3).unwrap()).unwrap();
    assert_eq!(meter.log_revision(), 3);
    meter.sync(&log.0).unwrap();
    meter.sync(&log.0).unwrap();
    assert_eq!(meter.measure(None), log.meter().measure(None));
}
