//! Packed chunk rows: runs pack and decode byte for byte, anything unusual stays verbatim,
//! malformed rows are refused with dsh 0.1's message.

use std::borrow::Cow;

use dsh_persistence::chunk_rows::{
    ChunkKind, ChunkRowError, MIN_RUN, PackedRow, StorageRecord, decode_record, decode_record_into,
    pack_chunk_runs,
};
use dsh_protocol::json::{MAX_SAFE_INTEGER, to_js_string};
use dsh_session::{SessionEvent, SurfaceOp};
use proptest::prelude::*;
use serde_json::{Value, json};

fn chunk_event(seq: u64, time: i64, chunk: Value) -> SessionEvent {
    chunk_at(seq, time, chunk, 1, 1)
}

fn chunk_at(seq: u64, time: i64, chunk: Value, turn: u64, step: u64) -> SessionEvent {
    SessionEvent::new(
        "assistant/chunk",
        seq,
        time,
        json!({"turn": turn, "step": step, "chunk": chunk}),
    )
}

/// `count` deltas of one kind, contiguous seqs, 10 ms apart.
fn delta_run(kind: &str, count: u64, seq0: u64, index: u64) -> Vec<SessionEvent> {
    (0..count)
        .map(|k| {
            let time = 1000 + 10 * k as i64;
            chunk_event(
                seq0 + k,
                time,
                json!({"type": kind, "index": index, "text": format!("t{k}")}),
            )
        })
        .collect()
}

fn tool_delta(seq: u64, time: i64, id: &str, name: Option<&str>, args: &str) -> SessionEvent {
    let mut chunk = json!({"type": "tool-call-delta", "index": 0, "id": id});
    if let Some(name) = name {
        chunk["name"] = json!(name);
    }
    chunk["argumentsDelta"] = json!(args);
    chunk_event(seq, time, chunk)
}

fn lines(records: &[StorageRecord<'_>]) -> Vec<String> {
    records.iter().map(to_js_string).collect()
}

/// Writes the records as JSONL text, parses each line back and decodes it.
fn decode_all(records: &[StorageRecord<'_>]) -> Vec<SessionEvent> {
    let mut out = Vec::new();
    for line in lines(records) {
        let count = decode_record_into(serde_json::from_str(&line).unwrap(), &mut out).unwrap();
        assert!(count >= 1);
    }
    out
}

fn texts(events: &[SessionEvent]) -> Vec<String> {
    events.iter().map(to_js_string).collect()
}

/// Packing stored each event as itself.
fn all_verbatim(events: &[SessionEvent]) -> bool {
    let records = pack_chunk_runs(events);
    records.len() == events.len()
        && records.iter().zip(events).all(|(record, event)| {
            matches!(record, StorageRecord::Event(stored) if std::ptr::eq(stored.as_ref(), event))
        })
}

#[test]
fn packs_a_text_delta_run_into_one_row_and_round_trips_it() {
    let events = delta_run("text-delta", 5, 0, 0);
    let packed = pack_chunk_runs(&events);
    assert_eq!(packed.len(), 1);
    let StorageRecord::Packed(row) = &packed[0] else {
        panic!("not packed")
    };
    assert_eq!(
        (row.kind(), row.seq0(), row.time0(), row.member_count()),
        (ChunkKind::Text, 0, 1000, 5)
    );
    assert_eq!(
        to_js_string(&packed[0]),
        r#"{"type":"text-chunks","seq0":0,"time0":1000,"data":{"turn":1,"step":1,"index":0,"dt":[10,10,10,10],"texts":["t0","t1","t2","t3","t4"]}}"#
    );
    let decoded = decode_all(&packed);
    assert_eq!(decoded, events);
    assert_eq!(texts(&decoded), texts(&events));
}

#[test]
fn packs_reasoning_and_tool_call_runs_under_their_own_tags() {
    let mut events = delta_run("reasoning-delta", 3, 0, 0);
    for seq in 4..=6 {
        let mut event = tool_delta(
            seq,
            1000 + seq as i64,
            "c1",
            Some("write"),
            &format!("a{seq}"),
        );
        event.data["chunk"]["index"] = json!(1);
        events.push(event);
    }
    // Seq 3 is missing: the runs are not contiguous with each other anyway.
    let packed = pack_chunk_runs(&events);
    let tags: Vec<_> = packed
        .iter()
        .map(|record| match record {
            StorageRecord::Packed(row) => row.kind().tag(),
            StorageRecord::Event(_) => "event",
        })
        .collect();
    assert_eq!(tags, ["reasoning-chunks", "tool-call-chunks"]);
    assert_eq!(
        to_js_string(&packed[1]),
        r#"{"type":"tool-call-chunks","seq0":4,"time0":1004,"data":{"turn":1,"step":1,"index":1,"dt":[1,1],"id":"c1","name":"write","args":["a4","a5","a6"]}}"#
    );
    assert_eq!(decode_all(&packed), events);
}

#[test]
fn packs_a_nameless_tool_call_run_and_round_trips_the_absence() {
    let events: Vec<_> = (0..3)
        .map(|seq| tool_delta(seq, 1000, "c1", None, &format!("a{seq}")))
        .collect();
    let packed = pack_chunk_runs(&events);
    assert_eq!(packed.len(), 1);
    let line = to_js_string(&packed[0]);
    assert!(!line.contains("name"), "{line}");
    let decoded = decode_all(&packed);
    assert_eq!(decoded, events);
    assert!(
        decoded
            .iter()
            .all(|event| event.data["chunk"].get("name").is_none())
    );
}

#[test]
fn leaves_runs_shorter_than_three_verbatim() {
    assert!(all_verbatim(&delta_run("text-delta", 2, 0, 0)));
}

#[test]
fn leaves_non_delta_chunks_and_other_events_verbatim_between_runs() {
    let mut events = vec![chunk_event(
        0,
        1000,
        json!({"type": "block-start", "index": 0, "blockType": "text"}),
    )];
    events.extend(delta_run("text-delta", 3, 1, 0));
    events.push(chunk_event(
        4,
        1040,
        json!({"type": "block-end", "index": 0, "block": {"type": "text", "text": "t0t1t2"}}),
    ));
    events.push(SessionEvent::new(
        "step/end",
        5,
        1050,
        json!({"turn": 1, "step": 1}),
    ));
    let packed = pack_chunk_runs(&events);
    assert_eq!(packed.len(), 4);
    assert!(matches!(&packed[1], StorageRecord::Packed(row) if row.kind() == ChunkKind::Text));
    assert_eq!(decode_all(&packed), events);
}

#[test]
fn breaks_a_run_on_a_seq_gap_kind_index_or_step_switch() {
    let mut seq_gap = delta_run("text-delta", 3, 0, 0);
    seq_gap[2].seq = 9;
    let mut kind_switch = delta_run("text-delta", 2, 0, 0);
    kind_switch.extend(delta_run("reasoning-delta", 1, 2, 0));
    let mut index_switch = delta_run("text-delta", 2, 0, 0);
    index_switch.extend(delta_run("text-delta", 1, 2, 7));
    let mut step_switch = delta_run("text-delta", 3, 0, 0);
    step_switch[2].data["step"] = json!(2);
    let mut turn_switch = delta_run("text-delta", 3, 0, 0);
    turn_switch[2].data["turn"] = json!(2);
    for (label, events) in [
        ("a seq gap", seq_gap),
        ("a kind switch", kind_switch),
        ("a block-index switch", index_switch),
        ("a step switch", step_switch),
        ("a turn switch", turn_switch),
    ] {
        assert!(all_verbatim(&events), "{label}");
    }
}

#[test]
fn breaks_a_tool_call_run_on_a_call_id_or_name_change() {
    let id_switch = [
        tool_delta(0, 1000, "c1", Some("w"), "a"),
        tool_delta(1, 1000, "c1", Some("w"), "a"),
        tool_delta(2, 1000, "c2", Some("w"), "a"),
    ];
    assert!(all_verbatim(&id_switch));
    let name_presence = [
        tool_delta(0, 1000, "c1", Some("w"), "a"),
        tool_delta(1, 1000, "c1", Some("w"), "a"),
        tool_delta(2, 1000, "c1", None, "a"),
    ];
    assert!(all_verbatim(&name_presence));
    let name_value = [
        tool_delta(0, 1000, "c1", Some("w"), "a"),
        tool_delta(1, 1000, "c1", Some("w"), "a"),
        tool_delta(2, 1000, "c1", Some("r"), "a"),
    ];
    assert!(all_verbatim(&name_value));
}

#[test]
fn stores_off_whitelist_deltas_verbatim() {
    let text = |seq| {
        chunk_event(
            seq,
            1000,
            json!({"type": "text-delta", "index": 0, "text": "x"}),
        )
    };
    let mut surface = text(0);
    surface.surface_op = Some(SurfaceOp::Append);
    let mut sources = text(1);
    sources.source_event_seqs = Some(vec![0]);
    let mut ignorable = text(2);
    ignorable.ignorable = true;
    let bad_text = chunk_event(
        3,
        1000,
        json!({"type": "text-delta", "index": 0, "text": 7}),
    );
    let mut other_kind = text(4);
    other_kind.kind = Cow::Borrowed("assistant/chunks");
    let mut unsafe_time = text(5);
    unsafe_time.time = i64::MAX;
    let mut unsafe_seq = text(6);
    unsafe_seq.seq = MAX_SAFE_INTEGER + 1;
    assert!(all_verbatim(&[
        surface,
        sources,
        ignorable,
        bad_text,
        other_kind,
        unsafe_time,
        unsafe_seq
    ]));
}

#[test]
fn breaks_a_run_on_a_time_gap_beyond_safe_range() {
    let a = -(MAX_SAFE_INTEGER as i64);
    let b = MAX_SAFE_INTEGER as i64 - 1;
    let events = [
        chunk_event(0, a, json!({"type": "text-delta", "index": 0, "text": "x"})),
        chunk_event(1, b, json!({"type": "text-delta", "index": 0, "text": "y"})),
        chunk_event(
            2,
            b + 1,
            json!({"type": "text-delta", "index": 0, "text": "z"}),
        ),
    ];
    assert!(all_verbatim(&events));
    assert_eq!(decode_all(&pack_chunk_runs(&events)), events);
}

#[test]
fn stores_deltas_with_off_whitelist_data_verbatim() {
    let mk = |seq, data: Value| SessionEvent::new("assistant/chunk", seq, 1000, data);
    let events = [
        mk(0, json!("not-an-object")),
        mk(
            1,
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}, "extra": 1}),
        ),
        mk(
            2,
            json!({"turn": "x", "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}),
        ),
        mk(3, json!({"turn": 1, "step": 1, "chunk": "not-an-object"})),
        mk(
            4,
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": "x", "text": "a"}}),
        ),
        mk(
            5,
            json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": 7, "argumentsDelta": "a"}}),
        ),
        mk(
            6,
            json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "name": 7, "argumentsDelta": "a"}}),
        ),
        mk(
            7,
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a", "extra": 1}}),
        ),
        mk(
            8,
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0}}),
        ),
        mk(
            9,
            json!({"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "a", "name": "n"}}),
        ),
        mk(
            10,
            json!({"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": {}}}),
        ),
        mk(11, json!({"turn": 1, "step": 1})),
    ];
    assert!(all_verbatim(&events));
}

#[test]
fn keeps_deltas_with_keys_in_another_order_verbatim() {
    // dsh 0.1 would pack these and read them back in its own key order; we keep the bytes.
    let reordered = |seq| {
        let data: Value = serde_json::from_str(
            r#"{"step":1,"turn":1,"chunk":{"index":0,"type":"text-delta","text":"a"}}"#,
        )
        .unwrap();
        SessionEvent::new("assistant/chunk", seq, 1000, data)
    };
    let events = [reordered(0), reordered(1), reordered(2)];
    assert!(all_verbatim(&events));
    assert_eq!(
        texts(&decode_all(&pack_chunk_runs(&events))),
        texts(&events)
    );
}

#[test]
fn numbers_equal_in_javascript_share_a_run() {
    let mut events = delta_run("text-delta", 3, 0, 0);
    events[1].data["turn"] = json!(1.0);
    events[2].data["chunk"]["index"] = json!(0.0);
    let packed = pack_chunk_runs(&events);
    assert_eq!(packed.len(), 1);
    assert_eq!(texts(&decode_all(&packed)), texts(&events));
}

#[test]
fn splits_runs_across_batches() {
    let events = delta_run("text-delta", 8, 0, 0);
    let first = pack_chunk_runs(&events[..4]);
    let second = pack_chunk_runs(&events[4..]);
    assert_eq!((first.len(), second.len()), (1, 1));
    assert_eq!(second[0].first_seq(), 4);
    let mut decoded = decode_all(&first);
    decoded.extend(decode_all(&second));
    assert_eq!(decoded, events);
}

#[test]
fn passes_non_row_objects_through_as_events() {
    let line = r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#;
    let record = decode_record(serde_json::from_str(line).unwrap()).unwrap();
    assert!(matches!(&record, StorageRecord::Event(_)));
    assert_eq!(to_js_string(&record), line);
    assert_eq!(
        decode_record(json!("junk")),
        Err(ChunkRowError::NotAnObject)
    );
    assert_eq!(decode_record(json!(null)), Err(ChunkRowError::NotAnObject));
    assert_eq!(decode_record(json!([1])), Err(ChunkRowError::NotAnObject));
    let error = decode_record(json!({"type": "x/y", "seq": 0, "time": 1})).unwrap_err();
    assert_eq!(error.to_string(), "data is missing");
    // A tag that is not a string is no row tag.
    let error = decode_record(json!({"type": 7, "seq0": 0})).unwrap_err();
    assert_eq!(error.to_string(), "type must be a string");
}

#[test]
fn reconstructs_times_through_negative_gaps() {
    let events = [
        chunk_event(
            0,
            1000,
            json!({"type": "text-delta", "index": 0, "text": "a"}),
        ),
        chunk_event(
            1,
            990,
            json!({"type": "text-delta", "index": 0, "text": "b"}),
        ),
        chunk_event(
            2,
            995,
            json!({"type": "text-delta", "index": 0, "text": "c"}),
        ),
    ];
    let packed = pack_chunk_runs(&events);
    assert!(to_js_string(&packed[0]).contains(r#""dt":[-10,5]"#));
    assert_eq!(decode_all(&packed), events);
}

#[test]
fn decodes_rows_with_javascript_numbers() {
    let row = json!({"type": "text-chunks", "seq0": 2.0, "time0": -0.0, "data": {"dt": [1e3, -0.0], "texts": ["a", "b", "c"], "turn": 1.5, "step": 1, "index": 0}});
    let mut out = Vec::new();
    assert_eq!(decode_record_into(row, &mut out), Ok(3));
    assert_eq!(
        texts(&out),
        [
            r#"{"type":"assistant/chunk","seq":2,"time":0,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}"#,
            r#"{"type":"assistant/chunk","seq":3,"time":1000,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"b"}}}"#,
            r#"{"type":"assistant/chunk","seq":4,"time":1000,"data":{"turn":1.5,"step":1,"chunk":{"type":"text-delta","index":0,"text":"c"}}}"#,
        ]
    );
}

#[test]
fn dsh_rows_decode_and_repack_byte_for_byte() {
    // Rows from dsh 0.1's packed-chunks scenario, with the envelope the fixture normalizes away.
    let rows = [
        r#"{"type":"reasoning-chunks","seq0":7,"time0":1754000000000,"data":{"turn":1,"step":1,"index":0,"dt":[0,0,1,0,0,28],"texts":["The"," user"," wants"," me"," to"," run","\n\u0001é"]}}"#,
        r#"{"type":"tool-call-chunks","seq0":14,"time0":1754000000058,"data":{"turn":1,"step":1,"index":1,"dt":[0,28,1,0],"id":"call_00_JliP571Bh0QQ8QExbSPk0080","name":"bash","args":["","{","\"","command","\""]}}"#,
        r#"{"type":"text-chunks","seq0":19,"time0":1754000000087,"data":{"turn":1,"step":2,"index":1,"dt":[29,0],"texts":["The"," tool"," returned"]}}"#,
    ];
    let mut events = Vec::new();
    for row in rows {
        let record = decode_record(serde_json::from_str(row).unwrap()).unwrap();
        assert_eq!(to_js_string(&record), row);
        record.into_events(&mut events);
    }
    assert_eq!(events.len(), 15);
    assert_eq!(lines(&pack_chunk_runs(&events)), rows);
}

#[test]
fn refuses_malformed_rows() {
    let text = |data: Value| json!({"type": "text-chunks", "seq0": 0, "time0": 1, "data": data});
    let ok_data = json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]});
    let mut extra_key = text(ok_data.clone());
    extra_key["extra"] = json!(1);
    let mut no_data = text(ok_data.clone());
    no_data.as_object_mut().unwrap().remove("data");
    let mut negative_seq0 = text(ok_data.clone());
    negative_seq0["seq0"] = json!(-1);
    let mut unsafe_seq0 = text(ok_data.clone());
    unsafe_seq0["seq0"] = json!(MAX_SAFE_INTEGER + 1);
    let mut null_time0 = text(ok_data.clone());
    null_time0["time0"] = json!(null);
    let mut fractional_time0 = text(ok_data);
    fractional_time0["time0"] = json!(1.5);
    let tool =
        |data: Value| json!({"type": "tool-call-chunks", "seq0": 0, "time0": 1, "data": data});
    let cases = [
        (
            "a non-object data",
            text(json!("x")),
            "text-chunks",
            "data must be an object",
        ),
        (
            "an array data",
            text(json!([1])),
            "text-chunks",
            "data must be exactly {turn, step, index, dt, texts}",
        ),
        (
            "an envelope with extra keys",
            extra_key,
            "text-chunks",
            "envelope must be exactly {type, seq0, time0, data}",
        ),
        (
            "an envelope without data",
            no_data,
            "text-chunks",
            "envelope must be exactly {type, seq0, time0, data}",
        ),
        (
            "a negative seq0",
            negative_seq0,
            "text-chunks",
            "seq0 must be a non-negative safe integer",
        ),
        (
            "an unsafe seq0",
            unsafe_seq0,
            "text-chunks",
            "seq0 must be a non-negative safe integer",
        ),
        (
            "a null time0",
            null_time0,
            "text-chunks",
            "time0 must be a safe integer",
        ),
        (
            "a fractional time0",
            fractional_time0,
            "text-chunks",
            "time0 must be a safe integer",
        ),
        (
            "a data shape mismatch",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]})),
            "text-chunks",
            "data must be exactly {turn, step, index, dt, texts}",
        ),
        (
            "a non-string member",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": [7]})),
            "text-chunks",
            "texts must be a non-empty string array",
        ),
        (
            "an empty member list",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": []})),
            "text-chunks",
            "texts must be a non-empty string array",
        ),
        (
            "a dt arity mismatch",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b"]})),
            "text-chunks",
            "dt length 2 does not match 2 members",
        ),
        (
            "a null dt gap",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [null], "texts": ["a", "b"]})),
            "text-chunks",
            "dt must be an array of safe integers",
        ),
        (
            "a fractional dt gap",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": [0.5], "texts": ["a", "b"]})),
            "text-chunks",
            "dt must be an array of safe integers",
        ),
        (
            "a non-array dt",
            text(json!({"turn": 1, "step": 1, "index": 0, "dt": 0, "texts": ["a"]})),
            "text-chunks",
            "dt must be an array of safe integers",
        ),
        (
            "a member seq leaving safe range",
            json!({"type": "text-chunks", "seq0": MAX_SAFE_INTEGER, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]}}),
            "text-chunks",
            "member seqs must stay safe integers",
        ),
        (
            "a member time leaving safe range",
            json!({"type": "text-chunks", "seq0": 0, "time0": MAX_SAFE_INTEGER, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}}),
            "text-chunks",
            "member times must stay safe integers",
        ),
        (
            "a non-numeric turn",
            text(json!({"turn": "x", "step": 1, "index": 0, "dt": [], "texts": ["a"]})),
            "text-chunks",
            "turn/step/index must be numbers",
        ),
        (
            "a reasoning row with args",
            json!({"type": "reasoning-chunks", "seq0": 0, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]}}),
            "reasoning-chunks",
            "data must be exactly {turn, step, index, dt, texts}",
        ),
        (
            "a tool-call row without id",
            tool(json!({"turn": 1, "step": 1, "index": 0, "dt": [], "args": ["a"]})),
            "tool-call-chunks",
            "data must be exactly {turn, step, index, id, name?, dt, args}",
        ),
        (
            "a tool-call row with non-string id",
            tool(json!({"turn": 1, "step": 1, "index": 0, "id": 7, "dt": [], "args": ["a"]})),
            "tool-call-chunks",
            "id (and name when present) must be strings",
        ),
        (
            "a tool-call row with non-string name",
            tool(
                json!({"turn": 1, "step": 1, "index": 0, "id": "c", "name": 7, "dt": [], "args": ["a"]}),
            ),
            "tool-call-chunks",
            "id (and name when present) must be strings",
        ),
        (
            "a tool-call row with empty args",
            tool(json!({"turn": 1, "step": 1, "index": 0, "id": "c", "dt": [], "args": []})),
            "tool-call-chunks",
            "args must be a non-empty string array",
        ),
    ];
    for (label, row, tag, reason) in cases {
        let mut out = vec![SessionEvent::new("x/y", 0, 0, json!({}))];
        let error = decode_record_into(row, &mut out).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("malformed {tag} storage row: {reason}"),
            "{label}"
        );
        assert_eq!(out.len(), 1, "{label}: nothing is appended on error");
    }
}

// --- Property: decode ∘ JSONL ∘ pack is the identity, byte for byte ---

fn delta_chunk() -> impl Strategy<Value = Value> {
    let text = ".{0,6}";
    prop_oneof![
        (0u8..3, text).prop_map(|(index, text)| json!({"type": "text-delta", "index": index, "text": text})),
        (0u8..3, text).prop_map(|(index, text)| json!({"type": "reasoning-delta", "index": index, "text": text})),
        (0u8..3, prop::sample::select(vec!["c1", "c2"]), text).prop_map(|(index, id, args)| {
            json!({"type": "tool-call-delta", "index": index, "id": id, "argumentsDelta": args})
        }),
        (0u8..3, prop::sample::select(vec!["c1", "c2"]), prop::sample::select(vec!["write", "read"]), text)
            .prop_map(|(index, id, name, args)| {
                json!({"type": "tool-call-delta", "index": index, "id": id, "name": name, "argumentsDelta": args})
            }),
    ]
}

fn other_chunk() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u8..3)
            .prop_map(|index| json!({"type": "block-start", "index": index, "blockType": "text"})),
        Just(json!({"type": "finish", "reason": {"kind": "stop"}})),
        // Off-whitelist deltas: an extra key, a fractional index, keys in another order.
        Just(json!({"type": "text-delta", "index": 0, "text": "x", "extra": true})),
        Just(json!({"type": "text-delta", "index": 0.5, "text": "x"})),
        Just(
            serde_json::from_str::<Value>(r#"{"index":0,"type":"text-delta","text":"x"}"#).unwrap()
        ),
    ]
}

/// One event before seqs and times are placed.
#[derive(Debug, Clone)]
enum Draft {
    Chunk {
        chunk: Value,
        turn: u8,
        step: u8,
        float_turn: bool,
    },
    Other {
        kind: &'static str,
        ignorable: bool,
        surface: bool,
    },
}

fn draft() -> impl Strategy<Value = Draft> {
    prop_oneof![
        8 => (delta_chunk(), 0u8..2, 0u8..2, prop::bool::weighted(0.1)).prop_map(|(chunk, turn, step, float_turn)| {
            Draft::Chunk { chunk, turn, step, float_turn }
        }),
        1 => (other_chunk(), 0u8..2, 0u8..2).prop_map(|(chunk, turn, step)| Draft::Chunk { chunk, turn, step, float_turn: false }),
        1 => (prop::sample::select(vec!["step/end", "assistant/chunk", "plugin/x"]), any::<bool>(), any::<bool>())
            .prop_map(|(kind, ignorable, surface)| Draft::Other { kind, ignorable, surface }),
    ]
}

fn time() -> impl Strategy<Value = i64> {
    let safe = MAX_SAFE_INTEGER as i64;
    prop_oneof![8 => 995i64..9000, 1 => -safe..=safe]
}

/// A member's own payload: the `text` or `argumentsDelta` of a repeated delta.
fn with_payload(mut chunk: Value, payload: &str) -> Value {
    for key in ["text", "argumentsDelta"] {
        if chunk.get(key).is_some_and(Value::is_string) {
            chunk[key] = json!(payload);
        }
    }
    chunk
}

/// Batches of segments: one drafted event repeated with its own payloads, times and seq
/// steps, so runs of every length occur (and break on seq gaps and unsafe time gaps).
fn batch() -> impl Strategy<Value = Vec<SessionEvent>> {
    let member = (
        time(),
        prop_oneof![8 => Just(1u64), 1 => Just(0u64), 1 => Just(2u64)],
        ".{0,4}",
    );
    let segment = (draft(), prop::collection::vec(member, 1..7));
    let base = prop_oneof![Just(0u64), Just(MAX_SAFE_INTEGER - 300)];
    (base, prop::collection::vec(segment, 0..12)).prop_map(|(base, segments)| {
        let mut seq = base;
        let mut events = Vec::new();
        for (draft, members) in segments {
            for (time, seq_step, payload) in members {
                seq += seq_step;
                events.push(match &draft {
                    Draft::Chunk {
                        chunk,
                        turn,
                        step,
                        float_turn,
                    } => {
                        let turn = if *float_turn {
                            json!(f64::from(*turn))
                        } else {
                            json!(turn)
                        };
                        let chunk = with_payload(chunk.clone(), &payload);
                        let data = json!({"turn": turn, "step": step, "chunk": chunk});
                        SessionEvent::new("assistant/chunk", seq, time, data)
                    }
                    Draft::Other {
                        kind,
                        ignorable,
                        surface,
                    } => {
                        let mut event =
                            SessionEvent::new(kind, seq, time, json!({"turn": 1, "step": 1}));
                        event.ignorable = *ignorable;
                        if *surface {
                            event.surface_op = Some(SurfaceOp::Append);
                            event.source_event_seqs = Some(vec![0]);
                        }
                        event
                    }
                });
            }
        }
        events
    })
}

#[test]
fn the_batch_strategy_packs_rows_of_every_kind() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut kinds = std::collections::HashSet::new();
    let mut rows = 0;
    for _ in 0..200 {
        let events = batch().new_tree(&mut runner).unwrap().current();
        for record in pack_chunk_runs(&events) {
            if let StorageRecord::Packed(row) = record {
                kinds.insert(row.kind());
                rows += 1;
            }
        }
    }
    assert_eq!(kinds.len(), 3);
    assert!(rows > 100, "{rows} rows");
}

#[test]
fn a_slice_is_the_row_of_its_members_and_data_rebuilds_it() {
    let events: Vec<SessionEvent> = (0..6)
        .map(|k| {
            tool_delta(
                10 + k,
                100 + 7 * i64::try_from(k).unwrap(),
                "call_1",
                Some("bash"),
                &format!("a{k}"),
            )
        })
        .collect();
    let records = pack_chunk_runs(&events);
    let [StorageRecord::Packed(row)] = records.as_slice() else {
        panic!("one row: {records:?}");
    };
    let middle = row.slice(2, 3).unwrap();
    assert_eq!(
        to_js_string(&middle),
        to_js_string(&pack_chunk_runs(&events[2..5])[0])
    );
    assert_eq!(
        middle.data_json(),
        r#"{"turn":1,"step":1,"index":0,"dt":[7,7],"id":"call_1","name":"bash","args":["a2","a3","a4"]}"#
    );
    assert!(row.slice(4, 3).is_none() && row.slice(0, 0).is_none());

    let data = serde_json::from_str(&middle.data_json()).unwrap();
    let rebuilt = PackedRow::from_data(ChunkKind::ToolCall, 12, 114, data).unwrap();
    let mut out = Vec::new();
    rebuilt.into_events(&mut out);
    assert_eq!(texts(&out), texts(&events[2..5]));
    let error = PackedRow::from_data(ChunkKind::Text, 0, 0, json!({"turn": 1})).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("malformed text-chunks storage row")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn pack_then_decode_reproduces_every_batch_byte_for_byte(events in batch()) {
        let packed = pack_chunk_runs(&events);
        let decoded = decode_all(&packed);
        prop_assert_eq!(texts(&decoded), texts(&events));
        prop_assert!(packed.len() <= events.len());
        for record in &packed {
            if let StorageRecord::Packed(row) = record {
                prop_assert!(row.member_count() >= MIN_RUN);
            }
        }
        // Packing what was decoded writes the same lines again.
        prop_assert_eq!(lines(&pack_chunk_runs(&decoded)), lines(&packed));
        // Owned records write the same lines as borrowed ones.
        let owned: Vec<_> = packed.iter().cloned().map(StorageRecord::into_owned).collect();
        prop_assert_eq!(lines(&owned), lines(&packed));
    }

    #[test]
    fn every_long_enough_run_packs(count in 0u64..12, kind in prop::sample::select(vec!["text-delta", "reasoning-delta"])) {
        let events = delta_run(kind, count, 0, 0);
        let packed = pack_chunk_runs(&events);
        let expected = if count as usize >= MIN_RUN { 1 } else { count as usize };
        prop_assert_eq!(packed.len(), expected);
        prop_assert_eq!(decode_all(&packed), events);
    }
}
