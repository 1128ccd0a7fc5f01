//! Property tests: any append sequence reopens byte-identical in both encodings, packed or not;
//! a log cut at any byte reopens as a valid prefix and is repaired durably; a flipped byte in a
//! complete zstd frame is never read as different events.

use std::ops::Range;
use std::path::{Path, PathBuf};

use dsh_persistence::chunk_rows::pack_chunk_runs;
use dsh_persistence::log_file::header_line::header_line;
use dsh_persistence::{PersistenceError, SessionPersistence};
use dsh_persistence_jsonl::Compression;
use dsh_protocol::json::to_js_string;
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::{SessionEvent, SessionHeader};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use dsh_test_support::plans::{Plan, config, events_of, plan};

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
                        let scan = dsh_persistence::log_file::zstd_frames::scan_frames(&bytes).unwrap();
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

fn compression() -> impl Strategy<Value = Compression> {
    prop_oneof![Just(Compression::None), Just(Compression::Zstd)]
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
