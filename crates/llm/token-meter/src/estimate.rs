//! The fixed-density price of content, messages and request headers (dsh's `estimate.ts`).
//!
//! Lengths are JavaScript's `.length`: UTF-16 code units. A block's price is its text at
//! [`CHARS_PER_TOKEN`] characters a token plus [`BLOCK_OVERHEAD`]; a message adds
//! [`ROLE_OVERHEAD`]. Blocks of any other type (images, plugins' blocks) are priced by their
//! `JSON.stringify` text.

use dsh_llm::{ContentBlock, Message};
use dsh_protocol::json::to_js_string;
use serde_json::Value;

/// Characters per token of the fixed heuristic.
pub const CHARS_PER_TOKEN: u64 = 4;

/// Structural tokens added to every block (JSON framing, type tags).
pub const BLOCK_OVERHEAD: u64 = 4;

/// Role framing added to every priced message.
pub const ROLE_OVERHEAD: u64 = 4;

/// JavaScript's `text.length`: UTF-16 code units.
pub fn js_length(text: &str) -> u64 {
    text.encode_utf16().count() as u64
}

/// `ceil(len(text) / 4)`.
pub fn text_tokens(text: &str) -> u64 {
    js_length(text).div_ceil(CHARS_PER_TOKEN)
}

/// `BLOCK_OVERHEAD + ceil(len(JSON.stringify(value)) / 4)`: the price of a block the
/// heuristic has no rule for.
fn structural_tokens<T: serde::Serialize + ?Sized>(value: &T) -> u64 {
    BLOCK_OVERHEAD + text_tokens(&to_js_string(value))
}

/// The price of typed content blocks (dsh's `estimateContent`).
pub fn estimate_content(blocks: &[ContentBlock]) -> u64 {
    blocks.iter().map(estimate_block).sum()
}

fn estimate_block(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text } | ContentBlock::Reasoning { text } => {
            text_tokens(text) + BLOCK_OVERHEAD
        }
        ContentBlock::ToolCall {
            name, arguments, ..
        } => text_tokens(name) + text_tokens(arguments) + BLOCK_OVERHEAD,
        ContentBlock::ToolResult { content, .. } => estimate_content(content) + BLOCK_OVERHEAD,
        // A known type with extra fields is kept as `Other`; dsh prices it by its type tag.
        ContentBlock::Other(map) => estimate_block_json(&Value::Object(map.clone())),
        ContentBlock::Image { .. } => structural_tokens(block),
    }
}

/// The price of one typed message: its content plus [`ROLE_OVERHEAD`] (dsh's
/// `estimateMessage`).
pub fn estimate_message(message: &Message) -> u64 {
    estimate_content(&message.content) + ROLE_OVERHEAD
}

/// The price of content blocks as logged (a JSON array; anything else has no blocks).
pub fn estimate_content_json(content: &Value) -> u64 {
    content
        .as_array()
        .map_or(0, |blocks| blocks.iter().map(estimate_block_json).sum())
}

/// The price of one block as logged, by its `type` tag. A tagged block whose fields do not
/// have the tag's shape is priced like an unknown block.
pub fn estimate_block_json(block: &Value) -> u64 {
    let text = |key: &str| block.get(key).and_then(Value::as_str);
    let priced = match block.get("type").and_then(Value::as_str) {
        Some("text" | "reasoning") => text("text").map(|t| text_tokens(t) + BLOCK_OVERHEAD),
        Some("tool-call") => match (text("name"), text("arguments")) {
            (Some(name), Some(arguments)) => {
                Some(text_tokens(name) + text_tokens(arguments) + BLOCK_OVERHEAD)
            }
            _ => None,
        },
        Some("tool-result") => block
            .get("content")
            .filter(|content| content.is_array())
            .map(|content| estimate_content_json(content) + BLOCK_OVERHEAD),
        _ => None,
    };
    priced.unwrap_or_else(|| structural_tokens(block))
}

/// The price of a message as logged (`{content, ...}`): its content plus [`ROLE_OVERHEAD`].
pub fn estimate_message_json(message: &Value) -> u64 {
    estimate_content_json(message.get("content").unwrap_or(&Value::Null)) + ROLE_OVERHEAD
}

/// The price of a request header's system prompt: `ceil(len/4) + 4`; 0 when absent.
pub fn estimate_system(header: Option<&Value>) -> u64 {
    header
        .and_then(|header| header.get("system"))
        .and_then(Value::as_str)
        .map_or(0, |system| text_tokens(system) + ROLE_OVERHEAD)
}

/// The price of a request header's tool schemas: `ceil(len(JSON.stringify(tools))/4) + 4`;
/// 0 when absent or empty.
pub fn estimate_tools(header: Option<&Value>) -> u64 {
    header
        .and_then(|header| header.get("tools"))
        .filter(|tools| tools.as_array().is_some_and(|tools| !tools.is_empty()))
        .map_or(0, structural_tokens)
}

/// The price of everything in a request besides its messages: system prompt plus tools
/// (dsh's `estimateHeader`); `header` is a `request/header`'s `header`.
pub fn estimate_header(header: Option<&Value>) -> u64 {
    estimate_system(header) + estimate_tools(header)
}

#[cfg(test)]
mod tests {
    use dsh_llm::MessageSource;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn user(content: Value) -> Value {
        json!({"content": content, "source": {"kind": "user"}, "role": "user", "id": "u"})
    }

    #[test]
    fn a_user_message_with_abcd_costs_nine() {
        assert_eq!(
            estimate_message_json(&user(json!([{"type": "text", "text": "abcd"}]))),
            9
        );
        let typed = Message::user(vec![ContentBlock::text("abcd")], MessageSource::User);
        assert_eq!(estimate_message(&typed), 9);
    }

    #[test]
    fn text_and_reasoning_round_up_per_four_code_units() {
        for (text, tokens) in [("", 4), ("a", 5), ("abcde", 6), ("abcdefgh", 6)] {
            let block = json!({"type": "reasoning", "text": text});
            assert_eq!(estimate_block_json(&block), tokens, "{text:?}");
        }
    }

    #[test]
    fn lengths_are_utf16_code_units() {
        // One astral character is two UTF-16 units; four BMP characters are four.
        assert_eq!(js_length("😀"), 2);
        assert_eq!(js_length("éééé"), 4);
        assert_eq!(text_tokens("😀😀😀"), 2);
        assert_eq!(
            estimate_block_json(&json!({"type": "text", "text": "😀😀😀"})),
            6
        );
    }

    #[test]
    fn a_tool_call_prices_name_and_arguments_apart() {
        // ceil(4/4) + ceil(13/4) + 4 = 1 + 4 + 4.
        let block = json!({"type": "tool-call", "id": "c", "name": "bash", "arguments": "{\"cmd\":\"ls\"}!"});
        assert_eq!(estimate_block_json(&block), 9);
        let typed = ContentBlock::tool_call("c", "bash", "{\"cmd\":\"ls\"}!");
        assert_eq!(estimate_content(&[typed]), 9);
    }

    #[test]
    fn a_tool_result_prices_its_content_plus_overhead() {
        let block = json!({"type": "tool-result", "toolCallId": "c",
            "content": [{"type": "text", "text": "12345678"}, {"type": "text", "text": "x"}]});
        // (2 + 4) + (1 + 4) + 4.
        assert_eq!(estimate_block_json(&block), 15);
        let message = json!({"source": {"kind": "tool", "callId": "c"}, "content": [block], "role": "user", "id": "r"});
        assert_eq!(estimate_message_json(&message), 19);
    }

    #[test]
    fn other_blocks_are_priced_by_their_json_text() {
        let block = json!({"type": "image", "attachment": {"attachmentId": "a1"}});
        let text = to_js_string(&block);
        assert_eq!(
            text,
            r#"{"type":"image","attachment":{"attachmentId":"a1"}}"#
        );
        let expected = 4 + (text.len() as u64).div_ceil(4);
        assert_eq!(estimate_block_json(&block), expected);
        let typed = ContentBlock::Image {
            attachment: json!({"attachmentId": "a1"}),
        };
        assert_eq!(estimate_content(&[typed]), expected);
        let plugin = json!({"type": "goal", "goal": "ship"});
        assert_eq!(
            estimate_block_json(&plugin),
            4 + (to_js_string(&plugin).len() as u64).div_ceil(4)
        );
    }

    #[test]
    fn a_known_block_with_extra_fields_keeps_its_rule() {
        let block = json!({"type": "text", "text": "abcd", "cache": true});
        assert_eq!(estimate_block_json(&block), 5);
        let typed: ContentBlock = serde_json::from_value(block).unwrap();
        assert_eq!(estimate_content(&[typed]), 5);
    }

    #[test]
    fn the_header_prices_system_and_tools() {
        assert_eq!(estimate_header(None), 0);
        let bare = json!({"config": {"provider": "p", "model": "m"}});
        assert_eq!(estimate_header(Some(&bare)), 0);
        let empty = json!({"config": {}, "tools": []});
        assert_eq!(estimate_tools(Some(&empty)), 0);
        let tools =
            json!([{"name": "bash", "description": "Run", "parameters": {"type": "object"}}]);
        let header = json!({"config": {}, "system": "abcdefghi", "tools": tools});
        assert_eq!(estimate_system(Some(&header)), 3 + 4);
        let tools_text = to_js_string(&tools);
        assert_eq!(
            estimate_tools(Some(&header)),
            4 + (tools_text.len() as u64).div_ceil(4)
        );
        assert_eq!(
            estimate_header(Some(&header)),
            7 + 4 + (tools_text.len() as u64).div_ceil(4)
        );
    }
}
