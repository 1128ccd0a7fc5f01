//! A readable transcript of a session: what the user said, what the model thought, said and
//! called, what the tools answered, and how each turn ended.

use dsh_persistence::SessionInspection;
use dsh_session::vocab::{ContentBlock, CoreEvent, Message, MessageSource, TurnEndReason};

/// `2026-11-29T18:35:02.123Z` for epoch milliseconds.
pub fn iso_time(epoch_ms: u64) -> String {
    let days = i64::try_from(epoch_ms / 86_400_000).unwrap_or(0);
    let ms_of_day = epoch_ms % 86_400_000;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Reasoning { text } => format!("(reasoning) {text}"),
            ContentBlock::Image { .. } => "[image]".to_owned(),
            ContentBlock::ToolCall {
                name, arguments, ..
            } => {
                format!("[call {name} {arguments}]")
            }
            ContentBlock::ToolResult { content, .. } => blocks_text(content),
            ContentBlock::Other(value) => {
                let kind = value
                    .get("type")
                    .and_then(|t| t.as_str())
                    .unwrap_or("block");
                format!("[{kind}]")
            }
        })
        .collect();
    parts.join("\n")
}

fn user_line(message: &Message) -> String {
    let who = match message.source.kind() {
        "user" => "user".to_owned(),
        other => format!("context ({other})"),
    };
    format!("{who}:\n{}\n", indent(&blocks_text(&message.content)))
}

fn assistant_lines(message: &Message) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Reasoning { text } => {
                out.push_str(&format!("assistant (reasoning):\n{}\n", indent(text)));
            }
            ContentBlock::Text { text } => {
                out.push_str(&format!("assistant:\n{}\n", indent(text)));
            }
            ContentBlock::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.push_str(&format!(
                    "tool call {name} [{id}]:\n{}\n",
                    indent(arguments)
                ));
            }
            other => out.push_str(&format!(
                "assistant:\n{}\n",
                indent(&blocks_text(std::slice::from_ref(other)))
            )),
        }
    }
    out
}

fn reason_text(reason: &TurnEndReason) -> String {
    match reason {
        TurnEndReason::Completed => "completed".into(),
        TurnEndReason::Aborted { reason } => format!("aborted ({reason:?})").to_lowercase(),
        TurnEndReason::Blocked => "blocked".into(),
        TurnEndReason::Error { error } => format!("error: {} ({})", error.message, error.code),
        TurnEndReason::MaxTokens => "max tokens".into(),
        TurnEndReason::Interrupted => "interrupted (the process stopped mid-turn)".into(),
    }
}

/// The transcript of `inspection`.
pub fn render(inspection: &SessionInspection) -> String {
    let header = &inspection.header;
    let mut out = format!(
        "session {}\ncreated {}\ncwd {}\n",
        header.id,
        iso_time(header.created_at),
        header.cwd.as_deref().unwrap_or("-")
    );
    if let Some(parent) = &header.parent_session {
        out.push_str(&format!("forked from {parent}\n"));
    }
    for event in &inspection.events {
        if event
            .surface_op
            .is_some_and(|op| op != dsh_session::SurfaceOp::Append)
        {
            out.push_str(&format!(
                "[seq {}: {} replaces earlier messages]\n",
                event.seq, event.kind
            ));
        }
        let Some(Ok(core)) = CoreEvent::read(event) else {
            continue;
        };
        match core {
            CoreEvent::TurnStart { turn } => out.push_str(&format!("\n── turn {turn} ──\n")),
            CoreEvent::TurnEnd { turn, reason } => {
                out.push_str(&format!(
                    "── turn {turn} ended: {} ──\n",
                    reason_text(&reason)
                ));
            }
            CoreEvent::UserMessage(message) => out.push_str(&user_line(&message)),
            CoreEvent::AssistantMessage(data) => out.push_str(&assistant_lines(&data.message)),
            CoreEvent::ToolResult(data) => {
                let call = match &data.message.source {
                    MessageSource::Tool { call_id } => call_id.as_str(),
                    _ => "?",
                };
                let failed = data
                    .error
                    .as_ref()
                    .map(|error| format!(" ({})", error.code))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "tool result [{call}]{failed}:\n{}\n",
                    indent(&blocks_text(&data.message.content))
                ));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_795_976_398_536), "2026-11-29T18:19:58.536Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
