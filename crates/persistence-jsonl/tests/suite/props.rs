//! Property tests: any append sequence reopens byte-identical in both encodings, packed or not;
//! a log cut at any byte reopens as a valid prefix and is repaired durably; a flipped byte in a
//! complete zstd frame is never read as different events.

use std::ops::Range;
use std::path::{Path, PathBuf};

use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_persistence_jsonl::Compression;
use dsh_persistence_jsonl::header_line::header_line;
use dsh_session::chunk_rows::pack_chunk_runs;
use dsh_session::json::{MAX_SAFE_INTEGER, to_js_string};
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::{SessionEvent, SessionHeader, SurfaceOp};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value, json};

use super::support::{split_frames, store, texts};

const ID: &str = "prop-session";

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn any_append_sequence_reopens_byte_identical(
        plan in plan(1..6),
        compression in compression(),
        pack in any::<bool>(),
    ) {
        run(async move {
            let root = tempfile::tempdir().unwrap();
            let written = write(root.path(), compression, pack, &plan).await;
            let events = written.events();
            let persistence = store(root.path(), compression, true);

            let stored = persistence.read_from(ID, 0).await.unwrap();
            prop_assert_eq!(texts(&stored), texts(&events));
            let inspected = persistence.inspect(ID).await.unwrap();
            let mut balanced = events.clone();
            balanced.extend(interrupted_turn_closers(&events));
            prop_assert_eq!(texts(&inspected.events), texts(&balanced));

            // The file holds exactly dsh's text: the header line, then each batch's records.
            let expected = written.plain_text(pack);
            let file = std::fs::read(&written.path).unwrap();
            match compression {
                Compression::None => prop_assert_eq!(String::from_utf8(file).unwrap(), expected.clone()),
                Compression::Zstd => {
                    prop_assert_eq!(split_frames(&file).len(), plan.len() + 1);
                    let plain = zstd::stream::decode_all(&file[..]).unwrap();
                    prop_assert_eq!(String::from_utf8(plain).unwrap(), expected.clone());
                }
            }
            let raw = persistence.read_raw(ID).await.unwrap().unwrap();
            prop_assert_eq!(raw.content, expected);
            Ok(())
        })?;
    }

    #[test]
    fn a_log_cut_at_any_byte_after_the_first_batch_reopens_as_a_valid_prefix(
        plan in plan(2..6),
        compression in compression(),
        pack in any::<bool>(),
        cut in any::<Index>(),
    ) {
        run(async move {
            let root = tempfile::tempdir().unwrap();
            let written = write(root.path(), compression, pack, &plan).await;
            let events = written.events();
            let full = std::fs::read(&written.path).unwrap();
            let first = written.sizes[0];
            let offset = first + cut.index(full.len() - first + 1);
            std::fs::write(&written.path, &full[..offset]).unwrap();
            let truncated = full[..offset].to_vec();

            let persistence = store(root.path(), compression, true);
            let stored = persistence.read_from(ID, 0).await.unwrap();
            let (least, most) = written.events_kept_by(compression, &full, offset);
            prop_assert!(
                (least..=most).contains(&stored.len()),
                "kept {} events, expected {least}..={most}", stored.len()
            );
            prop_assert_eq!(texts(&stored), texts(&events[..stored.len()]));

            let mut balanced = stored.clone();
            balanced.extend(interrupted_turn_closers(&stored));
            let inspected = persistence.inspect(ID).await.unwrap();
            prop_assert_eq!(texts(&inspected.events), texts(&balanced));
            prop_assert_eq!(&std::fs::read(&written.path).unwrap(), &truncated, "inspect writes nothing");

            let loaded = persistence.load(ID).await.unwrap();
            prop_assert_eq!(texts(&loaded.events), texts(&balanced));
            let repaired = std::fs::read(&written.path).unwrap();
            if compression == Compression::Zstd {
                prop_assert!(zstd::stream::decode_all(&repaired[..]).is_ok(), "repair leaves whole frames");
            }
            let again = store(root.path(), compression, true);
            prop_assert_eq!(texts(&again.load(ID).await.unwrap().events), texts(&balanced));
            prop_assert_eq!(texts(&again.read_from(ID, 0).await.unwrap()), texts(&balanced));
            prop_assert_eq!(std::fs::read(&written.path).unwrap(), repaired, "the repair was durable");
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn a_flipped_byte_in_a_zstd_log_is_never_read_as_different_events(
        plan in plan(2..5),
        pack in any::<bool>(),
        at in any::<Index>(),
        mask in 1..=255_u8,
    ) {
        run(async move {
            let root = tempfile::tempdir().unwrap();
            let written = write(root.path(), Compression::Zstd, pack, &plan).await;
            let events = written.events();
            let original = std::fs::read(&written.path).unwrap();
            let mut bytes = original.clone();
            let position = at.index(bytes.len());
            bytes[position] ^= mask;
            std::fs::write(&written.path, &bytes).unwrap();

            let persistence = store(root.path(), Compression::Zstd, true);
            match persistence.inspect(ID).await {
                Err(error) => {
                    let cause = corruption(error)?;
                    prop_assert!(
                        cause.contains(&written.path.display().to_string()),
                        "the corruption names the file: {cause}"
                    );
                    prop_assert_eq!(std::fs::read(&written.path).unwrap(), bytes);
                }
                Ok(inspected) => {
                    let stored = persistence.read_from(ID, 0).await.unwrap();
                    prop_assert!(stored.len() <= events.len());
                    prop_assert_eq!(texts(&stored), texts(&events[..stored.len()]));
                    if stored.len() < events.len() {
                        // Only a flip in a frame or block header, which makes the structural
                        // scan run past the end of the file, may shorten the log (dsh reads
                        // that as a torn final frame), and only from that frame on.
                        let scan = dsh_persistence_jsonl::zstd_frames::scan_frames(&bytes).unwrap();
                        let torn = scan.torn_start.expect("a shortened log has a torn frame");
                        prop_assert!(
                            structural_bytes(&original, torn).iter().any(|range| range.contains(&position)),
                            "torn at {torn}, flipped at {position}, which is no header byte"
                        );
                    }
                    let mut balanced = stored.clone();
                    balanced.extend(interrupted_turn_closers(&stored));
                    prop_assert_eq!(texts(&inspected.events), texts(&balanced));
                }
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn a_double_with_seventeen_significant_digits_reopens_byte_identical() {
    let root = tempfile::tempdir().unwrap();
    let persistence = store(root.path(), Compression::None, true);
    persistence.create(SessionHeader::new(ID, 1)).await.unwrap();
    let event = SessionEvent::new(
        "goal/change",
        0,
        1,
        json!({"x": 1.780_271_996_292_116_7e-19}),
    );
    assert_eq!(
        to_js_string(&event),
        r#"{"type":"goal/change","seq":0,"time":1,"data":{"x":1.7802719962921167e-19}}"#
    );
    persistence.append(ID, vec![event.clone()]).await.unwrap();

    let stored = store(root.path(), Compression::None, true)
        .read_from(ID, 0)
        .await
        .unwrap();
    assert_eq!(to_js_string(&stored[0]), to_js_string(&event));
}

// ---------------------------------------------------------------------------------------------
// Generation: batches of items, each item one event or a run of delta chunks.

/// One generated piece of a batch.
#[derive(Debug, Clone)]
enum Item {
    /// `turn/start`, `step/start`, `step/end` or `turn/end`.
    Boundary {
        kind: &'static str,
        turn: u64,
        step: u64,
    },
    /// A run of delta chunks of one block; packed when long enough and pack is on.
    Run {
        kind: Delta,
        turn: u64,
        step: u64,
        index: u64,
        gaps: Vec<i64>,
        parts: Vec<String>,
    },
    /// A plugin event with an arbitrary payload; unknown types are marked ignorable.
    Plugin {
        kind: &'static str,
        data: Value,
        ignorable: bool,
    },
    /// A user message on the surface.
    User { text: String },
    /// A chunk outside the packing whitelist (stored verbatim).
    OddChunk { chunk: Value },
}

#[derive(Debug, Clone, Copy)]
enum Delta {
    Text,
    Reasoning,
    /// A tool call; `named` says whether every member carries the name, or only the first.
    ToolCall {
        call: u8,
        named: bool,
    },
}

const PLUGIN_TYPES: [&str; 8] = [
    "goal/change",
    "hook/result",
    "command/run",
    "compaction/start",
    "todo/write",
    "session/title",
    "llm/retry",
    "future/plugin-event",
];

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

fn compression() -> impl Strategy<Value = Compression> {
    prop_oneof![Just(Compression::None), Just(Compression::Zstd)]
}

/// Batches of items, with the first event's time.
fn plan(batches: std::ops::Range<usize>) -> impl Strategy<Value = Plan> {
    (
        -1_000_000_000_000_i64..10_000_000_000_000,
        prop::collection::vec(prop::collection::vec(item(), 1..6), batches),
    )
        .prop_map(|(time0, batches)| Plan { time0, batches })
}

#[derive(Debug, Clone)]
struct Plan {
    time0: i64,
    batches: Vec<Vec<Item>>,
}

impl Plan {
    fn len(&self) -> usize {
        self.batches.len()
    }
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        2 => (prop::sample::select(vec!["turn/start", "step/start", "step/end", "turn/end"]), 1..4_u64, 1..4_u64)
            .prop_map(|(kind, turn, step)| Item::Boundary { kind, turn, step }),
        4 => (delta(), 1..4_u64, 1..4_u64, 0..3_u64, prop::collection::vec((-3..2000_i64, text()), 1..9))
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
        1 => text().prop_map(|text| Item::User { text }),
        1 => prop_oneof![
            (0..3_u64).prop_map(|index| json!({"type": "block-start", "index": index, "blockType": "text"})),
            (text(), json_value()).prop_map(|(text, extra)| json!({"type": "text-delta", "index": 0, "text": text, "extra": extra})),
            text().prop_map(|text| json!({"index": 0, "type": "text-delta", "text": text})),
        ]
        .prop_map(|chunk| Item::OddChunk { chunk }),
    ]
}

fn delta() -> impl Strategy<Value = Delta> {
    prop_oneof![
        Just(Delta::Text),
        Just(Delta::Reasoning),
        (0..2_u8, any::<bool>()).prop_map(|(call, named)| Delta::ToolCall { call, named }),
    ]
}

/// Short text of any characters: control characters, quotes, non-BMP, newlines.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..10).prop_map(String::from_iter),
        "[a-z \"\\\\\n\u{2028}é😀]{0,12}",
    ]
}

/// Arbitrary JSON: nested objects and arrays, unicode keys and strings, safe integers, short
/// decimals and any finite double.
fn json_value() -> impl Strategy<Value = Value> {
    let max = i64::try_from(MAX_SAFE_INTEGER).unwrap();
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-max..=max).prop_map(Value::from),
        (-1_000_000_i64..1_000_000, -8..=8_i32).prop_map(|(mantissa, exponent)| {
            json!(format!("{mantissa}e{exponent}").parse::<f64>().unwrap())
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

/// What a plan wrote.
struct Written {
    path: PathBuf,
    header: SessionHeader,
    batches: Vec<Vec<SessionEvent>>,
    /// The file size after each append.
    sizes: Vec<usize>,
}

impl Written {
    fn events(&self) -> Vec<SessionEvent> {
        self.batches.concat()
    }

    /// The decoded text dsh would have written.
    fn plain_text(&self, pack: bool) -> String {
        let mut text = format!("{}\n", header_line(&self.header));
        for batch in &self.batches {
            text.push_str(&batch_text(batch, pack));
        }
        text
    }

    /// The fewest and most events a reader may keep from the file cut at `offset`: every
    /// complete line (raw) or complete frame (zstd) is kept, and a torn frame may give back
    /// some of its records.
    fn events_kept_by(
        &self,
        compression: Compression,
        full: &[u8],
        offset: usize,
    ) -> (usize, usize) {
        match compression {
            Compression::None => {
                let body = &full[header_line(&self.header).len() + 1..offset];
                let complete = match body.iter().rposition(|&byte| byte == b'\n') {
                    Some(end) => &body[..=end],
                    None => &[],
                };
                let kept = std::str::from_utf8(complete)
                    .unwrap()
                    .lines()
                    .map(events_in_record)
                    .sum();
                (kept, kept)
            }
            Compression::Zstd => {
                let mut kept = 0;
                let mut frame_start = 0;
                for (batch, &end) in self.batches.iter().zip(&self.sizes) {
                    if end > offset {
                        let torn = if offset > frame_start { batch.len() } else { 0 };
                        return (kept, kept + torn);
                    }
                    kept += batch.len();
                    frame_start = end;
                }
                (kept, kept)
            }
        }
    }
}

/// Creates the session and appends each batch of the plan; records the file size after each.
async fn write(root: &Path, compression: Compression, pack: bool, plan: &Plan) -> Written {
    let header = SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo");
    let persistence = store(root, compression, pack);
    persistence.create(header.clone()).await.unwrap();
    let path = persistence.locate(&header).unwrap().path;
    let batches = events_of(plan);
    let mut sizes = Vec::new();
    for batch in &batches {
        persistence.append(ID, batch.clone()).await.unwrap();
        sizes.push(usize::try_from(std::fs::metadata(&path).unwrap().len()).unwrap());
    }
    Written {
        path,
        header,
        batches,
        sizes,
    }
}

/// The events of each batch, seqs contiguous from 0.
fn events_of(plan: &Plan) -> Vec<Vec<SessionEvent>> {
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
                        "turn/start" => json!({"turn": turn}),
                        "turn/end" => json!({"turn": turn, "reason": {"kind": "completed"}}),
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
                        batch.push(next("assistant/chunk", data, *gap));
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
                Item::User { text } => {
                    users += 1;
                    let data = json!({"content": [{"type": "text", "text": text}], "source": {"kind": "user"},
                        "role": "user", "id": format!("user-{users}")});
                    let mut event = next("user/message", data, 1);
                    event.surface_op = Some(SurfaceOp::Append);
                    batch.push(event);
                }
                Item::OddChunk { chunk } => {
                    batch.push(next(
                        "assistant/chunk",
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

// ---------------------------------------------------------------------------------------------
// Helpers

/// Runs a property body on a fresh current-thread runtime.
fn run(
    body: impl std::future::Future<Output = Result<(), TestCaseError>>,
) -> Result<(), TestCaseError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(body)
}

fn batch_text(batch: &[SessionEvent], pack: bool) -> String {
    if pack {
        pack_chunk_runs(batch)
            .iter()
            .map(|record| format!("{}\n", to_js_string(record)))
            .collect()
    } else {
        batch
            .iter()
            .map(|event| format!("{}\n", to_js_string(event)))
            .collect()
    }
}

/// How many events one storage record holds (a packed row holds its members).
fn events_in_record(line: &str) -> usize {
    let record: Value = serde_json::from_str(line).unwrap();
    match record["type"].as_str() {
        Some("text-chunks" | "reasoning-chunks") => {
            record["data"]["texts"].as_array().unwrap().len()
        }
        Some("tool-call-chunks") => record["data"]["args"].as_array().unwrap().len(),
        _ => 1,
    }
}

fn corruption(error: PersistenceError) -> Result<String, TestCaseError> {
    match error {
        PersistenceError::Corruption { cause, .. } => Ok(cause),
        other => Err(TestCaseError::fail(format!(
            "expected a corruption error, got {other:?}"
        ))),
    }
}

/// The frame header and block header byte ranges of the complete zstd frame starting at
/// `start` (RFC 8878 §3.1.1): the bytes the structural scan reads.
fn structural_bytes(bytes: &[u8], start: usize) -> Vec<Range<usize>> {
    let descriptor = bytes[start + 4];
    let single_segment = descriptor & 0x20 != 0;
    let dictionary = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        flag => 1 << flag,
    };
    let mut offset = start + 5 + usize::from(!single_segment) + dictionary + content_size;
    let mut ranges = Vec::new();
    ranges.push(start..offset);
    loop {
        let header = u32::from(bytes[offset])
            | u32::from(bytes[offset + 1]) << 8
            | u32::from(bytes[offset + 2]) << 16;
        ranges.push(offset..offset + 3);
        let payload = if (header >> 1) & 0x03 == 1 {
            1
        } else {
            (header >> 3) as usize
        };
        offset += 3 + payload;
        if header & 1 == 1 {
            return ranges;
        }
    }
}
