//! Content helpers: image detection and the text-only projection, and JavaScript's notion of
//! whitespace.

use serde_json::Value;

use crate::types::{ContentBlock, Message};

/// Whether `content` holds an image block, nested tool results included.
pub fn content_has_image(content: &[ContentBlock]) -> bool {
    content.iter().any(|block| match block {
        ContentBlock::Image { .. } => true,
        ContentBlock::ToolResult { content, .. } => content_has_image(content),
        _ => false,
    })
}

/// The text a text-only model reads in place of an image:
/// `[image omitted because this model accepts text only; attachment sha256:<8 hex>]`.
pub fn text_only_image_text(attachment: &Value) -> String {
    let id = match attachment.get("attachmentId") {
        Some(Value::String(id)) => id.clone(),
        Some(other) => other.to_string(),
        None => "undefined".to_owned(),
    };
    let digest: String = id.chars().skip("sha256:".len()).take(8).collect();
    format!("[image omitted because this model accepts text only; attachment sha256:{digest}]")
}

/// `messages` with every image block (nested ones too) replaced by
/// [`text_only_image_text`], for a model that accepts text only. Messages without images are
/// left as they are.
pub fn project_images_for_text_model(messages: &mut [Message]) {
    for message in messages {
        replace_images(&mut message.content);
    }
}

fn replace_images(blocks: &mut [ContentBlock]) {
    for block in blocks {
        match block {
            ContentBlock::Image { attachment } => {
                *block = ContentBlock::text(text_only_image_text(attachment));
            }
            ContentBlock::ToolResult { content, .. } => replace_images(content),
            _ => {}
        }
    }
}

/// Whether `text` is empty after JavaScript's `String.prototype.trim` (whose whitespace is
/// Unicode `Zs`, tab, vertical tab, form feed, no-break space, BOM and the line
/// terminators; unlike Rust's, it includes U+FEFF and excludes U+0085).
pub fn is_js_blank(text: &str) -> bool {
    text.chars().all(is_js_whitespace)
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'
            | '\u{A}'
            | '\u{B}'
            | '\u{C}'
            | '\u{D}'
            | '\u{20}'
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::{MessageSource, Role};

    #[test]
    fn blank_follows_javascript() {
        assert!(is_js_blank(" \n\t\u{FEFF}\u{3000}"));
        assert!(!is_js_blank("\u{85}"));
        assert!(!is_js_blank(" a "));
        assert!(is_js_blank(""));
    }

    #[test]
    fn images_become_text_for_text_only_models() {
        let image = ContentBlock::Image {
            attachment: json!({"attachmentId": "sha256:0123456789abcdef"}),
        };
        let mut messages = vec![Message {
            id: "m".into(),
            role: Role::User,
            content: vec![
                image.clone(),
                ContentBlock::ToolResult {
                    tool_call_id: "c".into(),
                    content: vec![image],
                    is_error: None,
                },
            ],
            source: MessageSource::User,
        }];
        assert!(messages.iter().any(|m| content_has_image(&m.content)));
        project_images_for_text_model(&mut messages);
        assert!(!messages.iter().any(|m| content_has_image(&m.content)));
        assert_eq!(
            messages[0].content[0],
            ContentBlock::text(
                "[image omitted because this model accepts text only; attachment sha256:01234567]"
            )
        );
    }
}
