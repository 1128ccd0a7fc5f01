//! The vocabulary against logs dsh 0.1.1 wrote: every stored chunk and message reads into
//! the typed view and prints back byte for byte.

use std::path::{Path, PathBuf};

use dsh_persistence::record::{LineDecode, decode_line_into};
use dsh_protocol::json::to_js_string;
use dsh_protocol::{FinishReason, Message, MessageSource, StreamChunk};
use dsh_session::SessionEvent;
use pretty_assertions::assert_eq;
use serde_json::Value;

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dsh-0.1.1")
        .join(relative)
}

/// The events of a stored log (packed chunk rows expanded), header skipped.
fn events(relative: &str) -> Vec<SessionEvent> {
    let text = std::fs::read_to_string(fixture(relative)).unwrap();
    let mut events = Vec::new();
    for line in text.lines().skip(1) {
        let decoded = decode_line_into(line.as_bytes(), &mut events);
        assert!(matches!(decoded, LineDecode::Events(_)), "{line}");
    }
    events
}

const LOGS: [&str; 2] = [
    "01-zstd-default-one-bash/session.decoded.jsonl",
    "02-raw-jsonl-two-bash/session.jsonl",
];

#[test]
fn stored_chunks_round_trip_byte_for_byte() {
    let mut kinds = Vec::new();
    let mut count = 0;
    for log in LOGS {
        for event in events(log) {
            if event.kind != "assistant/chunk" {
                continue;
            }
            let stored = event.data.get("chunk").unwrap().clone();
            let chunk: StreamChunk = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(
                to_js_string(&chunk),
                to_js_string(&stored),
                "{log} seq {}",
                event.seq
            );
            kinds.push(chunk.chunk_type());
            count += 1;
        }
    }
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "block-end",
            "block-start",
            "finish",
            "reasoning-delta",
            "text-delta",
            "tool-call-delta",
            "usage"
        ]
    );
    assert!(count > 40, "{count} chunks");
}

#[test]
fn plain_chunk_lines_are_the_printed_chunks() {
    // For chunk lines stored as plain events, compare against the line's own bytes.
    let text = std::fs::read_to_string(fixture(LOGS[0])).unwrap();
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|line| line.starts_with(r#"{"type":"assistant/chunk""#))
    {
        let value: Value = serde_json::from_str(line).unwrap();
        let chunk: StreamChunk = serde_json::from_value(value["data"]["chunk"].clone()).unwrap();
        let printed = to_js_string(&chunk);
        assert!(line.contains(&format!(r#""chunk":{printed}}}"#)), "{line}");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[test]
fn finish_reasons_in_the_logs_are_typed() {
    let reasons: Vec<FinishReason> = events(LOGS[1])
        .iter()
        .filter(|event| event.kind == "assistant/chunk")
        .filter_map(|event| {
            let chunk: StreamChunk = serde_json::from_value(event.data["chunk"].clone()).unwrap();
            chunk.finish_reason().cloned()
        })
        .collect();
    assert!(reasons.contains(&FinishReason::ToolCalls));
    assert!(reasons.contains(&FinishReason::Stop));
    assert!(
        !reasons
            .iter()
            .any(|reason| matches!(reason, FinishReason::Other(_)))
    );
}

#[test]
fn stored_messages_round_trip_byte_for_byte() {
    let mut sources = Vec::new();
    for log in LOGS {
        for event in events(log) {
            let stored = match event.kind.as_ref() {
                "user/message" => event.data.value().clone(),
                "assistant/message" | "tool/result" => event.data["message"].clone(),
                _ => continue,
            };
            let message: Message = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(
                to_js_string(&message),
                to_js_string(&stored),
                "{log} seq {}",
                event.seq
            );
            sources.push(message.source.kind().to_owned());
        }
    }
    sources.sort_unstable();
    sources.dedup();
    assert_eq!(sources, ["model", "plugin", "tool", "user"]);
}

#[test]
fn the_runtime_context_snapshot_keeps_its_sections() {
    let snapshot = events(LOGS[0])
        .into_iter()
        .filter(|event| event.kind == "user/message")
        .map(|event| serde_json::from_value::<Message>(event.data.value().clone()).unwrap())
        .find(|message| matches!(message.source, MessageSource::Plugin { .. }))
        .unwrap();
    let MessageSource::Plugin {
        plugin,
        form,
        fields,
    } = snapshot.source
    else {
        unreachable!()
    };
    assert_eq!(plugin, "@deepseek-ai/dsh-system-prompt");
    assert_eq!(form.as_deref(), Some("snapshot"));
    assert_eq!(fields["sections"].as_array().unwrap().len(), 2);
}

#[test]
fn the_session_views_read_the_same_messages() {
    for event in events(LOGS[0]) {
        let Some(Ok(dsh_session::vocab::CoreEvent::AssistantMessage(data))) =
            dsh_session::vocab::CoreEvent::read(&event)
        else {
            continue;
        };
        let message: Message = data.message;
        assert_eq!(to_js_string(&message), to_js_string(&event.data["message"]));
    }
}
