//! The JSONL format rules of dsh 0.1 (spec §3): torn tail versus corruption in both encodings,
//! format refusals, header validation, layout, identity and duplicate checks, lazy and atomic
//! materialization, revisions, packed and unpacked rows, and raw export.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use dsh_persistence::chunk_rows::pack_chunk_runs;
use dsh_persistence::log_file::zstd_frames::{compress_frame, scan_frames};
use dsh_persistence::{
    BackendError, Coordinator, LocationKind, PersistenceError, SessionPersistence,
    UnreadableSession,
};
use dsh_persistence_jsonl::{Compression, JsonlBackend};
use dsh_protocol::json::to_js_string;
use dsh_session::repair::interrupted_turn_closers;
use dsh_session::{SessionEvent, SessionHeader};
use dsh_test_support::turns::{LogBuilder, long_session};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{FIXTURES, store, texts};

const BOTH: [Compression; 2] = [Compression::None, Compression::Zstd];

// ---------------------------------------------------------------------------------------------
// Raw JSONL: torn tail versus corruption (§3.6)

#[tokio::test]
async fn raw_unparsable_line_before_a_later_turn_end_is_corruption_naming_the_file() {
    let (root, id, path, log) = raw_log_of_one_turn().await;
    let mut tail = String::from("{not json\n");
    tail.push_str(&lines(&log[40..]));
    append_bytes(&path, tail.as_bytes());
    let before = std::fs::read(&path).unwrap();

    let persistence = store(root.path(), Compression::None, false);
    let expected = format!(
        "corrupt session log: unparsable committed event at line 41 (file: {})",
        path.display()
    );
    assert_eq!(
        corruption(persistence.load(&id).await.unwrap_err()),
        expected
    );
    assert_eq!(
        corruption(persistence.inspect(&id).await.unwrap_err()),
        expected
    );
    let error = persistence.read_from(&id, 0).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("stored session \"{id}\" failed validation: {expected}")
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "corruption is never repaired"
    );
}

#[tokio::test]
async fn raw_seq_gap_before_a_later_turn_end_is_corruption() {
    let (root, id, path, log) = raw_log_of_one_turn().await;
    let mut tail = lines(&log[40..41]);
    tail.push_str(&lines(&log[42..]));
    append_bytes(&path, tail.as_bytes());

    let error = store(root.path(), Compression::None, false)
        .load(&id)
        .await
        .unwrap_err();
    assert_eq!(
        corruption(error),
        format!(
            "corrupt session log: seq gap in committed region at line 42 (expected 41, got 42) \
             (file: {})",
            path.display()
        )
    );
}

#[tokio::test]
async fn raw_malformed_packed_row_before_a_later_turn_end_is_corruption() {
    let (root, id, path, _) = raw_log_of_one_turn().await;
    let row = r#"{"type":"text-chunks","seq0":40,"time0":1,"data":{"turn":2,"step":1,"index":0,"dt":[],"texts":["a","b"]}}"#;
    let end = SessionEvent::new(
        "turn/end",
        42,
        2,
        json!({"turn": 2, "reason": {"kind": "completed"}}),
    );
    append_bytes(&path, format!("{row}\n{}\n", to_js_string(&end)).as_bytes());

    let error = store(root.path(), Compression::None, false)
        .load(&id)
        .await
        .unwrap_err();
    assert!(!error.is_format_refusal());
    assert!(
        corruption(error).starts_with("corrupt session log: unparsable committed event at line 41")
    );
}

#[tokio::test]
async fn raw_unparsable_line_without_a_later_turn_end_is_a_torn_tail_that_load_cuts() {
    let (root, id, path, log) = raw_log_of_one_turn().await;
    append_bytes(&path, lines(&log[40..46]).as_bytes());
    let committed = std::fs::read(&path).unwrap();
    append_bytes(&path, b"{not json\n");
    append_bytes(&path, lines(&log[46..47]).as_bytes());
    append_bytes(&path, br#"{"type":"assistant/chunk","seq":47,"ti"#);
    let torn = std::fs::read(&path).unwrap();

    let stored = &log[..46];
    let closers = interrupted_turn_closers(stored);
    assert_eq!(kinds(&closers), ["step/end", "turn/end"]);
    let mut expected = texts(stored);
    expected.extend(texts(&closers));

    let persistence = store(root.path(), Compression::None, true);
    let inspected = persistence.inspect(&id).await.unwrap();
    assert_eq!(texts(&inspected.events), expected);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        torn,
        "inspect leaves the file byte-identical"
    );

    let loaded = persistence.load(&id).await.unwrap();
    assert_eq!(texts(&loaded.events), expected);
    let repaired = std::fs::read(&path).unwrap();
    let closer_bytes = lines(&closers);
    assert_eq!(repaired.len(), committed.len() + closer_bytes.len());
    assert_eq!(repaired, [committed, closer_bytes.into_bytes()].concat());

    let reloaded = store(root.path(), Compression::None, true)
        .load(&id)
        .await
        .unwrap();
    assert_eq!(texts(&reloaded.events), expected);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        repaired,
        "a balanced log is not touched again"
    );
}

#[tokio::test]
async fn raw_seq_gap_after_the_last_turn_end_is_a_torn_tail() {
    let (root, id, path, log) = raw_log_of_one_turn().await;
    let committed = std::fs::read(&path).unwrap();
    append_bytes(&path, lines(&log[45..47]).as_bytes());

    let persistence = store(root.path(), Compression::None, false);
    let inspected = persistence.inspect(&id).await.unwrap();
    assert_eq!(texts(&inspected.events), texts(&log[..40]));
    assert_ne!(std::fs::read(&path).unwrap(), committed);
    let loaded = persistence.load(&id).await.unwrap();
    assert_eq!(texts(&loaded.events), texts(&log[..40]));
    assert_eq!(std::fs::read(&path).unwrap(), committed);
}

#[tokio::test]
async fn raw_final_fragment_without_a_newline_is_torn_and_cut_by_load() {
    let (root, id, path, log) = raw_log_of_one_turn().await;
    let committed = std::fs::read(&path).unwrap();
    // A complete event without its newline is still a fragment.
    append_bytes(&path, to_js_string(&log[40]).as_bytes());

    let persistence = store(root.path(), Compression::None, false);
    assert_eq!(persistence.read_from(&id, 0).await.unwrap().len(), 40);
    persistence.load(&id).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), committed);
}

#[tokio::test]
async fn raw_packed_row_with_a_seq_gap_after_the_last_turn_end_is_dropped_whole() {
    let (root, id, path, _) = raw_log_of_one_turn().await;
    let committed = std::fs::read(&path).unwrap();
    let row = r#"{"type":"text-chunks","seq0":41,"time0":2,"data":{"turn":2,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}"#;
    append_bytes(&path, format!("{row}\n").as_bytes());

    let persistence = store(root.path(), Compression::None, false);
    assert_eq!(persistence.inspect(&id).await.unwrap().events.len(), 40);
    persistence.load(&id).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), committed);
}

#[tokio::test]
async fn crash_closers_are_written_with_dsh_bytes() {
    const UNKNOWN: &str = "The tool call was interrupted after it was recorded, but no result was \
        durably recorded. Its outcome is unknown. Decide whether to retry from the tool \
        semantics: retry only if the operation is read-only or idempotent; if it may have side \
        effects, first verify external state or ask the user. Do not retry blindly.";
    const NOT_STARTED: &str = "The tool call was interrupted before the Harness recorded it as \
        started. Retry it if it is still needed.";
    // long_session(1): the assistant asks for call_00001 at seq 26, the call starts at 27.
    for (end, sources, text, name, code) in [
        (
            28,
            Some(27),
            UNKNOWN,
            "ToolOutcomeUnknownError",
            "TOOL_OUTCOME_UNKNOWN",
        ),
        (
            27,
            None,
            NOT_STARTED,
            "ToolNotStartedError",
            "TOOL_NOT_STARTED",
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        let log = long_session(1);
        let header = SessionHeader::new("closers", 1);
        let path = write_log_with(root.path(), Compression::None, &header, &log[..end]).await;
        let committed = std::fs::read_to_string(&path).unwrap();

        let loaded = store(root.path(), Compression::None, true)
            .load("closers")
            .await
            .unwrap();
        // dsh's closers, keys in the order `repair.ts` builds them.
        let (seq, time) = (end, log[end - 1].time);
        let mut result = json!({"type": "tool/result", "seq": seq, "time": time, "data": {
            "turn": 1, "step": 1,
            "message": {"id": format!("interrupted-tool-result-call_00001-{seq}"), "role": "user",
                "source": {"kind": "tool", "callId": "call_00001"},
                "content": [{"type": "tool-result", "toolCallId": "call_00001", "isError": true,
                    "content": [{"type": "text", "text": text}]}]},
            "error": {"name": name, "code": code}},
            "surfaceOp": "append"});
        if let Some(call) = sources {
            result["sourceEventSeqs"] = json!([call]);
        }
        let expected = [
            result,
            json!({"type": "step/end", "seq": seq + 1, "time": time, "data": {"turn": 1, "step": 1}}),
            json!({"type": "turn/end", "seq": seq + 2, "time": time,
                "data": {"turn": 1, "reason": {"kind": "interrupted"}}}),
        ]
        .map(|closer| to_js_string(&closer));
        let repaired = std::fs::read_to_string(&path).unwrap();
        let appended: Vec<&str> = repaired[committed.len()..].lines().collect();
        assert_eq!(appended, expected);
        assert_eq!(texts(&loaded.events[end..]), expected);
        let reread = store(root.path(), Compression::None, true)
            .read_from("closers", 0)
            .await
            .unwrap();
        assert_eq!(texts(&reread), texts(&loaded.events));
    }
}

#[tokio::test]
async fn an_append_to_a_stored_session_not_yet_loaded_first_repairs_its_torn_tail() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let log = long_session(2);
        let header = SessionHeader::new("adopt", 1);
        let path = write_log_with(root.path(), compression, &header, &log[..40]).await;
        let committed = std::fs::read(&path).unwrap();
        let torn = match compression {
            Compression::None => b"\n{\"partial crash".to_vec(),
            Compression::Zstd => compress_frame(b"{\"partial crash\n").unwrap()[..10].to_vec(),
        };
        append_bytes(&path, &torn);

        let fresh = store(root.path(), compression, true);
        fresh.append("adopt", log[40..].to_vec()).await.unwrap();
        let loaded = store(root.path(), compression, true)
            .load("adopt")
            .await
            .unwrap();
        assert_eq!(texts(&loaded.events), texts(&log));
        assert!(std::fs::read(&path).unwrap().starts_with(&committed));
    }
}

// ---------------------------------------------------------------------------------------------
// Zstd: complete frames are checked, a torn final frame is cut (§3.4, §3.6)

#[tokio::test]
async fn zstd_flipped_byte_inside_a_complete_frame_is_corruption_naming_the_file() {
    let log = long_session(2);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, 40, 73]).await;
    let original = std::fs::read(&path).unwrap();
    let frames = scan_frames(&original).unwrap().frames;
    assert_eq!(frames.len(), 4, "a header frame and one frame per append");

    // The middle of the header frame, of a batch frame, and a checksum byte.
    for offset in [
        frames[0].start + frames[0].len() / 2,
        frames[2].start + frames[2].len() / 2,
        frames[3].end - 2,
    ] {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x5A;
        std::fs::write(&path, &bytes).unwrap();
        let persistence = store(root.path(), Compression::Zstd, true);
        for error in [
            persistence.load(&id).await.unwrap_err(),
            persistence.inspect(&id).await.unwrap_err(),
        ] {
            assert!(!error.is_format_refusal());
            let cause = corruption(error);
            assert!(
                cause.starts_with("corrupt Zstandard session log: "),
                "{cause}"
            );
            assert!(cause.contains(&path.display().to_string()), "{cause}");
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "corruption is never repaired"
        );
    }
}

#[tokio::test]
async fn zstd_damaged_block_size_in_a_middle_frame_is_corruption_and_not_a_torn_tail() {
    let log = long_session(2);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, 40, 73]).await;
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = scan_frames(&bytes).unwrap().frames[2].clone();
    // Our frames are single-segment with a content size: the block header follows it.
    let descriptor = bytes[middle.start + 4];
    assert_eq!(descriptor & 0x23, 0x20, "single segment, no dictionary");
    let content_size = match descriptor >> 6 {
        0 => 1,
        flag => 1 << flag,
    };
    let block_header = middle.start + 5 + content_size;
    bytes[block_header + 2] |= 0xF0;
    std::fs::write(&path, &bytes).unwrap();

    let result = store(root.path(), Compression::Zstd, true).load(&id).await;
    let kept = std::fs::metadata(&path).unwrap().len();
    assert!(
        matches!(result, Err(PersistenceError::Corruption { .. })),
        "expected corruption; got {} events and a file cut from {} to {kept} bytes",
        result
            .map(|inspection| inspection.events.len())
            .unwrap_or_default(),
        bytes.len()
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "committed frames are never cut"
    );
}

#[tokio::test]
async fn zstd_truncated_final_frame_is_torn_and_load_cuts_it() {
    let log = long_session(2);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, 40, 73]).await;
    let original = std::fs::read(&path).unwrap();
    let last = scan_frames(&original).unwrap().frames[3].clone();
    // Cut inside the final frame's header: nothing of it can be recovered.
    std::fs::write(&path, &original[..last.start + 6]).unwrap();

    let persistence = store(root.path(), Compression::Zstd, true);
    let inspected = persistence.inspect(&id).await.unwrap();
    assert_eq!(texts(&inspected.events), texts(&log[..40]));
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        last.start as u64 + 6
    );
    let loaded = persistence.load(&id).await.unwrap();
    assert_eq!(texts(&loaded.events), texts(&log[..40]));
    assert_eq!(std::fs::read(&path).unwrap(), &original[..last.start]);
}

#[tokio::test]
async fn zstd_torn_final_frame_after_an_open_turn_is_cut_and_closed_in_a_new_frame() {
    let log = long_session(2);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, 45, 73]).await;
    let original = std::fs::read(&path).unwrap();
    let last = scan_frames(&original).unwrap().frames[3].clone();
    std::fs::write(&path, &original[..last.start + 3]).unwrap();

    let closers = interrupted_turn_closers(&log[..45]);
    let mut expected = texts(&log[..45]);
    expected.extend(texts(&closers));
    let loaded = store(root.path(), Compression::Zstd, true)
        .load(&id)
        .await
        .unwrap();
    assert_eq!(texts(&loaded.events), expected);

    let repaired = std::fs::read(&path).unwrap();
    assert_eq!(&repaired[..last.start], &original[..last.start]);
    let frames = scan_frames(&repaired).unwrap();
    assert_eq!((frames.frames.len(), frames.torn_start), (4, None));
    let closing = zstd::stream::decode_all(&repaired[last.start..]).unwrap();
    assert_eq!(String::from_utf8(closing).unwrap(), lines(&closers));
}

#[tokio::test]
async fn zstd_torn_final_frame_gives_back_the_records_of_its_fully_received_blocks() {
    let mut builder = LogBuilder::default();
    builder.preamble();
    builder.push("turn/start", json!({"turn": 1}));
    for index in 0..400 {
        builder.push(
            "hook/result",
            json!({"index": index, "output": noise(1024, index)}),
        );
    }
    let log = builder.finish();
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, log.len()]).await;
    let original = std::fs::read(&path).unwrap();
    let last = scan_frames(&original).unwrap().frames[2].clone();
    assert!(
        last.len() > 300_000,
        "the noise does not compress, so the frame has several blocks"
    );
    std::fs::write(&path, &original[..last.start + last.len() * 3 / 4]).unwrap();

    let persistence = store(root.path(), Compression::Zstd, true);
    let stored = persistence.read_from(&id, 0).await.unwrap();
    assert!(
        stored.len() > 7 + 100,
        "complete blocks are recovered, got {}",
        stored.len()
    );
    assert!(stored.len() < log.len());
    assert_eq!(texts(&stored), texts(&log[..stored.len()]));

    let loaded = persistence.load(&id).await.unwrap();
    let closers = interrupted_turn_closers(&stored);
    assert_eq!(loaded.events.len(), stored.len() + closers.len());
    let repaired = std::fs::read(&path).unwrap();
    assert_eq!(&repaired[..last.start], &original[..last.start]);
    let tail =
        String::from_utf8(zstd::stream::decode_all(&repaired[last.start..]).unwrap()).unwrap();
    let mut recovered_and_closers = stored[7..].to_vec();
    recovered_and_closers.extend(closers);
    assert_eq!(
        tail,
        packed_lines(&recovered_and_closers),
        "recovered events are re-appended"
    );
    let reopened = store(root.path(), Compression::Zstd, true)
        .load(&id)
        .await
        .unwrap();
    assert_eq!(texts(&reopened.events), texts(&loaded.events));
}

#[tokio::test]
async fn zstd_complete_frame_ending_in_a_torn_record_is_corruption() {
    let log = long_session(1);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[log.len()]).await;
    let fragment = to_js_string(&SessionEvent::new("turn/start", 40, 1, json!({"turn": 2})));
    append_bytes(&path, &compress_frame(fragment.as_bytes()).unwrap());

    let error = store(root.path(), Compression::Zstd, true)
        .load(&id)
        .await
        .unwrap_err();
    assert_eq!(
        corruption(error),
        format!(
            "corrupt Zstandard session log: complete frame contains a torn JSONL record (file: {})",
            path.display()
        )
    );
}

#[tokio::test]
async fn zstd_bytes_after_the_last_frame_that_are_no_frame_are_corruption() {
    let log = long_session(1);
    let root = tempfile::tempdir().unwrap();
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[log.len()]).await;
    let end = std::fs::metadata(&path).unwrap().len();
    append_bytes(&path, b"garbage!");

    let error = store(root.path(), Compression::Zstd, true)
        .load(&id)
        .await
        .unwrap_err();
    assert_eq!(
        corruption(error),
        format!(
            "corrupt Zstandard session log: invalid frame magic at byte {end} (file: {})",
            path.display()
        )
    );
}

#[tokio::test]
async fn zstd_header_frame_holding_more_than_the_header_line_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let header = SessionHeader::new("two-lines", 1);
    let line = dsh_persistence::log_file::header_line::header_line(&header);
    let event = to_js_string(&SessionEvent::new("turn/start", 0, 1, json!({"turn": 1})));
    let path = place(root.path(), &header, Compression::Zstd);
    std::fs::write(
        &path,
        compress_frame(format!("{line}\n{event}\n").as_bytes()).unwrap(),
    )
    .unwrap();

    let persistence = store(root.path(), Compression::Zstd, true);
    let cause = corruption(persistence.load("two-lines").await.unwrap_err());
    assert!(
        cause.contains("first frame is not exactly one header line"),
        "{cause}"
    );
    let [listed] = unreadable(&persistence).await.try_into().unwrap();
    assert!(
        listed
            .error
            .contains("first frame is not exactly one header line"),
        "{listed:?}"
    );
    assert_eq!(listed.path.as_deref(), Some(path.as_path()));
}

#[tokio::test]
async fn an_empty_log_file_is_header_less_corruption_and_is_not_listed() {
    for (compression, message) in [
        (Compression::None, "empty or header-less session log"),
        (
            Compression::Zstd,
            "empty or header-less Zstandard session log",
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        let header = SessionHeader::new("empty", 1);
        let path = place(root.path(), &header, compression);
        std::fs::write(&path, b"").unwrap();
        let persistence = store(root.path(), compression, true);
        assert!(persistence.list().await.unwrap().is_empty());
        let cause = corruption(persistence.load("empty").await.unwrap_err());
        assert_eq!(cause, format!("{message} (file: {})", path.display()));
    }
}

// ---------------------------------------------------------------------------------------------
// Format refusals (§1.9)

#[tokio::test]
async fn a_v1_header_is_refused_as_a_newer_format_and_not_as_corruption() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let id = "future-v1";
        let header = SessionHeader::new(id, 1).with_cwd("/work");
        let path = place(root.path(), &header, compression);
        let line = r#"{"type":"session","version":1,"id":"future-v1","createdAt":1,"cwd":"/work","delegationDepth":0}"#;
        let turn = SessionEvent::new("turn/start", 0, 1, json!({"turn": 1}));
        write_plain(&path, compression, &[&format!("{line}\n"), &lines(&[turn])]);
        let before = std::fs::read(&path).unwrap();

        let expected = format!(
            "session \"{id}\" uses log format v1, but this harness reads only v0: the log was \
             written by a newer harness — upgrade the harness to open it (raw log: {})",
            path.display()
        );
        let persistence = store(root.path(), compression, true);
        let errors = [
            persistence.load(id).await.unwrap_err(),
            persistence.inspect(id).await.unwrap_err(),
            persistence.prepare(id).await.unwrap_err(),
            persistence.read_from(id, 0).await.unwrap_err(),
        ];
        for error in errors {
            assert!(error.is_format_refusal(), "{error:?}");
            assert!(
                !matches!(error, PersistenceError::Corruption { .. }),
                "{error:?}"
            );
            assert_eq!(error.to_string(), expected);
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "the open turn is not closed"
        );
    }
}

#[tokio::test]
async fn a_future_header_of_another_shape_still_asks_for_an_upgrade() {
    let root = tempfile::tempdir().unwrap();
    let path = place(
        root.path(),
        &SessionHeader::new("future-shape", 1),
        Compression::None,
    );
    std::fs::write(&path, "{\"type\":\"session\",\"version\":42,\"id\":\"future-shape\",\"futureOnly\":true}\n{\"future\":\"row\"}\n").unwrap();

    let error = store(root.path(), Compression::None, true)
        .load("future-shape")
        .await
        .unwrap_err();
    assert!(error.is_format_refusal());
    assert_eq!(
        error.to_string(),
        format!(
            "session \"future-shape\" uses log format v42, but this harness reads only v0: the log \
             was written by a newer harness — upgrade the harness to open it (raw log: {})",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_foreign_version_header_with_a_numeric_id_is_named_by_its_text() {
    let root = tempfile::tempdir().unwrap();
    let path = place(
        root.path(),
        &SessionHeader::new("numeric-id", 1),
        Compression::None,
    );
    std::fs::write(&path, "{\"type\":\"session\",\"version\":42,\"id\":123}\n").unwrap();

    let error = store(root.path(), Compression::None, true)
        .load("numeric-id")
        .await
        .unwrap_err();
    assert!(error.is_format_refusal());
    assert!(
        error
            .to_string()
            .starts_with("session \"123\" uses log format v42"),
        "{error}"
    );
}

#[tokio::test]
async fn an_older_version_header_is_refused_without_an_upgrade_path() {
    let root = tempfile::tempdir().unwrap();
    let path = place(
        root.path(),
        &SessionHeader::new("old", 1),
        Compression::None,
    );
    std::fs::write(&path, "{\"type\":\"session\",\"version\":-1,\"id\":\"old\",\"createdAt\":1,\"delegationDepth\":0}\n").unwrap();

    let error = store(root.path(), Compression::None, true)
        .load("old")
        .await
        .unwrap_err();
    assert!(error.is_format_refusal());
    assert_eq!(
        error.to_string(),
        format!(
            "session \"old\" uses log format v-1, older than the supported v0, and this build ships \
             no upgrade path for it (raw log: {})",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_non_object_header_line_is_corruption_and_not_a_format_refusal() {
    let root = tempfile::tempdir().unwrap();
    let path = place(
        root.path(),
        &SessionHeader::new("scalar", 1),
        Compression::None,
    );
    std::fs::write(&path, "42\n").unwrap();

    let error = store(root.path(), Compression::None, true)
        .load("scalar")
        .await
        .unwrap_err();
    assert!(!error.is_format_refusal());
    assert!(corruption(error).contains("first line is not a session header"));
}

#[tokio::test]
async fn an_unknown_event_type_not_marked_ignorable_is_refused_as_a_newer_format() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let mut log = long_session(1)[..9].to_vec();
        log.push(SessionEvent::new("future/thing", 9, 1, json!({"x": 1})));
        let (id, path) = write_log(root.path(), compression, true, &log, &[log.len()]).await;
        let before = std::fs::read(&path).unwrap();

        let expected = format!(
            "session \"{id}\" contains event type \"future/thing\" (seq 9) unknown to this harness \
             and not marked ignorable; refusing to interpret the log — it was likely written by \
             a newer harness (raw log: {})",
            path.display()
        );
        let persistence = store(root.path(), compression, true);
        for error in [
            persistence.load(&id).await.unwrap_err(),
            persistence.inspect(&id).await.unwrap_err(),
        ] {
            assert!(error.is_format_refusal());
            assert!(!matches!(error, PersistenceError::Corruption { .. }));
            assert_eq!(error.to_string(), expected);
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "the open turn is not closed"
        );
    }
}

#[tokio::test]
async fn an_unknown_event_marked_ignorable_loads_and_round_trips() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let mut log = long_session(1);
        let mut future = SessionEvent::new("future/thing", 40, 1, json!({"nested": [1.5, "é"]}));
        future.ignorable = true;
        log.push(future);
        let (id, path) = write_log(root.path(), compression, true, &log, &[7, log.len()]).await;

        let persistence = store(root.path(), compression, true);
        let loaded = persistence.load(&id).await.unwrap();
        assert_eq!(texts(&loaded.events), texts(&log));
        let raw = persistence.read_raw(&id).await.unwrap().unwrap().content;
        assert!(raw.ends_with(
            "{\"type\":\"future/thing\",\"seq\":40,\"time\":1,\"data\":{\"nested\":[1.5,\"é\"]},\"ignorable\":true}\n"
        ));
        assert!(path.exists());
    }
}

// ---------------------------------------------------------------------------------------------
// Header validation (§3.3)

#[tokio::test]
async fn malformed_header_lines_are_corruption_and_are_skipped_by_list() {
    let cases = [
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":-1,"delegationDepth":0}"#,
            "createdAt",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1.5,"delegationDepth":0}"#,
            "createdAt",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":-0,"delegationDepth":0}"#,
            "createdAt",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":9007199254740992,"delegationDepth":0}"#,
            "createdAt",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1}"#,
            "delegationDepth",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":"1"}"#,
            "delegationDepth",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":1.5}"#,
            "delegationDepth",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":-1}"#,
            "delegationDepth",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":-0}"#,
            "delegationDepth",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"origin":"x"}"#,
            "origin",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"agentPreset":7}"#,
            "not a string",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"cwd":5}"#,
            "not a string",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"sandboxMode":"x"}"#,
            "retired policy baseline fields",
        ),
        (
            r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"approvalPolicy":"x"}"#,
            "retired policy baseline fields",
        ),
        (
            r#"{"type":"event","version":0,"id":"h","createdAt":1,"delegationDepth":0}"#,
            "type is not",
        ),
        (
            r#"{"type":"session","version":"0","id":"h","createdAt":1,"delegationDepth":0}"#,
            "version is not a number",
        ),
        (
            r#"{"type":"session","version":0,"id":5,"createdAt":1,"delegationDepth":0}"#,
            "id is not a string",
        ),
        ("not json", "header line is not valid JSON"),
    ];
    for (line, why) in cases {
        let root = tempfile::tempdir().unwrap();
        let path = place(root.path(), &SessionHeader::new("h", 1), Compression::None);
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let persistence = store(root.path(), Compression::None, true);
        let error = persistence.load("h").await.unwrap_err();
        assert!(!error.is_format_refusal(), "{line}");
        let cause = corruption(error);
        let retired = why == "retired policy baseline fields";
        assert!(
            retired || cause.starts_with("corrupt session log: "),
            "{line}: {cause}"
        );
        assert!(cause.contains(why), "{line}: {cause}");
        assert!(
            cause.ends_with(&format!("(file: {})", path.display())),
            "{cause}"
        );
        // Listing reports it with the same reason (dsh refuses a retired header there too).
        let [listed] = unreadable(&persistence).await.try_into().unwrap();
        assert!(listed.error.contains(why), "{line}: {listed:?}");
    }
}

#[tokio::test]
async fn a_first_line_without_its_newline_is_a_header_less_log() {
    let root = tempfile::tempdir().unwrap();
    let path = place(root.path(), &SessionHeader::new("h", 1), Compression::None);
    std::fs::write(
        &path,
        r#"{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0}"#,
    )
    .unwrap();

    let persistence = store(root.path(), Compression::None, true);
    assert!(persistence.list().await.unwrap().is_empty());
    let cause = corruption(persistence.load("h").await.unwrap_err());
    assert!(
        cause.starts_with("empty or header-less session log"),
        "{cause}"
    );
}

#[tokio::test]
async fn every_header_field_is_written_in_dsh_order_and_read_back() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let mut header = SessionHeader::new("full", 7).with_cwd("/w");
        header.parent_session = Some("parent".into());
        header.seed_length = Some(3);
        header.origin = Some(dsh_session::header::SessionOrigin::Subagent);
        header.delegation_depth = Some(2);
        header.agent_preset = Some("minimal".into());
        let persistence = store(root.path(), compression, true);
        persistence.create(header.clone()).await.unwrap();
        persistence.append("full", long_session(1)).await.unwrap();

        let raw = persistence.read_raw("full").await.unwrap().unwrap();
        assert_eq!(
            raw.content.lines().next().unwrap(),
            r#"{"type":"session","version":0,"id":"full","createdAt":7,"cwd":"/w","parentSession":"parent","seedLength":3,"origin":"subagent","delegationDepth":2,"agentPreset":"minimal"}"#
        );
        let fresh = store(root.path(), compression, true);
        assert_eq!(fresh.list().await.unwrap(), [header.clone()]);
        assert_eq!(fresh.load("full").await.unwrap().header, header);
    }
}

#[tokio::test]
async fn a_header_without_delegation_depth_is_written_with_depth_zero() {
    let root = tempfile::tempdir().unwrap();
    let persistence = store(root.path(), Compression::None, true);
    persistence
        .create(SessionHeader::new("depth", 7))
        .await
        .unwrap();
    persistence.append("depth", long_session(1)).await.unwrap();

    let raw = persistence.read_raw("depth").await.unwrap().unwrap();
    assert_eq!(
        raw.content.lines().next().unwrap(),
        r#"{"type":"session","version":0,"id":"depth","createdAt":7,"delegationDepth":0}"#
    );
    assert_eq!(
        persistence.list().await.unwrap()[0].delegation_depth,
        Some(0)
    );
}

#[tokio::test]
async fn a_header_line_with_unknown_keys_longer_than_a_read_chunk_is_listed() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let path = place(root.path(), &SessionHeader::new("big", 1), compression);
        let line = json!({"type": "session", "version": 0, "id": "big", "createdAt": 1,
            "delegationDepth": 0, "pad": noise(9000, 3)});
        write_plain(&path, compression, &[&format!("{line}\n")]);

        let persistence = store(root.path(), compression, true);
        let listed = persistence.list().await.unwrap();
        assert_eq!(
            listed,
            [SessionHeader {
                delegation_depth: Some(0),
                ..SessionHeader::new("big", 1)
            }]
        );
        assert!(persistence.load("big").await.unwrap().events.is_empty());
    }
}

#[tokio::test]
async fn list_refuses_a_header_with_retired_policy_fields() {
    let root = tempfile::tempdir().unwrap();
    let path = place(
        root.path(),
        &SessionHeader::new("retired", 1),
        Compression::None,
    );
    std::fs::write(&path, "{\"type\":\"session\",\"version\":0,\"id\":\"retired\",\"createdAt\":1,\"delegationDepth\":0,\"sandboxMode\":\"read-only\"}\n").unwrap();

    let [listed] = unreadable(&store(root.path(), Compression::None, true))
        .await
        .try_into()
        .unwrap();
    assert!(
        listed.error.contains("retired policy baseline fields"),
        "{listed:?}"
    );
    assert_eq!(listed.id.as_deref(), Some("retired"));
    assert_eq!(listed.path, Some(path));
}

// ---------------------------------------------------------------------------------------------
// Layout, encodings, identity and duplicates (§3.2)

#[tokio::test]
async fn logs_live_in_project_and_session_directories_like_dsh_home() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let persistence = store(root.path(), compression, true);
        let name = compression.transcript_name();
        for (header, relative) in [
            (
                SessionHeader::new("session-1", 1).with_cwd("/srv/dsh-demo"),
                format!("--srv-dsh-demo--/session-1/{name}"),
            ),
            (
                SessionHeader::new("loose", 1),
                format!("_no-cwd/loose/{name}"),
            ),
            (
                SessionHeader::new("../../etc/pwn", 1),
                format!("_no-cwd/..~002F..~002Fetc~002Fpwn/{name}"),
            ),
            (
                SessionHeader::new("开~", 1).with_cwd("/开发/~agent"),
                format!("--~5F00~53D1-~007Eagent--/~5F00~007E/{name}"),
            ),
        ] {
            let expected = root.path().join(relative);
            let location = persistence.locate(&header).unwrap();
            assert_eq!(
                (location.kind, &location.path),
                (LocationKind::Jsonl, &expected)
            );
            persistence.create(header.clone()).await.unwrap();
            persistence
                .append(&header.id, long_session(1))
                .await
                .unwrap();
            assert!(expected.is_file(), "{}", expected.display());
        }
        let mut ids: Vec<String> = persistence
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        ids.sort();
        assert_eq!(ids, ["../../etc/pwn", "loose", "session-1", "开~"]);
        assert_eq!(
            files_under(root.path()).len(),
            4,
            "nothing escapes the root"
        );
    }
}

#[tokio::test]
async fn sessions_whose_cwds_share_a_project_key_share_its_directory() {
    let root = tempfile::tempdir().unwrap();
    let persistence = store(root.path(), Compression::Zstd, true);
    for (id, cwd) in [("first", "/a/b-c"), ("second", "/a-b/c")] {
        persistence
            .create(SessionHeader::new(id, 1).with_cwd(cwd))
            .await
            .unwrap();
        persistence.append(id, long_session(1)).await.unwrap();
    }
    let project = root.path().join("--a-b-c--");
    assert!(project.join("first/session.jsonl.zstd").is_file());
    assert!(project.join("second/session.jsonl.zstd").is_file());
    let fresh = store(root.path(), Compression::Zstd, true);
    let mut ids: Vec<String> = fresh
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["first", "second"]);
    assert_eq!(
        fresh.load("second").await.unwrap().header.cwd.as_deref(),
        Some("/a-b/c")
    );
}

#[tokio::test]
async fn other_files_in_project_and_session_directories_are_ignored() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[log.len()]).await;
    let session_dir = path.parent().unwrap();
    let project_dir = session_dir.parent().unwrap();
    std::fs::write(session_dir.join("metadata.json"), "{}\n").unwrap();
    std::fs::write(project_dir.join("README"), "project metadata\n").unwrap();
    std::fs::create_dir(project_dir.join("reserved-session")).unwrap();

    let persistence = store(root.path(), Compression::Zstd, true);
    assert_eq!(persistence.list().await.unwrap().len(), 1);
    assert_eq!(
        texts(&persistence.load(&id).await.unwrap().events),
        texts(&log)
    );
}

#[tokio::test]
async fn a_root_lists_reads_and_extends_logs_of_either_encoding() {
    // A user who changed `compression` keeps the sessions written before: both fixtures in
    // one root, read by a store of either encoding.
    for configured in BOTH {
        let root = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = FIXTURES
            .iter()
            .map(|fixture| fixture.install(root.path()))
            .collect();
        let persistence = store(root.path(), configured, true);
        let listing = persistence.list_with_unreadable().await.unwrap();
        assert_eq!(listing.unreadable, []);
        let mut ids: Vec<&str> = listing.sessions.iter().map(|h| h.id.as_str()).collect();
        ids.sort_unstable();
        let mut expected: Vec<&str> = FIXTURES.iter().map(|fixture| fixture.id).collect();
        expected.sort_unstable();
        assert_eq!(ids, expected);
        assert_eq!(persistence.list_snapshots().await.unwrap().len(), 2);

        for (fixture, path) in FIXTURES.iter().zip(&paths) {
            // The same events as a store of the log's own encoding reads.
            let own = tempfile::tempdir().unwrap();
            fixture.install(own.path());
            let reference = store(own.path(), fixture.compression, true)
                .load(fixture.id)
                .await
                .unwrap();
            let loaded = persistence.load(fixture.id).await.unwrap();
            assert_eq!(texts(&loaded.events), texts(&reference.events));
            let raw = persistence.read_raw(fixture.id).await.unwrap().unwrap();
            assert_eq!(raw.header.id, fixture.id);

            // An append continues the log in its own encoding; no second log appears.
            let next = loaded.events.len() as u64;
            persistence
                .append(
                    fixture.id,
                    vec![SessionEvent::new(
                        "goal/change",
                        next,
                        1,
                        json!({"goal": "x"}),
                    )],
                )
                .await
                .unwrap();
            let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, [fixture.compression.transcript_name()]);
            let reread = store(root.path(), fixture.compression, true)
                .load(fixture.id)
                .await
                .unwrap();
            assert_eq!(reread.events.len() as u64, next + 1);
        }
    }
}

#[tokio::test]
async fn a_session_directory_holding_both_encodings_is_refused_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let fixture = &FIXTURES[1];
    let raw = fixture.install(root.path());
    std::fs::copy(
        super::support::fixture_path(FIXTURES[0].file),
        raw.with_file_name("session.jsonl.zstd"),
    )
    .unwrap();
    let dir = raw.parent().unwrap();
    let expected = format!(
        "session directory \"{}\" holds both session.jsonl and session.jsonl.zstd, but a \
         session has one log; move the one that does not belong out of the session store",
        dir.display()
    );
    let persistence = store(root.path(), Compression::Zstd, true);
    assert_eq!(
        invalid(persistence.load(fixture.id).await.unwrap_err()),
        expected
    );
    let [listed] = unreadable(&persistence).await.try_into().unwrap();
    assert_eq!(listed.error, expected);
    assert_eq!(listed.path.as_deref(), Some(dir));
    assert_eq!(listed.id.as_deref(), Some(fixture.id));
}

#[tokio::test]
async fn a_first_write_refuses_an_id_stored_in_the_other_encoding() {
    let root = tempfile::tempdir().unwrap();
    let fixture = &FIXTURES[1];
    let raw_path = fixture.install(root.path());
    std::fs::rename(&raw_path, raw_path.with_file_name("session.jsonl.bak")).unwrap();
    let persistence = store(root.path(), Compression::Zstd, true);
    let header = SessionHeader::new(fixture.id, 1).with_cwd("/srv/dsh-demo");
    persistence.create(header).await.unwrap();
    std::fs::rename(raw_path.with_file_name("session.jsonl.bak"), &raw_path).unwrap();

    let error = persistence
        .append(fixture.id, long_session(1))
        .await
        .unwrap_err();
    assert_eq!(
        invalid(error),
        format!(
            "refusing to materialize \"{}\": a log already exists at \"{}\" (load/resume it \
             instead)",
            fixture.id,
            raw_path.display()
        )
    );
    assert!(!raw_path.with_file_name("session.jsonl.zstd").exists());
}

#[tokio::test]
async fn the_obsolete_flat_layout_is_refused_by_load_and_list() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("--legacy--");
        std::fs::create_dir_all(&project).unwrap();
        let path = project.join(format!("legacy-flat{}", compression.suffix()));
        std::fs::write(&path, "legacy").unwrap();
        let expected = format!(
            "session artifact \"{}\" uses the unsupported flat-file layout; use a separate root or \
             move it into a project/session directory before loading",
            path.display()
        );
        // Either encoding's root refuses either flat artifact.
        for configured in BOTH {
            let persistence = store(root.path(), configured, true);
            assert_eq!(
                invalid(persistence.load("legacy-flat").await.unwrap_err()),
                expected
            );
            let [listed] = unreadable(&persistence).await.try_into().unwrap();
            assert_eq!(listed.error, expected);
            assert_eq!(listed.id.as_deref(), Some("legacy-flat"));
        }
    }
}

#[tokio::test]
async fn a_log_whose_header_cwd_names_another_directory_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let header = SessionHeader::new("misplaced", 1).with_cwd("/stored");
    let path = write_log_with(root.path(), Compression::None, &header, &log).await;
    rewrite_first_line(&path, |header| header["cwd"] = json!("/elsewhere"));

    let expected = format!(
        "corrupt session log \"{}\": header id \"misplaced\" and cwd identify \"{}\"",
        path.display(),
        root.path()
            .join("--elsewhere--/misplaced/session.jsonl")
            .display()
    );
    let persistence = store(root.path(), Compression::None, true);
    let [listed] = unreadable(&persistence).await.try_into().unwrap();
    assert_eq!(
        listed.error,
        format!("stored session \"misplaced\" failed validation: {expected}")
    );
    assert_eq!(
        corruption(persistence.load("misplaced").await.unwrap_err()),
        expected
    );
}

#[tokio::test]
async fn a_header_id_other_than_the_requested_one_is_refused_before_any_repair() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let a_path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("identity-a", 1).with_cwd("/same"),
        &log[..9],
    )
    .await;
    let b_path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("identity-b", 1).with_cwd("/same"),
        &log,
    )
    .await;
    rewrite_first_line(&a_path, |header| header["id"] = json!("identity-b"));
    let (a_before, b_before) = (
        std::fs::read(&a_path).unwrap(),
        std::fs::read(&b_path).unwrap(),
    );

    let error = store(root.path(), Compression::None, true)
        .load("identity-a")
        .await
        .unwrap_err();
    assert_eq!(
        corruption(error),
        format!(
            "corrupt session log \"{}\": requested id \"identity-a\" does not match header id \"identity-b\"",
            a_path.display()
        )
    );
    assert_eq!(std::fs::read(&a_path).unwrap(), a_before);
    assert_eq!(std::fs::read(&b_path).unwrap(), b_before);
}

#[tokio::test]
async fn an_aliased_project_directory_that_is_the_same_file_is_accepted() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let header = SessionHeader::new("alias", 1).with_cwd("/stored");
    let path = write_log_with(root.path(), Compression::None, &header, &log).await;
    std::os::unix::fs::symlink(
        root.path().join("--stored--"),
        root.path().join("--alias--"),
    )
    .unwrap();
    rewrite_first_line(&path, |header| header["cwd"] = json!("/alias"));

    let persistence = store(root.path(), Compression::None, true);
    assert_eq!(
        persistence
            .load("alias")
            .await
            .unwrap()
            .header
            .cwd
            .as_deref(),
        Some("/alias")
    );
    assert!(
        persistence
            .list()
            .await
            .unwrap()
            .iter()
            .any(|h| h.id == "alias")
    );
}

#[tokio::test]
async fn a_header_id_that_cannot_name_a_path_is_refused_by_list() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("_no-cwd/invalid-id");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("session.jsonl"),
        "{\"type\":\"session\",\"version\":0,\"id\":\"\",\"createdAt\":1,\"delegationDepth\":0}\n",
    )
    .unwrap();

    let [listed] = unreadable(&store(root.path(), Compression::None, true))
        .await
        .try_into()
        .unwrap();
    assert!(
        listed
            .error
            .ends_with("header id cannot name a storage path"),
        "{listed:?}"
    );
    assert_eq!(listed.id.as_deref(), Some("invalid-id"));
}

#[tokio::test]
async fn one_id_in_two_project_directories_is_refused_by_load_and_list() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    for cwd in ["/a", "/b"] {
        let other = tempfile::tempdir().unwrap();
        let path = write_log_with(
            other.path(),
            Compression::None,
            &SessionHeader::new("dup", 1).with_cwd(cwd),
            &log,
        )
        .await;
        let target = root.path().join(path.strip_prefix(other.path()).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&path, &target).unwrap();
    }
    let [a, b] =
        ["--a--", "--b--"].map(|project| root.path().join(project).join("dup/session.jsonl"));
    let persistence = store(root.path(), Compression::None, true);
    assert_eq!(
        corruption(persistence.load("dup").await.unwrap_err()),
        format!(
            "duplicate JSONL session id \"dup\" appears in multiple project directories: \"{}\", \"{}\"",
            a.display(),
            b.display()
        )
    );
    // Listing names neither as the session, and says of each where the other is.
    let listed = unreadable(&persistence).await;
    let errors: Vec<&str> = listed.iter().map(|listed| listed.error.as_str()).collect();
    assert_eq!(
        errors,
        [(&a, &b), (&b, &a)].map(|(this, other)| format!(
            "stored session \"dup\" failed validation: duplicate JSONL session id \"dup\": the \
             log \"{}\" carries it, and so does \"{}\"",
            this.display(),
            other.display()
        ))
    );
}

#[tokio::test]
async fn create_refuses_an_id_stored_under_another_project_directory() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    write_log_with(
        root.path(),
        Compression::Zstd,
        &SessionHeader::new("taken", 1).with_cwd("/projA"),
        &log,
    )
    .await;

    let fresh = store(root.path(), Compression::Zstd, true);
    let error = fresh
        .create(SessionHeader::new("taken", 2).with_cwd("/projB"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, PersistenceError::AlreadyExists(ref id) if id == "taken"),
        "{error:?}"
    );
    assert!(!root.path().join("--projB--").exists());
}

// ---------------------------------------------------------------------------------------------
// Materialization, durability and revisions (§3.5, §3.7)

#[tokio::test]
async fn create_writes_nothing_until_the_first_append() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        let persistence = store(&sessions, compression, true);
        let header = SessionHeader::new("lazy", 1).with_cwd("/work");
        let path = persistence.locate(&header).unwrap().path;
        persistence.create(header).await.unwrap();
        persistence.append("lazy", Vec::new()).await.unwrap();

        assert!(!sessions.exists(), "not even the root is created");
        assert!(persistence.list().await.unwrap().is_empty());
        assert!(persistence.list_snapshots().await.unwrap().is_empty());
        assert!(persistence.read_raw("lazy").await.unwrap().is_none());

        persistence.append("lazy", long_session(1)).await.unwrap();
        assert!(path.is_file());
        assert_eq!(persistence.list().await.unwrap()[0].id, "lazy");
    }
}

#[tokio::test]
async fn the_first_write_is_published_atomically_with_private_modes() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        let log = long_session(1);
        let path = write_log_with(
            &sessions,
            compression,
            &SessionHeader::new("private", 1).with_cwd("/w"),
            &log,
        )
        .await;

        let session_dir = path.parent().unwrap();
        let names: Vec<String> = std::fs::read_dir(session_dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(
            names,
            [compression.transcript_name()],
            "no temporary file is left behind"
        );
        assert_eq!(mode(&path), 0o600);
        for dir in [
            &sessions,
            &sessions.join("--w--"),
            &session_dir.to_path_buf(),
        ] {
            assert_eq!(mode(dir), 0o700, "{}", dir.display());
        }
    }
}

#[tokio::test]
async fn a_first_write_never_replaces_a_log_another_writer_published() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let late = store(root.path(), Compression::Zstd, true);
    late.create(SessionHeader::new("race", 1)).await.unwrap();
    let path = write_log_with(
        root.path(),
        Compression::Zstd,
        &SessionHeader::new("race", 2),
        &log[..7],
    )
    .await;
    let published = std::fs::read(&path).unwrap();

    let error = late.append("race", log.clone()).await.unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "refusing to materialize \"race\": a log already exists at \"{}\"",
            path.display()
        )),
        "{error}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), published);
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
}

#[tokio::test]
async fn a_failed_append_keeps_the_cursor_so_a_retry_writes_no_duplicate() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let log = long_session(2);
        let header = SessionHeader::new("retry", 1);
        let path = write_log_with(root.path(), compression, &header, &log[..40]).await;
        let persistence = store(root.path(), compression, true);
        persistence.load("retry").await.unwrap();

        let aside = path.with_extension("aside");
        std::fs::rename(&path, &aside).unwrap();
        let error = persistence
            .append("retry", log[40..].to_vec())
            .await
            .unwrap_err();
        assert!(
            matches!(error, PersistenceError::Backend(BackendError::Io { .. })),
            "{error:?}"
        );
        std::fs::rename(&aside, &path).unwrap();

        persistence
            .append("retry", log[40..].to_vec())
            .await
            .unwrap();
        let loaded = store(root.path(), compression, true)
            .load("retry")
            .await
            .unwrap();
        assert_eq!(texts(&loaded.events), texts(&log));
    }
}

#[tokio::test]
async fn revisions_change_on_append_and_repair_and_stay_stable_otherwise() {
    for compression in BOTH {
        let root = tempfile::tempdir().unwrap();
        let log = long_session(2);
        let path = write_log_with(
            root.path(),
            compression,
            &SessionHeader::new("rev", 1),
            &log[..40],
        )
        .await;
        let persistence = store(root.path(), compression, true);
        let first = revision(&persistence).await;
        let fields: Vec<&str> = first.split(':').collect();
        assert_eq!(fields.len(), 5, "<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>");
        assert_eq!(
            fields[2],
            std::fs::metadata(&path).unwrap().len().to_string()
        );

        persistence.inspect("rev").await.unwrap();
        persistence.load("rev").await.unwrap();
        persistence.read_raw("rev").await.unwrap();
        persistence.read_from("rev", 3).await.unwrap();
        assert_eq!(revision(&persistence).await, first);
        assert_eq!(
            revision(&store(root.path(), compression, true)).await,
            first
        );

        persistence
            .append("rev", log[40..45].to_vec())
            .await
            .unwrap();
        let appended = revision(&persistence).await;
        assert_ne!(appended, first);

        // An open turn is closed by the next load: a repair is a new revision too.
        persistence.inspect("rev").await.unwrap();
        assert_eq!(revision(&persistence).await, appended);
        persistence.load("rev").await.unwrap();
        let repaired = revision(&persistence).await;
        assert_ne!(repaired, appended);
        persistence.load("rev").await.unwrap();
        assert_eq!(revision(&persistence).await, repaired);
    }
}

// ---------------------------------------------------------------------------------------------
// Packed, unpacked and mixed files (§3.3)

#[tokio::test]
async fn a_delta_run_is_written_as_one_row_and_loads_back_identical() {
    let root = tempfile::tempdir().unwrap();
    let log = chunk_run_log();
    let path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("packed", 1),
        &log,
    )
    .await;

    assert_eq!(
        line_types(&path),
        [
            "session",
            "turn/start",
            "step/start",
            "text-chunks",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    let row = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .nth(3)
        .unwrap()
        .to_owned();
    assert_eq!(
        row,
        r#"{"type":"text-chunks","seq0":2,"time0":3,"data":{"turn":1,"step":1,"index":0,"dt":[1,1,1,1],"texts":["t0","t1","t2","t3","t4"]}}"#
    );
    let loaded = store(root.path(), Compression::None, true)
        .load("packed")
        .await
        .unwrap();
    assert_eq!(texts(&loaded.events), texts(&log));
}

#[tokio::test]
async fn pack_off_writes_each_event_as_its_own_line() {
    let root = tempfile::tempdir().unwrap();
    let log = chunk_run_log();
    let header = SessionHeader::new("unpacked", 1);
    let persistence = store(root.path(), Compression::None, false);
    persistence.create(header.clone()).await.unwrap();
    persistence.append("unpacked", log.clone()).await.unwrap();

    let path = persistence.locate(&header).unwrap().path;
    let expected = format!(
        "{}\n{}",
        dsh_persistence::log_file::header_line::header_line(&header),
        lines(&log)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    let loaded = store(root.path(), Compression::None, true)
        .load("unpacked")
        .await
        .unwrap();
    assert_eq!(texts(&loaded.events), texts(&log));
}

#[tokio::test]
async fn a_mixed_file_of_verbatim_lines_then_packed_appends_loads_in_order() {
    let root = tempfile::tempdir().unwrap();
    let first = chunk_run_log();
    let path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("mixed", 1),
        &[],
    )
    .await;
    // An older, unpacked writer's turn.
    append_bytes(&path, lines(&first).as_bytes());
    let persistence = store(root.path(), Compression::None, true);
    assert_eq!(
        texts(&persistence.load("mixed").await.unwrap().events),
        texts(&first)
    );

    let second: Vec<SessionEvent> = first
        .iter()
        .map(|event| {
            let mut event = event.clone();
            event.seq += 10;
            event.data["turn"] = json!(2);
            if let Some(sources) = &mut event.source_event_seqs {
                sources.iter_mut().for_each(|seq| *seq += 10);
            }
            event
        })
        .collect();
    persistence.append("mixed", second.clone()).await.unwrap();

    let loaded = store(root.path(), Compression::None, true)
        .load("mixed")
        .await
        .unwrap();
    let mut expected = texts(&first);
    expected.extend(texts(&second));
    assert_eq!(texts(&loaded.events), expected);
    let types = line_types(&path);
    assert_eq!(types.iter().filter(|t| *t == "text-chunks").count(), 1);
    assert_eq!(types.iter().filter(|t| *t == "assistant/chunk").count(), 5);
}

#[tokio::test]
async fn a_run_split_across_two_appends_packs_per_append() {
    let root = tempfile::tempdir().unwrap();
    let log = chunk_run_log();
    let header = SessionHeader::new("split", 1);
    let persistence = store(root.path(), Compression::None, true);
    persistence.create(header.clone()).await.unwrap();
    persistence
        .append("split", log[..4].to_vec())
        .await
        .unwrap();
    persistence
        .append("split", log[4..].to_vec())
        .await
        .unwrap();

    let path = persistence.locate(&header).unwrap().path;
    assert_eq!(
        line_types(&path),
        [
            "session",
            "turn/start",
            "step/start",
            "assistant/chunk",
            "assistant/chunk",
            "text-chunks",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    let loaded = store(root.path(), Compression::None, true)
        .load("split")
        .await
        .unwrap();
    assert_eq!(texts(&loaded.events), texts(&log));
}

#[tokio::test]
async fn reasoning_and_tool_call_runs_pack_and_a_named_first_delta_stays_verbatim() {
    let root = tempfile::tempdir().unwrap();
    // long_session's turn: 8 reasoning deltas, 4 text deltas, then a tool call whose first
    // delta carries the name and the other three do not.
    let log = long_session(1);
    let path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("kinds", 1),
        &log,
    )
    .await;

    let types = line_types(&path);
    let body: Vec<&str> = types[10..16].iter().map(String::as_str).collect();
    assert_eq!(
        body,
        [
            "user/message",
            "reasoning-chunks",
            "text-chunks",
            "assistant/chunk",
            "tool-call-chunks",
            "assistant/message"
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let row = text
        .lines()
        .find(|line| line.contains("tool-call-chunks"))
        .unwrap();
    assert_eq!(
        row,
        r#"{"type":"tool-call-chunks","seq0":23,"time0":1795976398559,"data":{"turn":1,"step":1,"index":2,"dt":[1,1],"id":"call_00001","args":["and\":\"ls -la ","&& wc -l src/*",".rs\"}"]}}"#
    );
    let loaded = store(root.path(), Compression::None, true)
        .load("kinds")
        .await
        .unwrap();
    assert_eq!(texts(&loaded.events), texts(&log));
}

// ---------------------------------------------------------------------------------------------
// Raw export (§2.1 readRaw)

#[tokio::test]
async fn read_raw_is_none_when_absent_and_refuses_a_corrupt_header() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(1);
    let path = write_log_with(
        root.path(),
        Compression::None,
        &SessionHeader::new("raw", 1),
        &log,
    )
    .await;
    let persistence = store(root.path(), Compression::None, true);
    assert!(persistence.read_raw("absent").await.unwrap().is_none());
    assert_eq!(
        persistence.read_raw("raw").await.unwrap().unwrap().content,
        std::fs::read_to_string(&path).unwrap()
    );

    std::fs::write(
        &path,
        "not a header line\n{\"type\":\"turn/start\",\"seq\":0}\n",
    )
    .unwrap();
    let error = persistence.read_raw("raw").await.unwrap_err();
    assert_eq!(
        corruption(error),
        format!(
            "corrupt session log: invalid header line in \"{}\"",
            path.display()
        )
    );
}

#[tokio::test]
async fn read_raw_of_a_zstd_log_omits_a_torn_final_frame() {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(2);
    let (id, path) = write_log(root.path(), Compression::Zstd, true, &log, &[7, 40, 73]).await;
    let full = store(root.path(), Compression::Zstd, true)
        .read_raw(&id)
        .await
        .unwrap()
        .unwrap();
    let original = std::fs::read(&path).unwrap();
    let last = scan_frames(&original).unwrap().frames[3].clone();
    std::fs::write(&path, &original[..last.end - 1]).unwrap();

    let raw = store(root.path(), Compression::Zstd, true)
        .read_raw(&id)
        .await
        .unwrap()
        .unwrap();
    let kept =
        String::from_utf8(zstd::stream::decode_all(&original[..last.start]).unwrap()).unwrap();
    assert_eq!(raw.content, kept);
    assert!(full.content.starts_with(&kept) && full.content.len() > kept.len());
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// A raw, unpacked log holding `long_session(2)[..40]` (preamble and turn 1); returns the
/// root, id, path and the whole two-turn log.
async fn raw_log_of_one_turn() -> (tempfile::TempDir, String, PathBuf, Vec<SessionEvent>) {
    let root = tempfile::tempdir().unwrap();
    let log = long_session(2);
    let (id, path) = write_log(root.path(), Compression::None, false, &log, &[7, 40]).await;
    (root, id, path, log)
}

/// Writes `log` in appends ending at the given indices; returns the id and the log path.
async fn write_log(
    root: &Path,
    compression: Compression,
    pack: bool,
    log: &[SessionEvent],
    ends: &[usize],
) -> (String, PathBuf) {
    let header = SessionHeader::new("s", 1_795_976_398_536).with_cwd("/srv/dsh-demo");
    let persistence = store(root, compression, pack);
    persistence.create(header.clone()).await.unwrap();
    let mut start = 0;
    for &end in ends {
        persistence
            .append("s", log[start..end].to_vec())
            .await
            .unwrap();
        start = end;
    }
    (header.id.clone(), persistence.locate(&header).unwrap().path)
}

/// Writes `log` (packed) in one append, or only the header when it is empty.
async fn write_log_with(
    root: &Path,
    compression: Compression,
    header: &SessionHeader,
    log: &[SessionEvent],
) -> PathBuf {
    let persistence = store(root, compression, true);
    let path = persistence.locate(header).unwrap().path;
    if log.is_empty() {
        let line = dsh_persistence::log_file::header_line::header_line(header);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        write_plain(&path, compression, &[&format!("{line}\n")]);
    } else {
        persistence.create(header.clone()).await.unwrap();
        persistence.append(&header.id, log.to_vec()).await.unwrap();
    }
    path
}

/// Where `header`'s log goes; creates its directory.
fn place(root: &Path, header: &SessionHeader, compression: Compression) -> PathBuf {
    let path = dsh_persistence_jsonl::layout::log_path(
        root,
        header.cwd.as_deref(),
        &header.id,
        compression,
    )
    .unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    path
}

/// Writes plaintext parts: as they are, or one zstd frame per part.
fn write_plain(path: &Path, compression: Compression, parts: &[&str]) {
    let bytes: Vec<u8> = match compression {
        Compression::None => parts.concat().into_bytes(),
        Compression::Zstd => parts
            .iter()
            .flat_map(|part| compress_frame(part.as_bytes()).unwrap())
            .collect(),
    };
    std::fs::write(path, bytes).unwrap();
}

fn append_bytes(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

/// Rewrites the header line of a raw log, keeping every other byte.
fn rewrite_first_line(path: &Path, update: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(first).unwrap();
    update(&mut header);
    std::fs::write(path, format!("{}\n{rest}", to_js_string(&header))).unwrap();
}

/// Each event's JSON text plus a newline.
fn lines(events: &[SessionEvent]) -> String {
    events
        .iter()
        .map(|event| format!("{}\n", to_js_string(event)))
        .collect()
}

/// The batch text the packed writer produces.
fn packed_lines(events: &[SessionEvent]) -> String {
    pack_chunk_runs(events)
        .iter()
        .map(|record| format!("{}\n", to_js_string(record)))
        .collect()
}

fn kinds(events: &[SessionEvent]) -> Vec<&str> {
    events.iter().map(|event| event.kind.as_ref()).collect()
}

/// The `type` of every line of a raw log.
fn line_types(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn corruption(error: PersistenceError) -> String {
    match error {
        PersistenceError::Corruption { cause, .. } => cause,
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

/// The artifacts a listing could not read, after checking that a plain `list` leaves them out.
async fn unreadable(persistence: &Coordinator<JsonlBackend>) -> Vec<UnreadableSession> {
    let listing = persistence.list_with_unreadable().await.unwrap();
    let listed: Vec<String> = persistence
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|header| header.id)
        .collect();
    let healthy: Vec<String> = listing
        .sessions
        .into_iter()
        .map(|header| header.id)
        .collect();
    assert_eq!(listed, healthy, "list gives the readable sessions");
    listing.unreadable
}

fn invalid(error: PersistenceError) -> String {
    match error {
        PersistenceError::Backend(BackendError::Invalid(message)) => message,
        other => panic!("expected an invalid-layout error, got {other:?}"),
    }
}

async fn revision(
    persistence: &dsh_persistence::Coordinator<dsh_persistence_jsonl::JsonlBackend>,
) -> String {
    let snapshots = persistence.list_snapshots().await.unwrap();
    assert_eq!(snapshots.len(), 1);
    snapshots[0].revision.clone()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A one-turn log whose step streams a five-member text-delta run (dsh's `chunkRunLog`).
fn chunk_run_log() -> Vec<SessionEvent> {
    let mut builder = LogBuilder::new(1);
    builder.push("turn/start", json!({"turn": 1}));
    builder.push("step/start", json!({"turn": 1, "step": 1}));
    for k in 0..5 {
        builder.push(
            "assistant/chunk",
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": format!("t{k}")}}),
        );
    }
    builder.push_surface(
        "assistant/message",
        json!({"turn": 1, "step": 1, "message": {"id": "m1", "role": "assistant",
            "content": [{"type": "text", "text": "t0t1t2t3t4"}],
            "source": {"kind": "model", "provider": "mock", "model": "mock"}}}),
        Some(vec![2, 3, 4, 5, 6]),
    );
    builder.push("step/end", json!({"turn": 1, "step": 1}));
    builder.push(
        "turn/end",
        json!({"turn": 1, "reason": {"kind": "completed"}}),
    );
    builder.finish()
}

/// Deterministic, poorly compressible printable text.
fn noise(len: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'!' + (state % 90) as u8)
        })
        .collect()
}
