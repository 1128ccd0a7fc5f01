//! Model-facing content blocks of a tool result.

use serde::{Deserialize, Serialize};

/// One block of a tool result's model-facing content, as dsh writes it
/// (`{"type":"text","text":"..."}`).
///
/// Only text exists so far; more block types (images) may follow, so matches outside this
/// crate need a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Visible text.
    Text {
        /// The text.
        text: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The block's text, when it is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
        }
    }
}

impl From<ContentBlock> for dsh_llm::ContentBlock {
    fn from(block: ContentBlock) -> Self {
        match block {
            ContentBlock::Text { text } => Self::text(text),
        }
    }
}

/// The failure message dsh derives from post-execute `block` feedback: the text blocks joined
/// by newlines (other blocks as `[<type> content]`), or a fixed sentence when that is empty.
pub(crate) fn failure_message_from_content(content: &[ContentBlock]) -> String {
    let text = content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.as_str(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        "tool result blocked by post-execute policy".to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn text_serializes_as_dsh_writes_it() {
        let block = ContentBlock::text("hi");
        assert_eq!(
            serde_json::to_string(&block).unwrap(),
            r#"{"type":"text","text":"hi"}"#
        );
        let back: ContentBlock = serde_json::from_str(r#"{"type":"text","text":"hi"}"#).unwrap();
        assert_eq!(back, block);
    }

    #[test]
    fn block_feedback_message() {
        assert_eq!(
            failure_message_from_content(&[ContentBlock::text("a"), ContentBlock::text("b")]),
            "a\nb"
        );
        assert_eq!(
            failure_message_from_content(&[]),
            "tool result blocked by post-execute policy"
        );
    }
}
