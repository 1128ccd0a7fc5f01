//! Random session logs for property tests: batches of events as a live session appends them.
//!
//! A [`Plan`] is batches of [`Item`]s, each one event or a run of streamed delta chunks;
//! [`events_of`] turns it into events with contiguous seqs. Runs are usually short and now and
//! then longer than a packed row may hold, payloads are arbitrary JSON, and some events are
//! large enough for a store to compress (or too random to compress).

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_protocol::kinds;
use dsh_session::{SessionEvent, SurfaceOp};

/// One generated piece of a batch.
#[derive(Debug, Clone)]
pub enum Item {
    /// `turn/start`, `step/start`, `step/end` or `turn/end`.
    Boundary {
        /// The event type.
        kind: &'static str,
        /// The turn number.
        turn: u64,
        /// The step number (step events only).
        step: u64,
    },
    /// A run of delta chunks of one block; packed when long enough and pack is on.
    Run {
        /// The delta kind.
        kind: Delta,
        /// The turn number.
        turn: u64,
        /// The step number.
        step: u64,
        /// The block index.
        index: u64,
        /// Each member's time gap from the event before it.
        gaps: Vec<i64>,
        /// Each member's text or arguments delta.
        parts: Vec<String>,
    },
    /// A plugin event with an arbitrary payload; unknown types are marked ignorable.
    Plugin {
        /// The event type, one of [`PLUGIN_TYPES`].
        kind: &'static str,
        /// The payload.
        data: Value,
        /// Whether the event is marked ignorable.
        ignorable: bool,
    },
    /// A user message on the surface, with provenance seqs picked among earlier events.
    User {
        /// The message text.
        text: String,
        /// Picks for `sourceEventSeqs`: distinct earlier seqs in any order, or none.
        sources: Option<Vec<Index>>,
    },
    /// A plugin event with a large payload (4 to 12 KiB): repetitive text, or text too random
    /// to compress.
    Bulky {
        /// Payload length in characters.
        len: usize,
        /// Whether the text repeats (compressible) or is noise.
        compressible: bool,
        /// Seeds the noise.
        seed: u64,
    },
    /// A chunk outside the packing whitelist (stored verbatim).
    OddChunk {
        /// The stream chunk.
        chunk: Value,
    },
}

/// The kind of a delta run.
#[derive(Debug, Clone, Copy)]
pub enum Delta {
    /// `text-delta` chunks.
    Text,
    /// `reasoning-delta` chunks.
    Reasoning,
    /// `tool-call-delta` chunks of one call.
    ToolCall {
        /// Which call (`call_<n>`).
        call: u8,
        /// Whether every member carries the name, or only the first.
        named: bool,
    },
}

/// Plugin event types; `future/plugin-event` is unknown and always marked ignorable.
pub const PLUGIN_TYPES: [&str; 8] = [
    kinds::GOAL_CHANGE,
    kinds::HOOK_RESULT,
    kinds::COMMAND_RUN,
    kinds::COMPACTION_START,
    kinds::TODO_WRITE,
    kinds::SESSION_TITLE,
    kinds::LLM_RETRY,
    "future/plugin-event",
];

/// A proptest config of `cases` cases that persists no failures.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// Batches of items, with the first event's time.
pub fn plan(batches: std::ops::Range<usize>) -> impl Strategy<Value = Plan> {
    (
        -1_000_000_000_000_i64..10_000_000_000_000,
        prop::collection::vec(prop::collection::vec(item(), 1..6), batches),
    )
        .prop_map(|(time0, batches)| Plan { time0, batches })
}

/// A random log: batches of items.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The time of the first event.
    pub time0: i64,
    /// The batches, in append order.
    pub batches: Vec<Vec<Item>>,
}

impl Plan {
    /// How many batches.
    #[expect(
        clippy::len_without_is_empty,
        reason = "`len` sizes a plan in test messages; an `is_empty` would have no caller"
    )]
    pub fn len(&self) -> usize {
        self.batches.len()
    }
}

/// One item of a batch.
pub fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        2 => (prop::sample::select(vec![kinds::TURN_START, kinds::STEP_START, kinds::STEP_END, kinds::TURN_END]), 1..4_u64, 1..4_u64)
            .prop_map(|(kind, turn, step)| Item::Boundary { kind, turn, step }),
        4 => (delta(), 1..4_u64, 1..4_u64, 0..3_u64, run_members())
            .prop_map(|(kind, turn, step, index, members)| {
                let (gaps, parts) = members.into_iter().unzip();
                Item::Run { kind, turn, step, index, gaps, parts }
            }),
        3 => (prop::sample::select(PLUGIN_TYPES.to_vec()), json_value(), any::<bool>())
            .prop_map(|(kind, data, flag)| Item::Plugin {
                kind,
                data,
                ignorable: flag || kind == "future/plugin-event",
            }),
        1 => (text(), prop::option::of(prop::collection::vec(any::<Index>(), 0..5)))
            .prop_map(|(text, sources)| Item::User { text, sources }),
        1 => (4096..12_288_usize, any::<bool>(), any::<u64>())
            .prop_map(|(len, compressible, seed)| Item::Bulky { len, compressible, seed }),
        1 => prop_oneof![
            (0..3_u64).prop_map(|index| json!({"type": "block-start", "index": index, "blockType": "text"})),
            (text(), json_value()).prop_map(|(text, extra)| json!({"type": "text-delta", "index": 0, "text": text, "extra": extra})),
            text().prop_map(|text| json!({"index": 0, "type": "text-delta", "text": text})),
        ]
        .prop_map(|chunk| Item::OddChunk { chunk }),
    ]
}

/// The members of a delta run: usually a few, now and then more than a packed row may hold.
fn run_members() -> impl Strategy<Value = Vec<(i64, String)>> {
    prop_oneof![
        12 => prop::collection::vec((-3..2000_i64, text()), 1..9),
        1 => prop::collection::vec((0..3_i64, "[a-z]{0,3}"), 1020..1100),
    ]
}

/// A delta kind.
pub fn delta() -> impl Strategy<Value = Delta> {
    prop_oneof![
        Just(Delta::Text),
        Just(Delta::Reasoning),
        (0..2_u8, any::<bool>()).prop_map(|(call, named)| Delta::ToolCall { call, named }),
    ]
}

/// Short text of any characters: control characters, quotes, non-BMP, newlines.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..10).prop_map(String::from_iter),
        "[a-z \"\\\\\n\u{2028}é😀]{0,12}",
    ]
}

/// Arbitrary JSON: nested objects and arrays, unicode keys and strings, safe integers, short
/// decimals and any finite double.
pub fn json_value() -> impl Strategy<Value = Value> {
    let max = i64::try_from(MAX_SAFE_INTEGER).unwrap_or(i64::MAX);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-max..=max).prop_map(Value::from),
        (-1_000_000_i64..1_000_000, -8..=8_i32).prop_map(|(mantissa, exponent)| {
            json!(
                format!("{mantissa}e{exponent}")
                    .parse::<f64>()
                    .unwrap_or_default()
            )
        }),
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("JSON carries finite numbers, and -0 is refused", |x| {
                x.is_finite() && !(*x == 0.0 && x.is_sign_negative())
            })
            .prop_map(|x| json!(x)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4).prop_map(|entries| Value::Object(
                entries.into_iter().collect::<Map<String, Value>>()
            )),
        ]
    })
}

/// The events of each batch, seqs contiguous from 0.
pub fn events_of(plan: &Plan) -> Vec<Vec<SessionEvent>> {
    let mut seq = 0;
    let mut time = plan.time0;
    let mut next = |kind: &str, data: Value, gap: i64| {
        time += gap;
        let event = SessionEvent::new(kind, seq, time, data);
        seq += 1;
        event
    };
    let mut users = 0;
    let mut batches = Vec::new();
    for items in &plan.batches {
        let mut batch = Vec::new();
        for item in items {
            match item {
                Item::Boundary { kind, turn, step } => {
                    let data = match *kind {
                        kinds::TURN_START => json!({"turn": turn}),
                        kinds::TURN_END => json!({"turn": turn, "reason": {"kind": "completed"}}),
                        _ => json!({"turn": turn, "step": step}),
                    };
                    batch.push(next(kind, data, 1));
                }
                Item::Run {
                    kind,
                    turn,
                    step,
                    index,
                    gaps,
                    parts,
                } => {
                    for (k, (gap, part)) in gaps.iter().zip(parts).enumerate() {
                        let chunk = match kind {
                            Delta::Text => {
                                json!({"type": "text-delta", "index": index, "text": part})
                            }
                            Delta::Reasoning => {
                                json!({"type": "reasoning-delta", "index": index, "text": part})
                            }
                            Delta::ToolCall { call, named } => {
                                let id = format!("call_{call}");
                                if *named || k == 0 {
                                    json!({"type": "tool-call-delta", "index": index, "id": id, "name": "bash", "argumentsDelta": part})
                                } else {
                                    json!({"type": "tool-call-delta", "index": index, "id": id, "argumentsDelta": part})
                                }
                            }
                        };
                        let data = json!({"turn": turn, "step": step, "chunk": chunk});
                        batch.push(next(kinds::ASSISTANT_CHUNK, data, *gap));
                    }
                }
                Item::Plugin {
                    kind,
                    data,
                    ignorable,
                } => {
                    let mut event = next(kind, data.clone(), 3);
                    event.ignorable = *ignorable;
                    batch.push(event);
                }
                Item::User { text, sources } => {
                    users += 1;
                    let data = json!({"content": [{"type": "text", "text": text}], "source": {"kind": "user"},
                        "role": "user", "id": format!("user-{users}")});
                    // Distinct earlier seqs, in the order picked (so deltas go both ways).
                    let earlier = batches.iter().map(Vec::len).sum::<usize>() + batch.len();
                    let sources = sources.as_ref().filter(|_| earlier > 0).and_then(|picks| {
                        let mut seqs: Vec<u64> = Vec::new();
                        for pick in picks {
                            let seq = pick.index(earlier) as u64;
                            if !seqs.contains(&seq) {
                                seqs.push(seq);
                            }
                        }
                        (!seqs.is_empty()).then_some(seqs)
                    });
                    let mut event = next(kinds::USER_MESSAGE, data, 1);
                    event.surface_op = Some(SurfaceOp::Append);
                    event.source_event_seqs = sources;
                    batch.push(event);
                }
                Item::Bulky {
                    len,
                    compressible,
                    seed,
                } => {
                    let data = json!({"output": bulk_text(*len, *compressible, *seed)});
                    batch.push(next(kinds::COMMAND_RUN, data, 2));
                }
                Item::OddChunk { chunk } => {
                    batch.push(next(
                        kinds::ASSISTANT_CHUNK,
                        json!({"turn": 1, "step": 1, "chunk": chunk}),
                        0,
                    ));
                }
            }
        }
        batches.push(batch);
    }
    batches
}

/// `len` characters: a repeated sentence, or printable noise from an xorshift generator.
fn bulk_text(len: usize, compressible: bool, seed: u64) -> String {
    if compressible {
        return "the quick brown fox jumps over the lazy dog; "
            .chars()
            .cycle()
            .take(len)
            .collect();
    }
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let offset = u8::try_from(state % 94).unwrap_or(0);
            match char::from(b'!' + offset) {
                '"' | '\\' => 'q',
                other => other,
            }
        })
        .collect()
}
