//! dsh 0.1.1's own logs: a zstd log and a raw JSONL log, both with packed chunk rows. They
//! list, load and export exactly as dsh wrote them, re-encode to dsh's bytes, load without
//! being touched, and accept new turns that keep them valid for dsh.

use dsh_persistence::SessionPersistence;
use dsh_persistence::chunk_rows::{decode_record_into, pack_chunk_runs};
use dsh_persistence::log_file::header_line::header_line;
use dsh_persistence_jsonl::Compression;
use dsh_protocol::json::to_js_string;
use dsh_session::SessionEvent;
use dsh_test_support::turns::LogBuilder;
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::support::{FIXTURES, Fixture, fixture_path, split_frames, store};

/// dsh's plaintext of the zstd fixture, decoded by dsh itself.
const ZSTD_DECODED: &str = "01-zstd-default-one-bash/session.decoded.jsonl";

#[tokio::test]
async fn list_finds_each_installed_fixture_with_the_header_dsh_wrote() {
    for fixture in &FIXTURES {
        let root = tempfile::tempdir().unwrap();
        fixture.install(root.path());
        let headers = store(root.path(), fixture.compression, true)
            .list()
            .await
            .unwrap();
        assert_eq!(headers.len(), 1, "{}", fixture.file);
        let header = &headers[0];
        assert_eq!(header.id, fixture.id);
        assert_eq!(header.version, 0);
        assert_eq!(header.cwd.as_deref(), Some("/srv/dsh-demo"));
        assert_eq!(header.delegation_depth, Some(0));
        assert_eq!(header.parent_session, None);
        assert_eq!(
            header_line(header),
            decoded_lines(fixture)[0],
            "{}",
            fixture.file
        );
    }
}

#[test]
fn the_zstd_fixture_is_nine_frames_of_the_decoded_text() {
    let bytes = std::fs::read(fixture_path(FIXTURES[0].file)).unwrap();
    let frames = split_frames(&bytes);
    assert_eq!(frames.len(), 9);
    let plain: Vec<u8> = frames
        .iter()
        .flat_map(|frame| zstd::stream::decode_all(*frame).unwrap())
        .collect();
    assert_eq!(
        String::from_utf8(plain).unwrap(),
        std::fs::read_to_string(fixture_path(ZSTD_DECODED)).unwrap()
    );
    let header_frame = zstd::stream::decode_all(frames[0]).unwrap();
    assert_eq!(header_frame.iter().filter(|&&b| b == b'\n').count(), 1);
}

#[tokio::test]
async fn inspect_and_load_give_the_fixture_events_with_packed_rows_expanded() {
    for fixture in &FIXTURES {
        let root = tempfile::tempdir().unwrap();
        fixture.install(root.path());
        let expected = expanded_event_lines(fixture);
        assert!(expected.len() > 40, "{}", fixture.file);

        let persistence = store(root.path(), fixture.compression, true);
        let inspected = persistence.inspect(fixture.id).await.unwrap();
        assert_eq!(
            event_lines(&inspected.events),
            expected,
            "inspect {}",
            fixture.file
        );
        let loaded = persistence.load(fixture.id).await.unwrap();
        assert_eq!(
            event_lines(&loaded.events),
            expected,
            "load {}",
            fixture.file
        );
        assert_eq!(loaded.header, inspected.header);
        assert!(
            loaded
                .events
                .iter()
                .enumerate()
                .all(|(i, e)| e.seq == i as u64),
            "{}: seqs are contiguous",
            fixture.file
        );
    }
}

#[test]
fn the_fixtures_contain_packed_text_rows_and_verbatim_chunks() {
    for fixture in &FIXTURES {
        let lines = decoded_lines(fixture);
        let tags: Vec<String> = lines[1..]
            .iter()
            .map(|line| {
                serde_json::from_str::<Value>(line).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            tags.iter().filter(|t| *t == "text-chunks").count(),
            1,
            "{}",
            fixture.file
        );
        assert!(
            tags.iter().any(|t| t == "assistant/chunk"),
            "{}",
            fixture.file
        );
    }
}

#[tokio::test]
async fn read_raw_returns_the_decoded_text_exactly() {
    for fixture in &FIXTURES {
        let root = tempfile::tempdir().unwrap();
        fixture.install(root.path());
        let raw = store(root.path(), fixture.compression, true)
            .read_raw(fixture.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(raw.filename, "session.jsonl");
        assert_eq!(raw.header.id, fixture.id);
        assert_eq!(raw.content, decoded_text(fixture), "{}", fixture.file);
    }
}

#[tokio::test]
async fn read_from_starts_inside_a_packed_row() {
    let fixture = &FIXTURES[0];
    let root = tempfile::tempdir().unwrap();
    fixture.install(root.path());
    // Seqs 30..=34 are the members of the fixture's text-chunks row.
    let suffix = store(root.path(), fixture.compression, true)
        .read_from(fixture.id, 32)
        .await
        .unwrap();
    let expected = expanded_event_lines(fixture);
    assert_eq!(suffix[0].seq, 32);
    assert_eq!(event_lines(&suffix), expected[32..].to_vec());
}

#[test]
fn every_fixture_line_re_encodes_to_the_bytes_dsh_wrote() {
    for fixture in &FIXTURES {
        for line in &decoded_lines(fixture)[1..] {
            let mut events = Vec::new();
            decode_record_into(serde_json::from_str(line).unwrap(), &mut events).unwrap();
            let records = pack_chunk_runs(&events);
            assert_eq!(records.len(), 1, "{line}");
            assert_eq!(&to_js_string(&records[0]), line);
        }
    }
}

#[test]
fn every_zstd_fixture_frame_re_packs_to_the_batch_text_dsh_wrote() {
    let bytes = std::fs::read(fixture_path(FIXTURES[0].file)).unwrap();
    for frame in &split_frames(&bytes)[1..] {
        let plain = String::from_utf8(zstd::stream::decode_all(*frame).unwrap()).unwrap();
        let mut events = Vec::new();
        for line in plain.lines() {
            decode_record_into(serde_json::from_str(line).unwrap(), &mut events).unwrap();
        }
        let repacked: String = pack_chunk_runs(&events)
            .iter()
            .map(|record| format!("{}\n", to_js_string(record)))
            .collect();
        assert_eq!(repacked, plain);
    }
}

#[tokio::test]
async fn loading_or_inspecting_a_balanced_fixture_leaves_its_bytes_and_revision_alone() {
    for fixture in &FIXTURES {
        let root = tempfile::tempdir().unwrap();
        let path = fixture.install(root.path());
        let before = std::fs::read(&path).unwrap();
        let persistence = store(root.path(), fixture.compression, true);
        let revision = persistence.list_snapshots().await.unwrap()[0]
            .revision
            .clone();

        persistence.inspect(fixture.id).await.unwrap();
        persistence.load(fixture.id).await.unwrap();
        let prepared = persistence.prepare(fixture.id).await.unwrap();
        let fresh = store(root.path(), fixture.compression, true);
        fresh.load(fixture.id).await.unwrap();

        assert_eq!(std::fs::read(&path).unwrap(), before, "{}", fixture.file);
        assert_eq!(fresh.list_snapshots().await.unwrap()[0].revision, revision);
        let session_events = prepared.session.events();
        assert_eq!(
            session_events.last().unwrap().kind,
            "session/end-seed",
            "prepare adds the end-seed marker in memory only"
        );
        assert_eq!(
            session_events.len(),
            expanded_event_lines(fixture).len() + 1
        );
    }
}

#[tokio::test]
async fn a_new_turn_appended_to_a_dsh_log_reopens_with_every_event() {
    for fixture in &FIXTURES {
        let root = tempfile::tempdir().unwrap();
        let path = fixture.install(root.path());
        let original = std::fs::read(&path).unwrap();

        let persistence = store(root.path(), fixture.compression, true);
        let loaded = persistence.load(fixture.id).await.unwrap();
        let turn = next_turn(loaded.events.len() as u64, 2);
        persistence.append(fixture.id, turn.clone()).await.unwrap();

        let reopened = store(root.path(), fixture.compression, true);
        let reloaded = reopened.load(fixture.id).await.unwrap();
        let mut expected = event_lines(&loaded.events);
        expected.extend(event_lines(&turn));
        assert_eq!(event_lines(&reloaded.events), expected, "{}", fixture.file);

        let after = std::fs::read(&path).unwrap();
        assert!(
            after.starts_with(&original),
            "dsh's bytes are never rewritten"
        );
        let batch = batch_text(&turn);
        assert!(
            batch.contains("\"type\":\"reasoning-chunks\""),
            "the new turn is packed"
        );
        let mut text = decoded_text(fixture);
        text.push_str(&batch);
        assert_eq!(
            reopened
                .read_raw(fixture.id)
                .await
                .unwrap()
                .unwrap()
                .content,
            text
        );
        if fixture.compression == Compression::Zstd {
            let appended = &after[original.len()..];
            assert_eq!(split_frames(appended).len(), 1, "one frame per append");
            assert_eq!(
                String::from_utf8(zstd::stream::decode_all(&after[..]).unwrap()).unwrap(),
                text,
                "the file stays a valid concatenation of zstd frames"
            );
        } else {
            assert_eq!(String::from_utf8(after).unwrap(), text);
        }
    }
}

#[tokio::test]
async fn a_fixture_with_a_cut_final_turn_end_is_closed_as_interrupted() {
    let fixture = &FIXTURES[1];
    let root = tempfile::tempdir().unwrap();
    let path = fixture.install(root.path());
    let text = std::fs::read_to_string(&path).unwrap();
    // Drop the final `turn/end` line: the turn was left open by a crash.
    let trimmed = text.trim_end_matches('\n');
    let committed = &text[..=trimmed.rfind('\n').unwrap()];
    std::fs::write(&path, committed).unwrap();

    let loaded = store(root.path(), fixture.compression, true)
        .load(fixture.id)
        .await
        .unwrap();
    let last = loaded.events.last().unwrap();
    assert_eq!(last.kind, "turn/end");
    assert_eq!(
        last.data,
        json!({"turn": 1, "reason": {"kind": "interrupted"}})
    );
    assert_eq!(last.seq, 56);
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after, format!("{committed}{}\n", to_js_string(last)));
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// The fixture's decoded text: the zstd log's plaintext, or the raw log itself.
fn decoded_text(fixture: &Fixture) -> String {
    let file = match fixture.compression {
        Compression::Zstd => ZSTD_DECODED,
        Compression::None => fixture.file,
    };
    std::fs::read_to_string(fixture_path(file)).unwrap()
}

/// The fixture's decoded lines, header first.
fn decoded_lines(fixture: &Fixture) -> Vec<String> {
    decoded_text(fixture).lines().map(str::to_owned).collect()
}

/// The fixture's events as compact JSON lines, with packed rows expanded by an expander
/// written from the spec (§3.3) with `serde_json` only.
fn expanded_event_lines(fixture: &Fixture) -> Vec<String> {
    decoded_lines(fixture)[1..]
        .iter()
        .flat_map(|line| expand(line))
        .collect()
}

fn expand(line: &str) -> Vec<String> {
    let row: Value = serde_json::from_str(line).unwrap();
    let delta = match row["type"].as_str().unwrap() {
        "text-chunks" => "text-delta",
        "reasoning-chunks" => "reasoning-delta",
        "tool-call-chunks" => "tool-call-delta",
        _ => return vec![line.to_owned()],
    };
    let data = &row["data"];
    let members = if delta == "tool-call-delta" {
        &data["args"]
    } else {
        &data["texts"]
    };
    let members = members.as_array().unwrap();
    let dt = data["dt"].as_array().unwrap();
    assert_eq!(dt.len() + 1, members.len());
    let seq0 = row["seq0"].as_u64().unwrap();
    let mut time = row["time0"].as_i64().unwrap();
    let mut lines = Vec::new();
    for (k, member) in members.iter().enumerate() {
        if k > 0 {
            time += dt[k - 1].as_i64().unwrap();
        }
        let mut chunk = Map::new();
        chunk.insert("type".into(), json!(delta));
        chunk.insert("index".into(), data["index"].clone());
        if delta == "tool-call-delta" {
            chunk.insert("id".into(), data["id"].clone());
            if let Some(name) = data.get("name") {
                chunk.insert("name".into(), name.clone());
            }
            chunk.insert("argumentsDelta".into(), member.clone());
        } else {
            chunk.insert("text".into(), member.clone());
        }
        let mut event = Map::new();
        event.insert("type".into(), json!("assistant/chunk"));
        event.insert("seq".into(), json!(seq0 + k as u64));
        event.insert("time".into(), json!(time));
        event.insert(
            "data".into(),
            json!({"turn": data["turn"], "step": data["step"], "chunk": chunk}),
        );
        lines.push(serde_json::to_string(&event).unwrap());
    }
    lines
}

fn event_lines(events: &[SessionEvent]) -> Vec<String> {
    events.iter().map(to_js_string).collect()
}

/// The storage text of one packed batch.
fn batch_text(events: &[SessionEvent]) -> String {
    pack_chunk_runs(events)
        .iter()
        .map(|record| format!("{}\n", to_js_string(record)))
        .collect()
}

/// One realistic turn numbered `turn`, its seqs (and provenance) starting at `seq0`.
fn next_turn(seq0: u64, turn: u64) -> Vec<SessionEvent> {
    let mut builder = LogBuilder::new(1_795_976_500_000);
    builder.turn(turn);
    builder
        .finish()
        .into_iter()
        .map(|mut event| {
            event.seq += seq0;
            if let Some(sources) = &mut event.source_event_seqs {
                sources.iter_mut().for_each(|seq| *seq += seq0);
            }
            event
        })
        .collect()
}
